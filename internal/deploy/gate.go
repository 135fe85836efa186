package deploy

import (
	"context"
	"fmt"
	"sort"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/executor/fromwaves"
	"github.com/cellctl/cellctl/waves/gate"
)

// RegionalGate is the executor's Gate for a fleet whose cells may live in
// several accounts and regions: CloudWatch is regional and per account,
// so each poll's cells are read through the reader of their own Access —
// their account's role, their region — (fromwaves.Gate does the judging).
// An Access whose reader cannot be built (a role that cannot be assumed)
// breaches its cells: the gate fails closed.
type RegionalGate struct {
	Fleet   *fleet.Fleet
	Plan    *waves.Plan
	Reader  func(ctx context.Context, a fleet.Access) (gate.Reader, error)
	Outputs func(ctx context.Context, stack string) (map[string]any, error)
}

// Check implements executor.Gate.
func (g *RegionalGate) Check(ctx context.Context, q executor.GateQuery) ([]executor.Verdict, error) {
	byAccess := map[fleet.Access][]string{}
	var order []fleet.Access
	for _, cell := range q.Cells {
		var a fleet.Access
		if c := g.Fleet.Cell(cell); c != nil {
			a = c.Access()
		}
		if _, seen := byAccess[a]; !seen {
			order = append(order, a)
		}
		byAccess[a] = append(byAccess[a], cell)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].Account != order[j].Account {
			return order[i].Account < order[j].Account
		}
		return order[i].Region < order[j].Region
	})
	var out []executor.Verdict
	for _, a := range order {
		cells := byAccess[a]
		var reader gate.Reader
		err := fmt.Errorf("cell %s is not in the fleet", cells[0])
		if a.Region != "" {
			reader, err = g.Reader(ctx, a)
		}
		if err != nil {
			where := a.Region
			if a.Account != "" {
				where = "account " + a.Account + " " + a.Region
			}
			for _, c := range cells {
				out = append(out, executor.Verdict{Cell: c, Decision: waves.Breached, Breach: &executor.Breach{
					Cell: c, Signal: executor.SignalGate, Reading: fmt.Sprintf("cannot read CloudWatch in %s: %v", where, err)}})
			}
			continue
		}
		fg := &fromwaves.Gate{Plan: g.Plan, Reader: reader, Target: g.target}
		sub := q
		sub.Cells = cells
		vs, err := fg.Check(ctx, sub)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// target is what the gate reads for a cell: the alarm names and load
// balancer dimensions its stack exports, and the thresholds its alarms
// were built with.
func (g *RegionalGate) target(ctx context.Context, cell string) (gate.Target, error) {
	c := g.Fleet.Cell(cell)
	if c == nil {
		return gate.Target{}, fmt.Errorf("cell %s is not in the fleet", cell)
	}
	outs, err := g.Outputs(ctx, cell)
	if err != nil {
		return gate.Target{}, err
	}
	if len(outs) == 0 {
		return gate.Target{}, fmt.Errorf("cell %s's stack has no outputs", cell)
	}
	return gate.TargetFromOutputs(cell, outs, c.Thresholds(), gate.Update{}), nil
}
