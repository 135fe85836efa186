package originsecret

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/rollout"
)

// RecordKey is where the rotation record lives in the Pulumi backend,
// beside the rollout records (file:// and s3:// alike), so a CI job on
// another machine resumes it.
const RecordKey = ".cellctl/rotations/origin-verify.json"

// LockID and LockVerb are the fleet lock holder's id and verb of a
// rotation (one rotation at a time: its record is the fleet's).
const (
	LockID   = "secret-rotate"
	LockVerb = "secret rotate"
)

// BackendStore keeps the record and takes the lock through rollout.Store.
type BackendStore struct {
	S *rollout.Store
	// Now is the clock of the lock holder (nil: time.Now).
	Now func() time.Time
}

// Load implements Store.
func (b *BackendStore) Load(ctx context.Context) (*Record, error) {
	data, err := b.S.ReadBucket().ReadAll(ctx, RecordKey)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the rotation record %s: %w", RecordKey, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		// Fail closed: an unreadable record is not "no rotation".
		return nil, fmt.Errorf("the rotation record %s is not valid JSON (%v): restore it from the backend's versioning, or remove it only if no rotation is under way", RecordKey, err)
	}
	return &r, nil
}

// Save implements Store: the whole record replaces the previous one.
func (b *BackendStore) Save(ctx context.Context, r *Record) error {
	data, err := MarshalRecord(r)
	if err != nil {
		return err
	}
	return b.S.Bucket().WriteAll(ctx, RecordKey, append(data, '\n'), &blob.WriterOptions{ContentType: "application/json"})
}

// Lock implements Store: the rotation takes the fleet lock (verb "secret
// rotate", id LockID). A lock left by a rotation whose process is gone from
// this host is taken over (the rotation resumes from its record); any other
// holder — a rollout, a drain, a live rotation — is refused with exit 4,
// naming it.
func (b *BackendStore) Lock(ctx context.Context) (func(), error) {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	for attempt := 0; ; attempt++ {
		l, err := b.S.Acquire(ctx, rollout.Me(LockVerb, LockID, now()))
		if err == nil {
			return func() { _ = l.Release(context.WithoutCancel(ctx)) }, nil
		}
		var held *rollout.HeldError
		if !errors.As(err, &held) {
			return nil, err
		}
		if attempt == 0 && held.Holder.ID == LockID && held.Holder.GoneFromThisHost() {
			if err := b.S.Break(ctx, held.Holder); err != nil {
				return nil, err
			}
			continue
		}
		if held.Holder.ID == LockID {
			return nil, outcome.Locked("", fmt.Errorf("another `cellctl secret rotate` runs: %w", held))
		}
		return nil, outcome.Locked("", fmt.Errorf("refused: a rotation deploys every cell and the router and never interleaves with another change to the fleet: %w", held))
	}
}
