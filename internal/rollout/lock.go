package rollout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Holder says who holds (or held) the rollout lock.
type Holder struct {
	RolloutID string    `json:"rollout_id"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Started   time.Time `json:"started"`
	// Nonce tells two acquisitions by the same rollout apart (a rerun
	// after kill -9 has the same id, host and maybe pid).
	Nonce string `json:"nonce"`
}

// Me is a holder for this process.
func Me(rolloutID string, now time.Time) Holder {
	host, _ := os.Hostname()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return Holder{RolloutID: rolloutID, Host: host, PID: os.Getpid(), Started: now.UTC(), Nonce: hex.EncodeToString(b[:])}
}

func (h Holder) String() string {
	return fmt.Sprintf("rollout %s (pid %d on %s, since %s)", h.RolloutID, h.PID, h.Host, h.Started.UTC().Format(time.RFC3339))
}

// GoneFromThisHost reports whether the holder ran on this machine and its
// process no longer exists — the one case where a lock is provably stale.
// A holder on another host is never presumed dead.
func (h Holder) GoneFromThisHost() bool {
	host, err := os.Hostname()
	if err != nil || host != h.Host || h.PID <= 0 {
		return false
	}
	p, err := os.FindProcess(h.PID)
	if err != nil {
		return true
	}
	err = p.Signal(syscall.Signal(0))
	return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH)
}

// HeldError is returned when another rollout holds the fleet. The command
// maps it to exit code 4.
type HeldError struct {
	Holder Holder
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("another rollout holds the fleet: %s; wait for it, or if that process is gone run `cellctl deploy --abandon %s`",
		e.Holder, e.Holder.RolloutID)
}

// Lock is a held rollout lock.
type Lock struct {
	store  *Store
	Holder Holder
}

// Acquire takes the fleet's rollout lock for h. Of any number of operators
// acquiring at once, exactly one wins (the backend's create-if-absent
// decides); the others get a *HeldError naming the winner.
func (s *Store) Acquire(ctx context.Context, h Holder) (*Lock, error) {
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return nil, err
	}
	for attempt := 0; attempt < 5; attempt++ {
		err := s.createExclusive(ctx, LockKey, append(data, '\n'))
		if err == nil {
			return &Lock{store: s, Holder: h}, nil
		}
		if errors.Is(err, errConflict) {
			// Another operator's create is in flight; its outcome decides.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(attempt+1) * 100 * time.Millisecond):
			}
			continue
		}
		if !errors.Is(err, errExists) {
			return nil, fmt.Errorf("taking the rollout lock: %w", err)
		}
		held, err := s.Holder(ctx)
		if err != nil {
			return nil, err
		}
		if held != nil {
			return nil, &HeldError{Holder: *held}
		}
		// Released between our create and our read: try again.
	}
	return nil, fmt.Errorf("taking the rollout lock: it kept changing hands; try again")
}

// Holder returns who holds the lock now, nil when nobody does.
func (s *Store) Holder(ctx context.Context) (*Holder, error) {
	data, found, err := s.readBytes(ctx, LockKey)
	if err != nil {
		return nil, fmt.Errorf("reading the rollout lock: %w", err)
	}
	if !found {
		return nil, nil
	}
	var h Holder
	if err := json.Unmarshal(data, &h); err != nil {
		// A lock nobody can read still locks: refusing is safe, and
		// Abandon with the id "unknown" clears it.
		return &Holder{RolloutID: "unknown"}, nil
	}
	return &h, nil
}

// Release gives the lock up. It removes the lock only while it is still
// this holder's (an operator may have abandoned it meanwhile).
func (l *Lock) Release(ctx context.Context) error {
	cur, err := l.store.Holder(ctx)
	if err != nil {
		return err
	}
	if cur == nil || cur.Nonce != l.Holder.Nonce {
		return nil
	}
	if err := l.store.delete(ctx, LockKey); err != nil {
		return fmt.Errorf("releasing the rollout lock: %w", err)
	}
	return nil
}

// StillHeld reports whether the lock is still this holder's; the executor
// checks it before each write so a holder whose lock was abandoned stops.
func (l *Lock) StillHeld(ctx context.Context) (bool, error) {
	cur, err := l.store.Holder(ctx)
	if err != nil {
		return false, err
	}
	return cur != nil && cur.Nonce == l.Holder.Nonce, nil
}

// Abandon breaks the lock of rollout id, for a holder that is gone (killed,
// its machine lost). It refuses when the lock is held by another rollout,
// and is safe when several operators abandon at once: a tombstone object
// per broken holder is created exclusively, so exactly one of them deletes
// the lock and none can delete a lock taken after it. The rollout's record
// is left as it is — only a lock holder writes records — so rerunning the
// deploy continues it (and notes the broken holder in Record.Abandoned). It
// returns the holder that was removed, nil when the lock was free.
func (s *Store) Abandon(ctx context.Context, id string) (*Holder, error) {
	held, err := s.Holder(ctx)
	if err != nil || held == nil {
		return nil, err
	}
	if held.RolloutID != id {
		return nil, fmt.Errorf("the rollout lock is held by %s, not rollout %s: nothing abandoned", held, id)
	}
	tomb := LockKey + ".abandoned-" + held.Nonce
	stone, _ := json.Marshal(struct {
		Holder    Holder    `json:"holder"`
		Abandoned time.Time `json:"abandoned"`
	}{*held, s.now()})
	switch err := s.createExclusive(ctx, tomb, stone); {
	case errors.Is(err, errExists), errors.Is(err, errConflict):
		return held, nil // another operator is abandoning the same holder
	case err != nil:
		return nil, fmt.Errorf("abandoning rollout %s: %w", id, err)
	}
	// The lock must still be the holder we broke, not a newer one.
	if cur, err := s.Holder(ctx); err != nil {
		return nil, err
	} else if cur == nil || cur.Nonce != held.Nonce {
		return held, nil
	}
	if err := s.delete(ctx, LockKey); err != nil {
		return nil, fmt.Errorf("abandoning rollout %s: %w", id, err)
	}
	return held, nil
}
