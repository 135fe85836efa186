// Package fromwaves adapts the gate evaluator (waves/gate.Checker, over the
// CloudWatch reader) to the rollout executor: it becomes an executor.Gate,
// and a gate poll an executor.Verdict. It is the glue `cellctl deploy` uses,
// kept out of the executor so the executor stays free of the gate
// evaluator's types. (The executor runs waves.yaml's waves as they are:
// executor.Wave is waves.Wave.)
package fromwaves

import (
	"context"
	"fmt"

	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/gate"
)

// Gate is the gate evaluator as the executor's Gate: each wave is judged
// with its own gate (a per-wave gate overrides the fleet's), every cell
// read over the bake window by the same CloudWatch reader on AWS and on the
// simulator.
type Gate struct {
	Plan   *waves.Plan
	Reader gate.Reader
	// Target is a cell's gate target: its stack outputs and thresholds
	// (gate.TargetFromOutputs over the engine's outputs of the cell).
	Target func(ctx context.Context, cell string) (gate.Target, error)
}

// Check judges the query's cells. A cell whose target cannot be built is a
// breach (the gate fails closed); an unknown wave is an error, which the
// executor also counts as a breach.
func (g *Gate) Check(ctx context.Context, q executor.GateQuery) ([]executor.Verdict, error) {
	var wg *waves.Gate
	for i := range g.Plan.Waves {
		if g.Plan.Waves[i].Name == q.Wave {
			wg = &g.Plan.Waves[i].Gate
		}
	}
	if wg == nil {
		return nil, fmt.Errorf("wave %q is not in %s", q.Wave, g.Plan.File)
	}
	checker := &gate.Checker{Reader: g.Reader, Gate: *wg}
	out := make([]executor.Verdict, 0, len(q.Cells))
	for _, cell := range q.Cells {
		t, err := g.Target(ctx, cell)
		if err != nil {
			out = append(out, executor.Verdict{Cell: cell, Decision: waves.Breached, Breach: &executor.Breach{
				Cell: cell, Signal: executor.SignalGate, Reading: "cannot find what to read: " + err.Error()}})
			continue
		}
		// The executor never bakes a cell whose update failed: it breaches
		// on the update itself.
		t.Update = gate.Update{}
		out = append(out, Verdict(checker.Check(ctx, t, q.Start, q.End)))
	}
	return out, nil
}

// Verdict is one gate poll as the executor's verdict: the same decision, the
// readings as an operator reads them, and for a breach the first breaching
// reading (its signal or alarm, reading and threshold).
func Verdict(p gate.Poll) executor.Verdict {
	v := executor.Verdict{Cell: p.Cell, Decision: p.Verdict}
	for _, r := range p.Readings {
		v.Readings = append(v.Readings, executor.Reading{Signal: name(r), Value: r.Text, Threshold: r.Threshold, OK: r.Verdict == waves.Pass})
	}
	switch p.Verdict {
	case waves.Breached:
		b := &executor.Breach{Cell: p.Cell, Signal: executor.SignalGate, Reading: p.Summary()}
		if br := p.Breaches(); len(br) > 0 {
			b.Signal, b.Reading, b.Threshold = name(br[0]), br[0].Text, br[0].Threshold
			if br[0].Detail != "" {
				b.Reading += " (" + br[0].Detail + ")"
			}
		}
		v.Breach = b
	case waves.Inconclusive:
		v.Reason = p.Summary()
	}
	return v
}

// name is how a reading's signal is named in a halt: the signal, or the
// alarm for an alarm reading.
func name(r gate.Reading) string {
	switch {
	case r.Source == gate.FromAlarm && r.Alarm != "":
		return "alarm " + r.Alarm
	case r.Signal != "":
		return string(r.Signal)
	}
	return string(r.Source)
}
