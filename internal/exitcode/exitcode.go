// Package exitcode is cellctl's contract with scripts and CI: every outcome
// maps to one documented exit code. Code below cmd/ returns typed errors;
// only main turns them into a process exit status.
package exitcode

import "errors"

// Exit codes.
const (
	OK       = 0 // success
	Error    = 1 // any failure: bad input, failed stack, engine error
	Findings = 2 // the command worked and found problems: drift, quota critical, isolation violation
	Halted   = 3 // a rollout halted (and rolled back)
	Locked   = 4 // another operation holds a stack's lock
)

// Err carries an exit code with its cause.
type Err struct {
	Code int
	Err  error
}

func (e *Err) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *Err) Unwrap() error { return e.Err }

// With attaches code to err.
func With(code int, err error) error { return &Err{Code: code, Err: err} }

// ErrSilent is returned when the command already printed everything the
// user needs (e.g. findings in a report) and only the exit code remains.
var ErrSilent = errors.New("")

// Of returns the exit code for err: OK for nil, the highest-priority code
// found in its chain, Error otherwise.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Err
	if errors.As(err, &e) {
		return e.Code
	}
	return Error
}
