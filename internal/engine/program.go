package engine

import (
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
// deployment policy attached: what every up of a deployed, linked router
// sends. A run of the router asks for the pass of its sequence
// (routerseq.go).
func (e *Engine) program(stack string, in stackrun.Inputs) (pulumi.RunFunc, error) {
	return e.programWith(stack, in, singlePass.passes[0])
}

func (e *Engine) programWith(stack string, in stackrun.Inputs, pass routerPass) (pulumi.RunFunc, error) {
	f, err := withInputs(e.opts.Fleet, stack, in)
	if err != nil {
		return nil, err
	}
	f = withPass(f, stack, pass)
	if e.opts.Program != nil {
		return e.opts.Program(f), nil
	}
	return stacks.Program(f), nil
}

// withInputs is the fleet as one run of stack sees it
// (stackrun.Inputs.Fleet: the one place inputs meet the fleet, shared
// with the apply path's offline render).
func withInputs(f *fleet.Fleet, stack string, in stackrun.Inputs) (*fleet.Fleet, error) {
	return in.Fleet(f, stack)
}
