package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestRetryBusyRetriesOnlyABusyCheckpoint(t *testing.T) {
	defer func(d time.Duration) { busyBackoff = d }(busyBackoff)
	busyBackoff = time.Millisecond
	ctx := context.Background()

	calls := 0
	err := retryBusy(ctx, func() error {
		calls++
		if calls < 3 {
			return fmt.Errorf("stack cell-a: failed to load checkpoint: EOF")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("busy twice then ok: err %v after %d calls, want nil after 3", err, calls)
	}

	other := errors.New("conflict: another update is in progress")
	calls = 0
	err = retryBusy(ctx, func() error { calls++; return other })
	if err != other || calls != 1 {
		t.Fatalf("another error: %v after %d calls, want it unchanged after 1", err, calls)
	}

	calls = 0
	err = retryBusy(ctx, func() error { calls++; return errors.New("failed to load checkpoint: unexpected end of JSON input") })
	var busy *CheckpointBusyError
	if !errors.As(err, &busy) || calls != busyAttempts {
		t.Fatalf("always busy: %v (%T) after %d calls, want a *CheckpointBusyError after %d", err, err, calls, busyAttempts)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	calls = 0
	err = retryBusy(cctx, func() error { calls++; return errors.New("failed to load checkpoint") })
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("cancelled: %v after %d calls", err, calls)
	}
}
