package rollout

import "gocloud.dev/blob"

// Bucket is the backend bucket, for documents that share this store's
// backend and lock (the rollout executor's record, through its adapter in
// internal/adapters/backend).
//
// A pending file backend directory is created first: the caller may
// write, and a write to the empty stand-in would be lost.
func (s *Store) Bucket() *blob.Bucket {
	if err := s.materialize(); err != nil {
		// A closed bucket fails every call: nothing is written to the
		// stand-in and lost.
		_ = s.b().Close()
	}
	return s.b()
}

// ReadBucket is the backend bucket for reads only: a pending file backend
// stays pending (an empty stand-in answers), so read-only commands such as
// `rollout list` and `deploy --dry-run` never create the backend directory.
func (s *Store) ReadBucket() *blob.Bucket { return s.b() }
