package exitcode

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hashicorp/go-multierror"

	"github.com/cellctl/cellctl/internal/outcome"
)

func TestOf(t *testing.T) {
	locked := outcome.Locked("cell-b", errors.New("another operation holds the stack's lock"))
	halted := outcome.Halted("wave-2", errors.New("gate failed: 5xx rate"))
	findings := outcome.Findings(errors.New("isolation audit: 1 violation(s)"))
	behind := outcome.Behind(errors.New("the router serves a newer table"), "git pull")
	var several *multierror.Error
	several = multierror.Append(several, errors.New("cell-a: boom"), fmt.Errorf("cell-b: %w", locked))
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"plain", errors.New("unknown cell"), Error},
		{"locked", locked, Locked},
		{"halted", halted, Halted},
		{"findings", findings, Findings},
		{"wrapped findings", fmt.Errorf("plan: %w", findings), Findings},
		{"silent findings", &outcome.FindingsError{Err: outcome.ErrSilent}, Findings},
		{"a lock among failed stacks", several.ErrorOrNil(), Locked},
		{"a lock beats findings", errors.Join(findings, locked), Locked},
		{"halted beats findings", errors.Join(findings, halted), Halted},
		{"a checkout behind the fleet", fmt.Errorf("up: %w", behind), Locked},
		{"behind beats findings", errors.Join(findings, behind), Locked},
	} {
		if got := Of(tc.err); got != tc.want {
			t.Errorf("%s: Of(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}
