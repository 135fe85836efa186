package engine

import (
	"fmt"
	"slices"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/stacks"
)

// program builds the program one run of stack deploys: the repository's
// configuration, unless the run's inputs say otherwise (a given cell
// configuration, released protection). The inputs go into a copy of the
// fleet; the loaded fleet, which other runs share, is never changed.
//
// The router renders its primary distribution with its continuous
// deployment policy attached: what every up of a deployed router sends.
// A run that may create the primary asks for programWith(…, false)
// (routerseq.go).
func (e *Engine) program(stack string, in stackrun.Inputs) (pulumi.RunFunc, error) {
	return e.programWith(stack, in, true)
}

func (e *Engine) programWith(stack string, in stackrun.Inputs, attachPolicy bool) (pulumi.RunFunc, error) {
	f, err := withInputs(e.opts.Fleet, stack, in)
	if err != nil {
		return nil, err
	}
	f = withPolicy(f, stack, attachPolicy)
	if e.opts.Program != nil {
		return e.opts.Program(f), nil
	}
	return stacks.Program(f), nil
}

// withInputs returns the fleet as one run of stack sees it: f itself when
// the inputs change nothing, else a shallow copy in which only that cell
// differs.
func withInputs(f *fleet.Fleet, stack string, in stackrun.Inputs) (*fleet.Fleet, error) {
	if in.Router != nil {
		return withTraffic(f, stack, in)
	}
	if in.Cell == nil && !in.ReleaseProtection {
		return f, nil
	}
	c := f.Cell(stack)
	if c == nil {
		return nil, fmt.Errorf("stack %s: inputs of a cell (a given configuration, released protection) apply to cells only", stack)
	}
	if in.Cell != nil && in.Cell.ID != c.ID {
		return nil, fmt.Errorf("stack %s: the given configuration is cell %s's", stack, in.Cell.ID)
	}
	cell := *c
	if in.Cell != nil {
		cell.Cell = *in.Cell
	}
	cell.Releasing = in.ReleaseProtection
	copied := *f
	copied.Cells = slices.Clone(f.Cells)
	for i, x := range copied.Cells {
		if x.ID == c.ID {
			copied.Cells[i] = &cell
		}
	}
	return &copied, nil
}

// withTraffic is the fleet as one router canary step sees it: a copy whose
// router carries the step's traffic split.
func withTraffic(f *fleet.Fleet, stack string, in stackrun.Inputs) (*fleet.Fleet, error) {
	if stack != fleet.RouterStack || f.Router == nil {
		return nil, fmt.Errorf("stack %s: a traffic split between distributions applies to the router stack only", stack)
	}
	if in.Cell != nil || in.ReleaseProtection {
		return nil, fmt.Errorf("stack %s: cell inputs do not apply to the router", stack)
	}
	if err := in.Router.Validate(); err != nil {
		return nil, err
	}
	r := *f.Router
	t := *in.Router
	r.Traffic = &t
	copied := *f
	copied.Router = &r
	return &copied, nil
}
