package waves

import (
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/waves/signal"
)

func TestParseAppliesDefaults(t *testing.T) {
	p, err := Parse("waves.yaml", []byte(`defaults:
  bake: 5m
  gates: [5xx-rate]
waves:
  - name: canary
    cells: [cell-a]
    bake: 30m
    parallel: 1
  - name: rest
    cells: [cell-b, cell-c]
    gates: [p99-latency, unhealthy-tasks]
`))
	if err != nil {
		t.Fatal(err)
	}
	c, r := p.Waves[0], p.Waves[1]
	if c.Bake != 30*time.Minute || len(c.Gate.Signals) != 1 || c.Gate.Signals[0] != signal.ErrorRate5xx || c.Parallel != 1 {
		t.Errorf("canary = %+v", c)
	}
	// unhealthy-tasks selects both task-health signals.
	if r.Bake != 5*time.Minute || len(r.Gate.Signals) != 3 || r.Gate.Signals[0] != signal.P99LatencyMs || strings.Join(r.Cells, ",") != "cell-b,cell-c" {
		t.Errorf("rest = %+v", r)
	}
	if p.WaveOf("cell-c") != 1 || p.WaveOf("cell-z") != -1 {
		t.Error("WaveOf")
	}
	if err := p.Validate([]string{"cell-a", "cell-b", "cell-c"}); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultsWithoutADefaultsBlock(t *testing.T) {
	p, err := Parse("waves.yaml", []byte("waves:\n  - name: all\n    cells: [cell-a]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Waves[0]; w.Bake != DefaultBake || len(w.Gate.Signals) != len(signal.All) || w.Gate.MinRequests != DefaultMinRequests ||
		w.Gate.Poll != DefaultPoll || w.Gate.OnBreach != HaltAndRollbackWave || w.Gate.OnInconclusive != InconclusiveHalt {
		t.Fatalf("wave = %+v", w)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	p, err := Parse("stacks/waves.yaml", []byte("waves:\n  - name: a\n    cells: [cell-a, cell-x, cell-a]\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Validate([]string{"cell-a", "cell-b"})
	want := []string{
		`stacks/waves.yaml:3: waves[0].cells[1]: unknown cell "cell-x" (cells of this fleet: cell-a, cell-b)`,
		`stacks/waves.yaml:3: waves[0].cells[2]: cell "cell-a" is listed twice in wave "a"`,
		`stacks/waves.yaml: waves: cell "cell-b" is in no wave: add it to one so deploys reach it`,
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
}
