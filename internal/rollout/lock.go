package rollout

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Holder says who holds (or held) the fleet lock: the one holder type of
// every verb that changes the fleet (a rollout, a drain, an up, …).
type Holder struct {
	// ID names the holding run: a rollout's id (r-…) for a deploy, which
	// keeps the lock between its CI jobs; a fresh id (op-…) for any other
	// verb. `cellctl deploy --abandon ID` breaks the lock of ID.
	ID string `json:"id"`
	// Verb is the operation holding the fleet ("deploy", "drain", "up", …).
	Verb    string    `json:"verb"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Nonce tells two acquisitions by the same run apart (a rerun after
	// kill -9 has the same id, host and maybe pid).
	Nonce string `json:"nonce,omitempty"`
	// Unreadable is set (and every other field but Nonce is empty) when
	// the lock object exists but cannot be parsed: it says why. Such a
	// lock still locks — refusing is safe — and its ID is UnreadableID.
	Unreadable string `json:"-"`
}

// UnreadableID is the id a lock that cannot be parsed is shown and broken
// under: `cellctl deploy --abandon unreadable`.
const UnreadableID = "unreadable"

// UnmarshalJSON reads the holder, including the locks older cellctl
// versions left on disk: the rollout lock ({"rollout_id": …}) and the
// executor's holder ({"rolloutId": …}), both written by a deploy, or by
// `secret rotate` under the id "secret-rotate".
func (h *Holder) UnmarshalJSON(data []byte) error {
	type plain Holder
	var v struct {
		plain
		LegacyID  string `json:"rollout_id"`
		LegacyID2 string `json:"rolloutId"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*h = Holder(v.plain)
	if h.ID == "" {
		h.ID = v.LegacyID
		if h.ID == "" {
			h.ID = v.LegacyID2
		}
		if h.ID != "" && h.Verb == "" {
			h.Verb = "deploy"
			if h.ID == "secret-rotate" {
				h.Verb = "secret rotate"
			}
		}
	}
	return nil
}

// NewID is a fresh holder id for a verb that is not a rollout.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "op-" + hex.EncodeToString(b[:])
}

// Me is a holder for this process: verb (the operation) under id.
func Me(verb, id string, now time.Time) Holder {
	host, _ := os.Hostname()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return Holder{ID: id, Verb: verb, Host: host, PID: os.Getpid(), Started: now.UTC(), Nonce: hex.EncodeToString(b[:])}
}

func (h Holder) String() string {
	if h.Unreadable != "" {
		return fmt.Sprintf("an unreadable lock (%s: %s)", LockKey, h.Unreadable)
	}
	verb := h.Verb
	if verb == "" {
		verb = "an operation"
	}
	return fmt.Sprintf("%s %s (host %s, pid %d, started %s)", verb, h.ID, h.Host, h.PID, h.Started.UTC().Format(time.RFC3339))
}

// Same reports whether two holders are the same run.
func (h Holder) Same(o Holder) bool {
	return h.ID == o.ID && h.Verb == o.Verb && h.Host == o.Host && h.PID == o.PID && h.Started.Equal(o.Started) && h.Nonce == o.Nonce
}

// KeepsRecord reports whether the holder is a gated change that keeps a
// record to resume from (a rollout, a router canary, a secret rotation:
// the executor's step kinds) — or an unknown verb, presumed to. Such a
// lock is that change's to resume or abandon, never taken over by another
// verb, even when its process is gone.
func (h Holder) KeepsRecord() bool {
	switch h.Verb {
	case "deploy", "router canary", "secret rotate", "":
		return true
	}
	return false
}

// GoneFromThisHost reports whether the holder ran on this machine and its
// process no longer exists — the one case where a lock is provably stale.
// A holder on another host, or with no pid, is never presumed dead.
func (h Holder) GoneFromThisHost() bool {
	host, err := os.Hostname()
	if err != nil || host != h.Host || h.PID <= 0 {
		return false
	}
	return !ProcessAlive(h.PID)
}

// RunningOnThisHost reports whether the holder ran on this machine and its
// process still runs: a live holder, whose lock nobody may remove. A holder
// on another host cannot be checked from here (false: the caller says so).
func (h Holder) RunningOnThisHost() bool {
	host, err := os.Hostname()
	if err != nil || host != h.Host || h.PID <= 0 {
		return false
	}
	return ProcessAlive(h.PID)
}

