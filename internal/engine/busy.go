package engine

import (
	"context"
	"errors"
	"strings"
	"time"
)

// CheckpointBusyError says the engine could not load a stack's checkpoint
// because another process was replacing it as this one read it (the file
// backend writes the checkpoint and its .attrs sidecar non-atomically;
// pulumi reports "failed to load checkpoint"). Nothing started: the same
// operation run again meets the other process's lock, or the finished
// checkpoint. It unwraps to the engine's own error.
type CheckpointBusyError struct{ Err error }

func (e *CheckpointBusyError) Error() string { return e.Err.Error() }
func (e *CheckpointBusyError) Unwrap() error { return e.Err }

// checkpointBusyText is how pulumi says it (it has no typed error for it):
// matched here only, everything else asks errors.As.
const checkpointBusyText = "failed to load checkpoint"

// classifyBusy returns err as a *CheckpointBusyError when it is one, else
// err unchanged.
func classifyBusy(err error) error {
	var busy *CheckpointBusyError
	if err == nil || errors.As(err, &busy) || !strings.Contains(err.Error(), checkpointBusyText) {
		return err
	}
	return &CheckpointBusyError{Err: err}
}

// busyAttempts and busyBackoff bound the wait for a busy checkpoint: a
// checkpoint write takes milliseconds, so four tries over about a second
// outlast it, and a checkpoint that stays unreadable (a broken file, not a
// busy one) is reported quickly.
const busyAttempts = 4

var busyBackoff = 150 * time.Millisecond

// retryBusy runs op until it returns anything but a busy checkpoint, at
// most busyAttempts times, waiting a little longer each time. The last
// error is returned as op gave it when it is not busy (so the engine's
// typed errors — a concurrent update, a missing stack — survive), and as a
// *CheckpointBusyError when the checkpoint stayed busy.
func retryBusy(ctx context.Context, op func() error) error {
	for attempt := 1; ; attempt++ {
		err := op()
		busy := classifyBusy(err)
		if busy == err || attempt == busyAttempts {
			return busy
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * busyBackoff):
		}
	}
}
