package main

import (
	"bytes"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/iostreams"
)

// lockedBuffer is stderr written by the signal goroutine and read here.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func waitDone(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not cancelled", what)
	}
}

// The first interrupt asks the operation to finish the stacks in flight
// (the graceful context ends, the run's context does not); the second
// cancels the run outright. Each says so on stderr, in the words of the
// command that watches the first.
func TestFirstInterruptIsGracefulSecondCancels(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	stderr := &lockedBuffer{}
	io.ErrOut = stderr
	ctx, stop := interruptContext(io)
	defer stop()
	graceful := cmdutil.Graceful(ctx, cmdutil.StacksInFlight)
	if graceful == ctx {
		t.Fatal("the run's context carries no graceful context")
	}

	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitDone(t, "the graceful context", graceful.Done())
	if ctx.Err() != nil {
		t.Fatal("the first interrupt cancelled the run; it must only stop new stacks from starting")
	}
	if !strings.Contains(stderr.String(), "interrupt: finishing the stacks in flight; no new stack starts") {
		t.Fatalf("stderr after the first interrupt: %q", stderr.String())
	}

	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitDone(t, "the run's context", ctx.Done())
	if !strings.Contains(stderr.String(), "interrupt: cancelling") {
		t.Fatalf("stderr after the second interrupt: %q", stderr.String())
	}
}

// stop releases both contexts (a command that ends without an interrupt
// leaves nothing running).
func TestInterruptContextStopCancelsBoth(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	ctx, stop := interruptContext(io)
	graceful := cmdutil.Graceful(ctx, cmdutil.StacksInFlight)
	if ctx.Err() != nil || graceful.Err() != nil {
		t.Fatal("cancelled before any interrupt")
	}
	stop()
	waitDone(t, "the run's context", ctx.Done())
	waitDone(t, "the graceful context", graceful.Done())
}

// A command that watches no graceful context (status, a one-shot health)
// is cancelled by the first interrupt — it used to be told "finishing the
// stacks in flight" and wait for a second; one that does (health --watch)
// says what it does, not what a stack run would.
func TestFirstInterruptSaysWhatTheCommandDoes(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	stderr := &lockedBuffer{}
	io.ErrOut = stderr
	ctx, stop := interruptContext(io)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitDone(t, "the run's context", ctx.Done())
	if got := stderr.String(); got != "interrupt: cancelling\n" {
		t.Fatalf("a command watching nothing, after one interrupt: %q", got)
	}
	stop()

	stderr = &lockedBuffer{}
	io.ErrOut = stderr
	ctx, stop = interruptContext(io)
	defer stop()
	watch := cmdutil.Graceful(ctx, "stopping the watch")
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitDone(t, "the watch's context", watch.Done())
	if got := stderr.String(); got != "interrupt: stopping the watch (interrupt again to cancel now)\n" || ctx.Err() != nil {
		t.Fatalf("health --watch after one interrupt: %q (run cancelled: %v)", got, ctx.Err())
	}
}
