package rollout

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Locks older cellctl versions left on disk still lock, and name their
// holder: the rollout lock's "rollout_id" and the executor's "rolloutId".
func TestLegacyLockFilesStillLockAndNameTheirHolder(t *testing.T) {
	for name, body := range map[string]string{
		"rollout_id": `{"rollout_id":"r-0123456789ab","host":"ci-7","pid":4242,"started":"2026-12-01T09:00:00Z","nonce":"n1"}`,
		"rolloutId":  `{"rolloutId":"r-0123456789ab","host":"ci-7","pid":4242,"started":"2026-12-01T09:00:00Z","nonce":"n1"}`,
	} {
		t.Run(name, func(t *testing.T) {
			s, dir := fileStore(t)
			writeLock(t, dir, body)
			_, err := s.Acquire(context.Background(), Me("drain", NewID(), t0))
			var he *HeldError
			if !errors.As(err, &he) {
				t.Fatalf("a legacy lock did not lock: %v", err)
			}
			want := Holder{ID: "r-0123456789ab", Verb: "deploy", Host: "ci-7", PID: 4242, Started: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Nonce: "n1"}
			if !he.Holder.Same(want) {
				t.Errorf("holder %+v, want %+v", he.Holder, want)
			}
			if h, err := s.Abandon(context.Background(), "r-0123456789ab"); err != nil || h == nil {
				t.Fatalf("abandoning a legacy lock: %v %v", h, err)
			}
			if h, _ := s.Holder(context.Background()); h != nil {
				t.Errorf("still held by %v", h)
			}
		})
	}
}

// An empty or garbage lock file says it cannot be parsed and how to clear
// it; Abandon("unreadable") clears it, and cannot clear a lock taken after.
func TestUnreadableLockSaysSoAndIsCleared(t *testing.T) {
	for name, body := range map[string]string{"empty": "", "garbage": "\x00\x01not json", "truncated": `{"id":"r-01234`, "no id": `{"host":"x"}`} {
		t.Run(name, func(t *testing.T) {
			s, dir := fileStore(t)
			ctx := context.Background()
			writeLock(t, dir, body)
			_, err := s.Acquire(ctx, Me("up", NewID(), t0))
			var he *HeldError
			if !errors.As(err, &he) || he.Holder.Unreadable == "" || he.Holder.ID != UnreadableID {
				t.Fatalf("an unreadable lock: %v", err)
			}
			msg := err.Error()
			for _, want := range []string{"unreadable lock", LockKey, "cannot be parsed", "`cellctl deploy --abandon unreadable`"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "0001-01-01") || strings.Contains(msg, "pid 0") {
				t.Errorf("message presents garbage as a holder: %s", msg)
			}
			stale := he.Holder
			h, err := s.Abandon(ctx, UnreadableID)
			if err != nil || h == nil {
				t.Fatalf("abandon unreadable: %v %v", h, err)
			}
			l, err := s.Acquire(ctx, Me("up", NewID(), t0))
			if err != nil {
				t.Fatalf("after clearing: %v", err)
			}
			// Breaking the old unreadable holder again must not free the
			// new lock.
			if err := s.Break(ctx, stale); err != nil {
				t.Fatal(err)
			}
			if ok, _ := l.StillHeld(ctx); !ok {
				t.Error("breaking a cleared unreadable lock freed the lock taken after it")
			}
		})
	}
}

// Two unreadable locks at different times are different holders: the
// tombstone of the first does not keep the second from being cleared.
func TestSecondUnreadableLockIsClearedToo(t *testing.T) {
	s, dir := fileStore(t)
	ctx := context.Background()
	// Materialize the backend directory, as any first write does.
	if l, err := s.Acquire(ctx, Me("up", NewID(), t0)); err != nil || l.Release(ctx) != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		writeLock(t, dir, "")
		path := filepath.Join(dir, filepath.FromSlash(LockKey))
		mt := time.Now().Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(path, mt, mt); err != nil {
			t.Fatal(err)
		}
		if h, err := s.Abandon(ctx, UnreadableID); err != nil || h == nil {
			t.Fatalf("round %d: abandon: %v %v", i, h, err)
		}
		if h, _ := s.Holder(ctx); h != nil {
			t.Fatalf("round %d: still held by %v", i, h)
		}
	}
}

func TestProcessAlive(t *testing.T) {
	if !ProcessAlive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatalf("cannot run true: %v", err)
	}
	if ProcessAlive(cmd.Process.Pid) {
		t.Errorf("a reaped process (pid %d) is alive", cmd.Process.Pid)
	}
	if !ProcessAlive(0) {
		t.Error("an unknown pid must be presumed alive")
	}
}

// A stale holder (its process gone from this host) is told apart in the
// refusal, with the one command that clears it.
func TestStaleHolderIsReportedWithTheClearingCommand(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	h := Holder{ID: "op-0123456789ab", Verb: "drain", Host: host, PID: cmd.Process.Pid, Started: t0, Nonce: "n"}
	got := (&HeldError{Holder: h}).Error()
	want := "the fleet is held by drain op-0123456789ab (host " + host + ", pid " + itoa(cmd.Process.Pid) + ", started 2026-12-01T09:30:00Z); its process (pid " +
		itoa(cmd.Process.Pid) + ") is no longer running on this host, so the lock is stale: clear it with `cellctl deploy --abandon op-0123456789ab`"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestOverrideIsRecordedBesideTheLock(t *testing.T) {
	s, dir := fileStore(t)
	ctx := context.Background()
	held := Me("deploy", "r-0123456789ab", t0)
	if _, err := s.Acquire(ctx, held); err != nil {
		t.Fatal(err)
	}
	me := Me("up", NewID(), t0)
	key, err := s.Override(ctx, me, held, "alice")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(key)))
	if err != nil || !strings.HasPrefix(key, OverridePrefix) || !strings.Contains(string(data), `"user": "alice"`) || !strings.Contains(string(data), "r-0123456789ab") {
		t.Fatalf("override record %s: %s %v", key, data, err)
	}
	if h, _ := s.Holder(ctx); h == nil || h.Nonce != held.Nonce {
		t.Errorf("an override changed the lock: %v", h)
	}
}

func writeLock(t *testing.T, dir, body string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(LockKey))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
