package outcome

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorsKeepTheirCause(t *testing.T) {
	cause := errors.New("wave-2 gate: 5xx rate 7% > 1%")
	h := &HaltedError{Wave: "wave-2", Err: cause, Next: "run `cellctl drift cell-c`"}
	if h.Error() != "wave-2 gate: 5xx rate 7% > 1%; run `cellctl drift cell-c`" || !errors.Is(h, cause) {
		t.Fatalf("halted: %q", h.Error())
	}
	if Halted("w", cause).Error() != cause.Error() {
		t.Fatal("no next step: the cause alone")
	}
	l := Locked("cell-a", cause)
	var le *LockedError
	if !errors.As(fmt.Errorf("up: %w", l), &le) || le.Stack != "cell-a" || !errors.Is(l, cause) || l.Error() != cause.Error() {
		t.Fatalf("locked: %v", l)
	}
	f := Findings(cause)
	if !errors.Is(f, cause) || f.Error() != cause.Error() {
		t.Fatalf("findings: %v", f)
	}
	if !Silent(ErrSilent) || !Silent(&FindingsError{Err: ErrSilent}) || Silent(cause) || Silent(nil) {
		t.Fatal("Silent")
	}
}
