package waves

import (
	"testing"
	"time"

	"github.com/cellctl/cellctl/waves/signal"
)

// The shape from the issue, as operators write it for other tools.
const operatorShape = `waves:
  - {name: canary, cells: [cell-a], bake: 30m}
  - {name: wave-1, cells: [cell-b], bake: 1h}
  - name: wave-2
    cells: [cell-c, cell-d]
    max_parallel: 1
    gate:
      promote_if:
        p99_latency_ms: "<= 0.6s"
        healthy_tasks: ">= 2"
      on_breach: halt
gate:
  promote_if:
    error_rate_5xx: "< 0.5%"
    p99_latency_ms: "< 400"
  min_requests: 100          # fewer requests in the bake = inconclusive, not a pass
  poll: 30s
  on_breach: halt_and_rollback_wave   # or: halt
  on_inconclusive: promote
`

func TestParseOperatorShape(t *testing.T) {
	p, err := Parse("stacks/waves.yaml", []byte(operatorShape))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate([]string{"cell-a", "cell-b", "cell-c", "cell-d"}); err != nil {
		t.Fatal(err)
	}
	canary, w2 := p.Waves[0], p.Waves[2]
	if canary.Bake != 30*time.Minute || p.Waves[1].Bake != time.Hour || w2.Bake != DefaultBake || w2.Parallel != 1 {
		t.Errorf("bakes/parallel: %v %v %v %d", canary.Bake, p.Waves[1].Bake, w2.Bake, w2.Parallel)
	}
	g := canary.Gate
	if g.PromoteIf.ErrorRate5xx != (signal.Threshold{Op: signal.Below, Value: 0.5}) ||
		g.PromoteIf.P99LatencyMs != (signal.Threshold{Op: signal.Below, Value: 400}) ||
		g.PromoteIf.HealthyTasks.IsSet() || g.MinRequests != 100 || g.Poll != 30*time.Second ||
		g.OnBreach != HaltAndRollbackWave || g.OnInconclusive != InconclusivePromote || len(g.Signals) != len(signal.All) {
		t.Errorf("canary gate = %+v", g)
	}
	if g.PromoteIfLines[signal.ErrorRate5xx] != 14 || g.PromoteIfLines[signal.P99LatencyMs] != 15 {
		t.Errorf("lines %v", g.PromoteIfLines)
	}
	// wave-2 overrides field by field and signal by signal.
	g2 := w2.Gate
	if g2.PromoteIf.ErrorRate5xx != g.PromoteIf.ErrorRate5xx ||
		g2.PromoteIf.P99LatencyMs != (signal.Threshold{Op: signal.AtMost, Value: 600}) ||
		g2.PromoteIf.HealthyTasks != (signal.Threshold{Op: signal.AtLeast, Value: 2}) ||
		g2.OnBreach != Halt || g2.OnInconclusive != InconclusivePromote || g2.Poll != 30*time.Second {
		t.Errorf("wave-2 gate = %+v", g2)
	}
	if g2.PromoteIfLines[signal.P99LatencyMs] != 9 || g2.PromoteIfLines[signal.ErrorRate5xx] != 14 {
		t.Errorf("wave-2 lines %v", g2.PromoteIfLines)
	}
	// The override must not leak into the fleet gate or the other waves.
	if p.Gate.PromoteIf.HealthyTasks.IsSet() || p.Waves[1].Gate.OnBreach != HaltAndRollbackWave {
		t.Errorf("override leaked: fleet %+v, wave-1 %+v", p.Gate, p.Waves[1].Gate)
	}
	if p.Index("wave-2") != 2 || p.Index("nope") != -1 {
		t.Error("Index")
	}
}

func TestTheDemoWavesStillParse(t *testing.T) {
	// Both shapes in one file: the older defaults block and list of gates
	// beside a fleet gate.
	p, err := Parse("waves.yaml", []byte(`defaults:
  bake: 10m
  gates: [5xx-rate, p99-latency, unhealthy-tasks]
waves:
  - name: canary
    cells: [cell-a]
    bake: 30m
    parallel: 1
  - name: rest
    cells: [cell-b]
    gates: [5xx-rate]
gate:
  min_requests: 0
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Waves[0].Parallel != 1 || p.Waves[1].Bake != 10*time.Minute || p.Waves[1].Gate.MinRequests != 0 {
		t.Errorf("%+v", p.Waves)
	}
	if !p.Waves[1].Gate.Checks(signal.ErrorRate5xx) || p.Waves[1].Gate.Checks(signal.HealthyTasks) {
		t.Errorf("rest checks %v", p.Waves[1].Gate.Signals)
	}
}
