package rollout

import "gocloud.dev/blob"

// Bucket is the backend bucket, for documents that share this store's
// backend and lock (the rollout executor's record, through its adapter in
// waves/executor/backend).
func (s *Store) Bucket() *blob.Bucket { return s.bucket }
