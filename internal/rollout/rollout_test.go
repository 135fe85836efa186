package rollout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"
)

var t0 = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

func fileStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(context.Background(), "file://"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func TestExactlyOneOfManyConcurrentAcquirersWins(t *testing.T) {
	stores := map[string]func(t *testing.T) *Store{
		"file": func(t *testing.T) *Store { s, _ := fileStore(t); return s },
		"mem":  func(t *testing.T) *Store { return NewStore(memblob.OpenBucket(nil)) },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			const n = 16
			var wg sync.WaitGroup
			var mu sync.Mutex
			var won []Holder
			var held []*HeldError
			start := make(chan struct{})
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					h := Me("deploy", newID(t0.Add(time.Duration(i)*time.Second)), t0)
					<-start
					l, err := s.Acquire(context.Background(), h)
					mu.Lock()
					defer mu.Unlock()
					var he *HeldError
					switch {
					case err == nil:
						won = append(won, l.Holder)
					case errors.As(err, &he):
						held = append(held, he)
					default:
						t.Errorf("acquire: %v", err)
					}
				}(i)
			}
			close(start)
			wg.Wait()
			if len(won) != 1 || len(held) != n-1 {
				t.Fatalf("%d won, %d refused", len(won), len(held))
			}
			for _, he := range held {
				if he.Holder.Nonce != won[0].Nonce {
					t.Errorf("refusal names %s, the winner is %s", he.Holder, won[0])
				}
			}
		})
	}
}

// The lock must hold across processes, not only goroutines: this test runs
// itself as several processes acquiring the same file:// lock at once.
func TestExactlyOneProcessWins(t *testing.T) {
	if dir := os.Getenv("ROLLOUT_LOCK_DIR"); dir != "" {
		s, err := Open(context.Background(), "file://"+dir)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		at, _ := strconv.ParseInt(os.Getenv("ROLLOUT_LOCK_AT"), 10, 64)
		time.Sleep(time.Until(time.Unix(0, at)))
		_, err = s.Acquire(context.Background(), Me("deploy", newID(time.Now()), time.Now()))
		var he *HeldError
		switch {
		case err == nil:
			fmt.Println("won")
		case errors.As(err, &he):
			fmt.Println("held")
		default:
			fmt.Println("error", err)
		}
		os.Exit(0)
	}
	dir := filepath.Join(t.TempDir(), "state")
	at := strconv.FormatInt(time.Now().Add(500*time.Millisecond).UnixNano(), 10)
	const n = 6
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestExactlyOneProcessWins$")
			cmd.Env = append(os.Environ(), "ROLLOUT_LOCK_DIR="+dir, "ROLLOUT_LOCK_AT="+at)
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("process %d: %v %s", i, err, out)
			}
			outs[i] = strings.TrimSpace(string(out))
		}(i)
	}
	wg.Wait()
	won := 0
	for _, o := range outs {
		switch {
		case strings.HasPrefix(o, "won"):
			won++
		case strings.HasPrefix(o, "held"):
		default:
			t.Errorf("process said %q", o)
		}
	}
	if won != 1 {
		t.Fatalf("%d processes won the lock: %v", won, outs)
	}
}

func TestHeldErrorNamesTheHolder(t *testing.T) {
	s, _ := fileStore(t)
	ctx := context.Background()
	first := Holder{ID: newID(t0), Verb: "deploy", Host: "ci-runner-7", PID: 4242, Started: t0, Nonce: "n1"}
	if _, err := s.Acquire(ctx, first); err != nil {
		t.Fatal(err)
	}
	_, err := s.Acquire(ctx, Me("deploy", newID(t0.Add(time.Minute)), t0))
	var he *HeldError
	if !errors.As(err, &he) || he.Holder != first {
		t.Fatalf("err %v", err)
	}
	want := "the fleet is held by deploy " + first.ID + " (host ci-runner-7, pid 4242, started 2026-12-01T09:30:00Z); " +
		"wait for it to finish, or if that process is gone, clear the lock with `cellctl deploy --abandon " + first.ID + "`"
	if err.Error() != want {
		t.Errorf("message\n%s\nwant\n%s", err, want)
	}
}

func TestReleaseAndAbandon(t *testing.T) {
	s, dir := fileStore(t)
	ctx := context.Background()
	a := Me("deploy", newID(t0), t0)
	la, err := s.Acquire(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := la.StillHeld(ctx); !ok {
		t.Fatal("not held")
	}
	// Abandon names the rollout it breaks: the wrong id is refused.
	if _, err := s.Abandon(ctx, newID(t0.Add(time.Hour))); err == nil || !strings.Contains(err.Error(), "nothing abandoned") {
		t.Fatalf("abandoning the wrong rollout: %v", err)
	}
	// Several operators abandon the dead holder at once, then all try
	// to take over: one lock is broken once, and exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners := 0
	abandoned := make(chan struct{})
	var abandons sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		abandons.Add(1)
		go func(i int) {
			defer wg.Done()
			// nil: another operator had already removed the lock.
			h, err := s.Abandon(ctx, a.ID)
			if err != nil || (h != nil && h.Nonce != a.Nonce) {
				t.Errorf("abandon: %v %v", h, err)
			}
			abandons.Done()
			<-abandoned
			if _, err := s.Acquire(ctx, Me("deploy", newID(t0.Add(time.Duration(i+1)*time.Minute)), t0)); err == nil {
				mu.Lock()
				winners++
				mu.Unlock()
			}
		}(i)
	}
	abandons.Wait()
	close(abandoned)
	wg.Wait()
	if winners != 1 {
		t.Fatalf("%d took over", winners)
	}
	// The abandoned holder finds out and cannot release the new lock.
	if ok, _ := la.StillHeld(ctx); ok {
		t.Error("the abandoned holder still thinks it holds the lock")
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	cur, _ := s.Holder(ctx)
	if cur == nil || cur.Nonce == a.Nonce {
		t.Fatalf("holder after a stale release: %v", cur)
	}
	tombs, _ := filepath.Glob(filepath.Join(dir, ".cellctl", "locks", "rollout.json.abandoned-*"))
	if len(tombs) != 1 {
		t.Errorf("tombstones %v", tombs)
	}
	// The new holder releases; the fleet is free again.
	l := &Lock{store: s, Holder: *cur}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.Holder(ctx); h != nil {
		t.Errorf("still held by %v", h)
	}
	if h, err := s.Abandon(ctx, a.ID); h != nil || err != nil {
		t.Errorf("abandoning a free lock: %v %v", h, err)
	}
}

func TestGoneFromThisHost(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if !(Holder{Host: host, PID: cmd.Process.Pid}).GoneFromThisHost() {
		t.Error("a finished process is not gone")
	}
	if (Holder{Host: host, PID: os.Getpid()}).GoneFromThisHost() {
		t.Error("this very process is gone")
	}
	if (Holder{Host: "elsewhere.example", PID: cmd.Process.Pid}).GoneFromThisHost() {
		t.Error("a holder on another host must never be presumed dead")
	}
}

func TestOpenBackends(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "s3://cellctl-state/team-a?region=us-east-1")
	if err != nil {
		t.Fatalf("s3 backend: %v", err)
	}
	s.Close()
	for _, bad := range []string{"https://api.pulumi.com", "gs://bucket", "file://"} {
		if _, err := Open(ctx, bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// newID is a rollout id of the executor's shape (r- and 12 hex digits),
// distinct per instant.
func newID(at time.Time) string { return fmt.Sprintf("r-%012x", at.Unix()&0xffffffffffff) }
