// Package fromwaves adapts the waves packages to the rollout executor: the
// waves.yaml plan (waves.Plan, with each wave's gate) becomes an
// executor.Plan, and the gate evaluator (waves/gate.Checker, over the
// CloudWatch reader) becomes an executor.Gate. It is the glue `cellctl
// deploy` uses, kept out of the executor so the executor stays free of the
// gate's and the plan's types.
package fromwaves

import (
	"context"
	"fmt"
	"strings"

	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/gate"
	"github.com/cellctl/cellctl/waves/signal"
)

// Plan is the executor's plan of a waves.yaml plan: every wave with its
// bake, max_parallel and gate policies; desired is what each cell ships
// (the fleet's specs with --image applied, through cellspec.FromSpec).
// exposure, when not nil, is waves.Plan.Exposure's answer for the dry run.
func Plan(p *waves.Plan, desired map[string]executor.CellConfig, exposure []waves.WaveExposure) executor.Plan {
	byWave := map[string]waves.WaveExposure{}
	for _, e := range exposure {
		byWave[e.Wave] = e
	}
	out := executor.Plan{Desired: desired}
	for _, w := range p.Waves {
		ew := executor.Wave{
			Name:           w.Name,
			Cells:          append([]string(nil), w.Cells...),
			Bake:           w.Bake,
			Delay:          w.Delay,
			Approve:        w.Approve,
			MaxParallel:    w.Parallel,
			Poll:           w.Gate.Poll,
			OnBreach:       w.Gate.OnBreach,
			OnInconclusive: w.Gate.OnInconclusive,
			Gate:           Describe(w.Gate),
		}
		if e, ok := byWave[w.Name]; ok {
			ew.Exposure = &executor.Exposure{Buckets: e.BucketShare, Pinned: e.PinnedShare}
		}
		out.Waves = append(out.Waves, ew)
	}
	return out
}

// Describe says a gate in words: its thresholds (a signal waves.yaml leaves
// unset is judged by each cell's own alarm threshold), the least traffic it
// judges, and its policies.
func Describe(g waves.Gate) string {
	var parts []string
	for _, s := range signal.All {
		if !g.Checks(s.Name) {
			continue
		}
		if t := g.PromoteIf.Get(s.Name); t.IsSet() {
			parts = append(parts, string(s.Name)+" "+s.Format(t))
		} else {
			parts = append(parts, string(s.Name)+" (the cell's threshold)")
		}
	}
	parts = append(parts, fmt.Sprintf("min %d requests", g.MinRequests))
	return strings.Join(parts, ", ")
}

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
