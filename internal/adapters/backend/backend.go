// Package backend is the gated-change machine's Store over
// internal/rollout: the lock is the fleet lock, rollout.Store's
// (create-if-absent in the Pulumi backend, file:// or s3://, holder with a
// nonce, tombstoned abandon), and the records — the one record type,
// executor.Record, of rollouts, router canaries and secret rotations alike
// — are JSON objects under rollout.RecordPrefix in the same bucket, so a
// CI job on another machine reads and continues them.
package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/waves/executor"
)

// Store adapts a rollout.Store to executor.Store.
type Store struct {
	s *rollout.Store

	mu sync.Mutex
	// held are the locks this process acquired, by holder nonce: only the
	// *rollout.Lock that Acquire returned can release one.
	held map[string]*rollout.Lock
}

// New wraps an open rollout store.
func New(s *rollout.Store) *Store { return &Store{s: s, held: map[string]*rollout.Lock{}} }

// idPattern is the shape of a record id cellctl makes: executor.Plan.ID
// (r-, a rollout) or executor.NewID (c-, a router canary; s-, a secret
// rotation); ids become object keys, so nothing else is accepted.
var idPattern = regexp.MustCompile(`^[rcsa]-[0-9a-f]{12}$`)

func key(id string) (string, error) {
	if !idPattern.MatchString(id) {
		return "", fmt.Errorf("record id %q is not one cellctl made (r-, c-, s- or a- and 12 hex digits)", id)
	}
	return rollout.RecordPrefix + id + ".json", nil
}

// Load reads the record of rollout id.
func (b *Store) Load(ctx context.Context, id string) (*executor.Record, error) {
	k, err := key(id)
	if err != nil {
		// Only rollouts have records: another holder's id (a drain's
		// op-…, "unreadable") has none.
		return nil, fmt.Errorf("%w: %w", executor.ErrNoRecord, err)
	}
	data, err := b.s.ReadBucket().ReadAll(ctx, k)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("rollout %s: %w", id, executor.ErrNoRecord)
	}
	if err != nil {
		return nil, fmt.Errorf("reading rollout %s: %w", id, err)
	}
	var r executor.Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("rollout %s: the record is not valid JSON: %w", id, err)
	}
	return &r, nil
}

// Save writes the record whole (fileblob renames a temporary file, an S3
// PUT replaces the object), so a reader never sees half a record.
func (b *Store) Save(ctx context.Context, r *executor.Record) error {
	k, err := key(r.ID)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := b.s.Bucket().WriteAll(ctx, k, append(data, '\n'), &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("writing rollout %s: %w", r.ID, err)
	}
	return nil
}

// Lock takes the fleet lock (the one lock of every verb that changes the
// fleet) for h.
func (b *Store) Lock(ctx context.Context, h executor.Holder) error {
	l, err := b.s.Acquire(ctx, h)
	var held *rollout.HeldError
	if errors.As(err, &held) {
		return &executor.LockedError{Holder: held.Holder}
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.held[h.Nonce] = l
	b.mu.Unlock()
	return nil
}

// Unlock releases a lock this process took for h; any other is left alone.
func (b *Store) Unlock(ctx context.Context, h executor.Holder) error {
	b.mu.Lock()
	l := b.held[h.Nonce]
	delete(b.held, h.Nonce)
	b.mu.Unlock()
	if l == nil {
		return nil
	}
	return l.Release(ctx)
}

// BreakLock removes the lock if it is still held by exactly held
// (rollout.Store.Break: same nonce, through the tombstone that makes
// concurrent breaks of one holder safe).
func (b *Store) BreakLock(ctx context.Context, held executor.Holder) error {
	return b.s.Break(ctx, held)
}
