package stackrun

import (
	"fmt"
	"slices"

	"github.com/cellctl/cellctl/internal/fleet"
)

// Fleet returns the fleet as one run of stack sees it: f itself when the
// inputs change nothing, else a shallow copy in which only that cell (or
// the router) differs; f is never changed. The engine runs the program
// over it, and the apply path renders and audits it offline first.
func (in Inputs) Fleet(f *fleet.Fleet, stack string) (*fleet.Fleet, error) {
	if in.Router != nil {
		return in.withTraffic(f, stack)
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
func (in Inputs) withTraffic(f *fleet.Fleet, stack string) (*fleet.Fleet, error) {
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
