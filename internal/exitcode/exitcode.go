// Package exitcode is cellctl's contract with scripts and CI: every outcome
// maps to one documented exit code. Code below cmd/ never picks a code: it
// returns errors, typed where the outcome matters (internal/outcome), and
// main maps them once, here, with errors.As — through wrapping and through
// a go-multierror of several stacks' errors alike.
package exitcode

import (
	"errors"

	"github.com/cellctl/cellctl/internal/outcome"
)

// Exit codes.
const (
	OK       = 0 // success
	Error    = 1 // any failure: bad input, failed stack, engine error
	Findings = 2 // the command worked and found problems: drift, quota critical, isolation violation
	Halted   = 3 // a rollout halted (and rolled back)
	Locked   = 4 // another operation holds a stack's lock, or this checkout is behind the fleet (outcome.BehindError)
)

// Of returns the exit code for err. When several outcomes are in one error
// (a run over many stacks), a lock conflict wins — rerunning cannot help
// until the other operation ends — then a halted rollout, then findings.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var locked *outcome.LockedError
	var behind *outcome.BehindError
	var halted *outcome.HaltedError
	var findings *outcome.FindingsError
	switch {
	case errors.As(err, &locked), errors.As(err, &behind):
		return Locked
	case errors.As(err, &halted):
		return Halted
	case errors.As(err, &findings):
		return Findings
	}
	return Error
}
