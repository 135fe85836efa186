// Package backendtest is the record store and fleet lock of the gated
// changes (internal/adapters/backend) over an in-memory bucket, with the
// failures their tests inject: a backend that stops taking saves, and a
// process killed with SIGKILL (its lock stays behind).
package backendtest

import (
	"context"
	"errors"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/waves/executor"
)

// Store is the real backend store with injected failures.
type Store struct {
	*backend.Store
	RS *rollout.Store
	// FailAfter, when positive, fails every save after that many.
	FailAfter int
	saves     int
	// DieAt, when it returns true for a record about to be saved, kills
	// the process there: that save and every later write fail, and the
	// lock it holds stays behind (kill -9).
	DieAt func(*executor.Record) bool
	Dead  bool
}

// New is an empty store.
func New() *Store {
	rs := rollout.NewStore(memblob.OpenBucket(nil))
	return &Store{Store: backend.New(rs), RS: rs}
}

// Save implements executor.Store.
func (s *Store) Save(ctx context.Context, r *executor.Record) error {
	s.saves++
	if s.Dead || s.DieAt != nil && s.DieAt(r) {
		s.Dead = true
		return errors.New("killed")
	}
	if s.FailAfter > 0 && s.saves > s.FailAfter {
		return errors.New("backend unreachable")
	}
	return s.Store.Save(ctx, r)
}

// Unlock implements executor.Store; a dead process releases nothing.
func (s *Store) Unlock(ctx context.Context, h executor.Holder) error {
	if s.Dead {
		return nil
	}
	return s.Store.Unlock(ctx, h)
}

// Revive is the next process on the same backend: the dead one's lock and
// last saved record are there.
func (s *Store) Revive() { s.Dead, s.DieAt = false, nil }

// Hold makes h hold the fleet lock (another run, before the test's).
func (s *Store) Hold(t testing.TB, h executor.Holder) {
	t.Helper()
	if _, err := s.RS.Acquire(context.Background(), h); err != nil {
		t.Fatal(err)
	}
}

// Held is the fleet lock's holder now (nil: free).
func (s *Store) Held(t testing.TB) *executor.Holder {
	t.Helper()
	h, err := s.RS.Holder(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Records are the stored records of kind k, newest start first.
func (s *Store) Records(t testing.TB, k executor.Kind) []*executor.Record {
	t.Helper()
	recs, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []*executor.Record
	for _, r := range recs {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}