// ProcessAlive reports whether pid runs on this machine: the one liveness
// check of cellctl's locks (the fleet lock's holders, and the pulumi stack
// locks `cellctl unlock` removes). Signal 0 probes without signalling;
// EPERM means it exists under another user; a zombie — dead, not yet
// reaped — counts as gone. A pid <= 0 is unknown, presumed alive: never
// steal a lock on a guess.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return true
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true // no procfs: trust kill(0)
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) == 0 || fields[0] != "Z"
}

// HeldError is returned when another run holds the fleet. The commands
// map it to exit code 4 (outcome.Locked).
type HeldError struct {
	Holder Holder
}

func (e *HeldError) Error() string {
	return "the fleet is held by " + e.Holder.String() + "; " + e.Holder.Remedy()
}

// Remedy says what to do about a lock held by h: wait for a live holder,
// clear one that is provably gone or unreadable — always naming the one
// command that clears the fleet lock.
func (h Holder) Remedy() string {
	switch {
	case h.Unreadable != "":
		return fmt.Sprintf("the lock cannot be parsed, so nobody can tell who holds it; if no cellctl command is running against this fleet, clear it with `cellctl deploy --abandon %s`", UnreadableID)
	case h.GoneFromThisHost():
		return fmt.Sprintf("its process (pid %d) is no longer running on this host, so the lock is stale: clear it with `cellctl deploy --abandon %s`", h.PID, h.ID)
	}
	return fmt.Sprintf("wait for it to finish, or if that process is gone, clear the lock with `cellctl deploy --abandon %s`", h.ID)
}

// Lock is a held fleet lock.
type Lock struct {
	store  *Store
	Holder Holder
}

// Acquire takes the fleet lock for h. Of any number of operators acquiring
// at once, exactly one wins (the backend's create-if-absent decides); the
// others get a *HeldError naming the winner.
func (s *Store) Acquire(ctx context.Context, h Holder) (*Lock, error) {
	if h.ID == "" || h.Nonce == "" {
		return nil, errors.New("the fleet lock: a holder needs an id and a nonce")
	}
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
			return nil, fmt.Errorf("taking the fleet lock: %w", err)
		}
		held, err := s.Holder(ctx)
		if err != nil {
			return nil, err
		}
		if held != nil {
			return nil, &HeldError{Holder: *held}
		}
		// Refused as existing, yet not readable: released between our
		// create and our read, or a backend whose reads lag its writes.
		// Back off before trying again, so a lagging read has time to
		// show the holder.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 100 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("taking the fleet lock: it kept changing hands; try again")
}

// Holder returns who holds the lock now, nil when nobody does. A lock
// object that cannot be parsed (empty, truncated, not a holder) is a
// holder with Unreadable set, ID UnreadableID and a nonce derived from
// its bytes and modification time, so that breaking it (Abandon) cannot
// break a lock written after it.
func (s *Store) Holder(ctx context.Context) (*Holder, error) {
	data, found, err := s.readBytes(ctx, LockKey)
	if err != nil {
		return nil, fmt.Errorf("reading the fleet lock: %w", err)
	}
	if !found {
		return nil, nil
	}
	var h Holder
	why := ""
	switch err := json.Unmarshal(data, &h); {
	case len(strings.TrimSpace(string(data))) == 0:
		why = "the file is empty"
	case err != nil:
		why = "not a lock holder: " + err.Error()
	case h.ID == "":
		why = "it names no holder id"
	}
	if why == "" {
		return &h, nil
	}
	sum := sha256.Sum256(data)
	if a, err := s.b().Attributes(ctx, LockKey); err == nil {
		sum = sha256.Sum256(append(data, a.ModTime.UTC().Format(time.RFC3339Nano)...))
	}
	return &Holder{ID: UnreadableID, Unreadable: why, Nonce: "unreadable-" + hex.EncodeToString(sum[:8])}, nil
}

