package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
)

// Journal is one record being written by the run that holds the fleet
// lock for it — a rollout, a router canary, a rotation: every change is
// made under its lock and the whole record saved, in the clock's time.
// The first save that fails is kept: a record that no longer says where
// the change stands must stop it, so every later Update returns it too.
type Journal struct {
	store Store
	clock Clock

	mu  sync.Mutex
	rec *Record
	err error
	// afterSave runs after every save, under the lock (a rollout reads
	// operators' requests there: steer.go).
	afterSave func(ctx context.Context)
}

// NewJournal writes rec through store (clock nil: the wall clock).
func NewJournal(store Store, clock Clock, rec *Record) *Journal {
	if clock == nil {
		clock = RealClock{}
	}
	return &Journal{store: store, clock: clock, rec: rec}
}

// Update applies fn to the record and saves it. The save survives a
// cancelled ctx: a Ctrl-C must still leave a record that says where the
// change stopped. Its error is fatal to the change (and kept: Err).
func (j *Journal) Update(ctx context.Context, fn func(*Record)) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if fn != nil {
		fn(j.rec)
	}
	return j.saveLocked(ctx)
}

// View calls fn with the record, read-only, under the journal's lock.
func (j *Journal) View(fn func(*Record)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fn(j.rec)
}

// Snapshot is a deep copy of the record as it stands.
func (j *Journal) Snapshot() *Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	return cloneRecord(j.rec)
}

// Err is the first failed save, if any.
func (j *Journal) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Clock is the journal's clock, the change's one clock.
func (j *Journal) Clock() Clock { return j.clock }

func (j *Journal) saveLocked(ctx context.Context) error {
	j.rec.Updated = j.clock.Now().UTC()
	if err := j.store.Save(context.WithoutCancel(ctx), j.rec); err != nil {
		err = fmt.Errorf("saving the record of %s: %w", j.rec.ID, err)
		if j.err == nil {
			j.err = err
		}
		return err
	}
	if j.afterSave != nil {
		j.afterSave(ctx)
	}
	return nil
}

// NewID is a fresh record id of a kind that, unlike a rollout, has no
// plan to digest: c- (a router canary), s- (a rotation) or a- (a cell
// add), 12 hex digits.
func NewID(k Kind) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "x-"
	switch k {
	case KindCanary:
		prefix = "c-"
	case KindRotation:
		prefix = "s-"
	case KindCellAdd:
		prefix = "a-"
	case KindRollout, "":
		prefix = "r-"
	}
	return prefix + hex.EncodeToString(b[:])
}

// Take takes the fleet lock for me through st. A lock held by an earlier
// run of the same change (same reports it: a rollout's same id, the one
// rotation or canary of a fleet) is taken over when that run is known to
// have stopped: its record says it is not running, or it ran on this host
// and its process is gone (alive says so; nil: every holder is presumed
// alive — never steal a lock on a guess). Any other holder is refused
// with a *LockedError told by its record (HeldBy). note says what was
// taken over ("" when the lock was free).
func Take(ctx context.Context, st Store, me Holder, same func(Holder) bool, alive func(Holder) bool) (note string, err error) {
	err = st.Lock(ctx, me)
	var le *LockedError
	if !errors.As(err, &le) {
		if err != nil {
			return "", fmt.Errorf("taking the fleet lock: %w", err)
		}
		return "", nil
	}
	held := le.Holder
	if held.Unreadable != "" || !same(held) {
		return "", HeldBy(ctx, st, held)
	}
	stale := ""
	if rec, lerr := st.Load(ctx, held.ID); lerr == nil && rec.Holder.Same(held) && rec.State != Running && rec.State != Waiting {
		// The holder itself wrote that it stopped (a waiting rollout's
		// run is alive, polling for its approval).
		stale = fmt.Sprintf("the last run of %s stopped (%s)", held.ID, rec.State)
	} else if held.Host == me.Host && alive != nil && !alive(held) {
		stale = fmt.Sprintf("the last run of %s (pid %d) is gone", held.ID, held.PID)
	}
	if stale == "" {
		return "", HeldBy(ctx, st, held)
	}
	if err := st.BreakLock(ctx, held); err != nil {
		return "", fmt.Errorf("taking over the fleet lock from %s: %w", held, err)
	}
	if err := st.Lock(ctx, me); err != nil {
		if errors.As(err, &le) {
			return "", HeldBy(ctx, st, le.Holder)
		}
		return "", fmt.Errorf("taking the fleet lock: %w", err)
	}
	return stale + ": taking over its lock", nil
}
