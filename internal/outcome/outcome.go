// Package outcome holds the typed errors that decide how a cellctl command
// ends. Code below cmd/ returns them (wrapped as it likes); main is the one
// place that maps them to exit codes, with errors.As:
//
//	*LockedError   → 4  another operation holds a stack's lock
//	*BehindError   → 4  this checkout is older than what the fleet runs
//	*HaltedError   → 3  a rollout halted (and rolled back)
//	*FindingsError → 2  the command worked and found problems
//	anything else  → 1
//
// A multierror (go-multierror) of several stacks' errors is searched
// through, so one locked stack among failed ones still exits 4.
package outcome

import "errors"

// LockedError says another operation holds a stack's lock.
type LockedError struct {
	Stack string
	Err   error
}

func (e *LockedError) Error() string { return e.Err.Error() }
func (e *LockedError) Unwrap() error { return e.Err }

// Locked marks err as a lock conflict on stack.
func Locked(stack string, err error) error { return &LockedError{Stack: stack, Err: err} }

// BehindError says the checkout is older than what the backend's records
// say the fleet was last shipped (an origin-verify secret a rotation has
// replaced, a routing table another checkout published): shipping it
// would silently undo a newer change. It exits 4, as a lock does — the
// command is right, this checkout is not the one to run it yet — and
// Next is the command that catches the checkout up.
type BehindError struct {
	Err  error
	Next string
}

func (e *BehindError) Error() string {
	if e.Next == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + "; " + e.Next
}
func (e *BehindError) Unwrap() error { return e.Err }

// Behind marks err as a checkout behind the fleet, with the command that
// catches it up.
func Behind(err error, next string) error { return &BehindError{Err: err, Next: next} }

// HaltedError says a rollout stopped at a wave whose gate failed (and
// rolled that wave back). Next is the command the operator runs next.
type HaltedError struct {
	Wave string
	Err  error
	Next string
}

func (e *HaltedError) Error() string {
	if e.Next == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + "; " + e.Next
}
func (e *HaltedError) Unwrap() error { return e.Err }

// Halted marks err as a halted rollout at wave.
func Halted(wave string, err error) error { return &HaltedError{Wave: wave, Err: err} }

// FindingsError says the command did its job and found problems the
// operator must look at: an isolation violation, drift, a quota near its
// limit. Count is how many (0: not counted).
type FindingsError struct {
	Count int
	Err   error
}

func (e *FindingsError) Error() string { return e.Err.Error() }
func (e *FindingsError) Unwrap() error { return e.Err }

// Findings marks err as findings.
func Findings(err error) error { return &FindingsError{Err: err} }

// ErrSilent ends a command whose output already said everything; only the
// exit code remains. Wrap it in a FindingsError to exit 2 silently.
var ErrSilent = errors.New("")

// Silent reports whether err has nothing left to print.
func Silent(err error) bool { return errors.Is(err, ErrSilent) || (err != nil && err.Error() == "") }