// Release gives the lock up. It removes the lock only while it is still
// this holder's (an operator may have abandoned it meanwhile).
func (l *Lock) Release(ctx context.Context) error {
	cur, err := l.store.Holder(ctx)
	// A backend whose reads may lag its writes (an S3-compatible store
	// without S3's read-after-write consistency) can answer "no lock"
	// just after this holder wrote it: look again before concluding it
	// is gone, or the lock would outlive its release and hold the fleet.
	for wait := 100 * time.Millisecond; err == nil && cur == nil && wait <= 800*time.Millisecond; wait *= 2 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		cur, err = l.store.Holder(ctx)
	}
	if err != nil {
		return err
	}
	if cur == nil || cur.Nonce != l.Holder.Nonce {
		return nil
	}
	if err := l.store.delete(ctx, LockKey); err != nil {
		return fmt.Errorf("releasing the fleet lock: %w", err)
	}
	return nil
}

// StillHeld reports whether the lock is still this holder's; a long run
// checks it before a write so a holder whose lock was abandoned stops.
func (l *Lock) StillHeld(ctx context.Context) (bool, error) {
	cur, err := l.store.Holder(ctx)
	if err != nil {
		return false, err
	}
	return cur != nil && cur.Nonce == l.Holder.Nonce, nil
}

// Abandon breaks the lock of holder id (UnreadableID for a lock that
// cannot be parsed), for a holder that is gone (killed, its machine lost).
// It refuses when the lock is held by another id, and is safe when several
// operators abandon at once: a tombstone object per broken holder is
// created exclusively, so exactly one of them deletes the lock and none
// can delete a lock taken after it. Records are left as they are — only a
// lock holder writes records — so rerunning a deploy continues it. It
// returns the holder that was removed, nil when the lock was free.
func (s *Store) Abandon(ctx context.Context, id string) (*Holder, error) {
	held, err := s.Holder(ctx)
	if err != nil || held == nil {
		return nil, err
	}
	if held.ID != id {
		return nil, fmt.Errorf("the fleet lock is held by %s, not %s: nothing abandoned", held, id)
	}
	return held, s.breakHolder(ctx, *held)
}

// Break removes the lock only if it is still held by exactly held (same
// nonce), through the same tombstone as Abandon.
func (s *Store) Break(ctx context.Context, held Holder) error {
	cur, err := s.Holder(ctx)
	if err != nil {
		return err
	}
	if cur == nil || cur.Nonce != held.Nonce {
		return nil // gone already, or someone else's now
	}
	return s.breakHolder(ctx, *cur)
}

func (s *Store) breakHolder(ctx context.Context, held Holder) error {
	tomb := LockKey + ".abandoned-" + held.Nonce
	stone, _ := json.Marshal(struct {
		Holder     Holder    `json:"holder"`
		Unreadable string    `json:"unreadable,omitempty"`
		Abandoned  time.Time `json:"abandoned"`
	}{held, held.Unreadable, s.now()})
	switch err := s.createExclusive(ctx, tomb, stone); {
	case errors.Is(err, errExists), errors.Is(err, errConflict):
		return nil // another operator is abandoning the same holder
	case err != nil:
		return fmt.Errorf("breaking the fleet lock of %s: %w", held.ID, err)
	}
	// The lock must still be the holder we broke, not a newer one.
	if cur, err := s.Holder(ctx); err != nil {
		return err
	} else if cur == nil || cur.Nonce != held.Nonce {
		return nil
	}
	if err := s.delete(ctx, LockKey); err != nil {
		return fmt.Errorf("breaking the fleet lock of %s: %w", held.ID, err)
	}
	return nil
}

// Override records, in the backend beside the lock, that an operator ran
// verb while held held the fleet (an emergency override: the run went
// ahead without the lock). The record is the audit trail; it never locks.
func (s *Store) Override(ctx context.Context, me Holder, held Holder, user string) (string, error) {
	key := fmt.Sprintf("%s%s-%s.json", OverridePrefix, me.Started.UTC().Format("20060102T150405Z"), me.Nonce)
	data, err := json.MarshalIndent(struct {
		By       Holder    `json:"by"`
		User     string    `json:"user"`
		HeldBy   Holder    `json:"heldBy"`
		Unread   string    `json:"heldByUnreadable,omitempty"`
		Recorded time.Time `json:"recorded"`
	}{me, user, held, held.Unreadable, s.now()}, "", "  ")
	if err != nil {
		return "", err
	}
	if err := s.createExclusive(ctx, key, append(data, '\n')); err != nil {
		return "", fmt.Errorf("recording the lock override: %w", err)
	}
	return key, nil
}
