package executor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A save that fails is kept: the change stops at its next step, even if
// a later save would succeed.
func TestJournalKeepsTheFirstFailedSave(t *testing.T) {
	st := newStore()
	fail := true
	st.onSave = func(*Record) error {
		if fail {
			return errors.New("backend unreachable")
		}
		return nil
	}
	j := NewJournal(st, newClock(), &Record{ID: "c-0123456789ab", Kind: KindCanary})
	if err := j.Update(context.Background(), func(r *Record) { r.State = Running }); err == nil {
		t.Fatal("a failed save was not reported")
	}
	fail = false
	if err := j.Update(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Err(); err == nil || !strings.Contains(err.Error(), "c-0123456789ab") {
		t.Fatalf("Err = %v, want the first failure naming the record", err)
	}
	if got := st.record(t, "c-0123456789ab"); got.State != Running || got.Kind != KindCanary {
		t.Errorf("saved %+v", got)
	}
}

// Take: a free lock is taken; another change's lock is refused naming its
// holder and told by its record; the same change's lock is taken over
// only when its run provably stopped (its record says so, or its process
// is gone from this host).
func TestTakeTakesOverOnlyAStoppedRunOfTheSameChange(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	h := func(id, verb string, pid int, nonce string) Holder {
		return Holder{ID: id, Verb: verb, Host: "ci-1", PID: pid, Started: at, Nonce: nonce}
	}
	sameVerb := func(verb string) func(Holder) bool { return func(o Holder) bool { return o.Verb == verb } }
	alive := func(o Holder) bool { return o.PID != 7 } // only pid 7 is gone

	st := newStore()
	rotation := h("s-0123456789ab", "secret rotate", 1, "a")
	if note, err := Take(ctx, st, rotation, sameVerb("secret rotate"), alive); err != nil || note != "" {
		t.Fatalf("free lock: %q %v", note, err)
	}
	// A live canary's lock refuses another canary.
	st2 := newStore()
	live := h("c-0123456789ab", "router canary", 1, "b")
	_ = st2.Lock(ctx, live)
	_ = st2.Save(ctx, &Record{ID: live.ID, Kind: KindCanary, State: Running, Holder: live})
	var le *LockedError
	if _, err := Take(ctx, st2, h("c-ffffffffffff", "router canary", 2, "c"), sameVerb("router canary"), alive); !errors.As(err, &le) || le.Holder.Nonce != "b" {
		t.Fatalf("live holder: %v", err)
	}
	// A dead canary with its record interrupted refuses a rollout, told
	// as an unfinished canary.
	_ = st2.Save(ctx, &Record{ID: live.ID, Kind: KindCanary, State: Interrupted, Holder: live})
	_, err := Take(ctx, st2, h("r-0123456789ab", "deploy", 3, "d"), func(o Holder) bool { return o.ID == "r-0123456789ab" }, alive)
	if !errors.As(err, &le) || le.Kind != KindCanary || !strings.Contains(err.Error(), "router canary --discard") {
		t.Fatalf("a rollout over an interrupted canary: %v", err)
	}
	// ...and is taken over by the next canary: its record says it stopped.
	note, err := Take(ctx, st2, h("c-0123456789ab", "router canary", 4, "e"), sameVerb("router canary"), nil)
	if err != nil || !strings.Contains(note, "stopped (interrupted)") || st2.holder().Nonce != "e" {
		t.Fatalf("takeover: %q %v %v", note, err, st2.holder())
	}
	// A holder whose process is gone from this host is taken over.
	st3 := newStore()
	gone := h("s-0123456789ab", "secret rotate", 7, "f")
	_ = st3.Lock(ctx, gone)
	if note, err := Take(ctx, st3, h("s-0123456789ab", "secret rotate", 8, "g"), sameVerb("secret rotate"), alive); err != nil || !strings.Contains(note, "pid 7") || !strings.Contains(note, "is gone") {
		t.Fatalf("gone holder: %q %v", note, err)
	}
}
