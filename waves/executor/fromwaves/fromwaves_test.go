package fromwaves

import (
	"github.com/cellctl/cellctl/internal/awsname"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/executor/executortest"
	"github.com/cellctl/cellctl/waves/gate"
	"github.com/cellctl/cellctl/waves/signal"
)

const wavesYAML = `waves:
  - {name: canary, cells: [cell-a], bake: 10m}
  - {name: wave-2, cells: [cell-b, cell-c], bake: 20m, max_parallel: 1}
  - name: wave-3
    cells: [cell-d]
    bake: 5m
    gate: {on_breach: halt, min_requests: 50}
gate:
  promote_if:
    error_rate_5xx: "< 0.5%"
    p99_latency_ms: "< 400"
  min_requests: 100
  poll: 30s
  on_breach: halt_and_rollback_wave
`

func parse(t *testing.T) *waves.Plan {
	t.Helper()
	p, err := waves.Parse("stacks/waves.yaml", []byte(wavesYAML))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The executor runs waves.yaml's waves as they are (executor.Wave is
// waves.Wave): its dry run shows every wave's policies, its gate in words
// and the exposure the plan carries.
func TestPlanCarriesEveryWavesPolicy(t *testing.T) {
	p := parse(t)
	desired := map[string]executor.CellConfig{}
	cells := &fleet{cur: map[string]executor.CellConfig{}}
	for _, c := range []string{"cell-a", "cell-b", "cell-c", "cell-d"} {
		desired[c] = executor.CellConfig{Image: "app:v2"}
		cells.cur[c] = executor.CellConfig{Image: "app:v1"}
	}
	exp := []waves.WaveExposure{{Wave: "canary", BucketShare: 0.05, PinnedShare: 0.1}}
	ep := executor.Plan{Waves: p.Waves, Desired: desired, Exposure: exp}
	if err := ep.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := executor.Describe(context.Background(), cells, nil, nil, ep, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c, w2, w3 := d.Waves[0], d.Waves[1], d.Waves[2]
	if c.Bake != 10*time.Minute || c.Poll != 30*time.Second || c.OnBreach != waves.HaltAndRollbackWave || c.OnInconclusive != waves.InconclusiveHalt {
		t.Errorf("canary %+v", c)
	}
	if c.Exposure == nil || c.Exposure.Buckets != 0.05 || c.Exposure.Pinned != 0.1 || w2.Exposure != nil {
		t.Errorf("exposure canary %+v wave-2 %+v", c.Exposure, w2.Exposure)
	}
	if w2.MaxParallel != 1 || w3.OnBreach != waves.Halt {
		t.Errorf("wave-2 max_parallel %d, wave-3 on_breach %s", w2.MaxParallel, w3.OnBreach)
	}
	if !strings.Contains(c.Gate, "error_rate_5xx < 0.5%") || !strings.Contains(c.Gate, "min 100 requests") || !strings.Contains(w3.Gate, "min 50 requests") {
		t.Errorf("gate descriptions %q / %q", c.Gate, w3.Gate)
	}
}

// health is what a cell serves over a window, by the image it runs.
type health struct{ requests, errors5xx, p99s, healthy float64 }

// reader is CloudWatch for cells whose metrics follow their image.
type reader struct {
	mu   sync.Mutex
	of   func(cell string) health
	seen int
}

func (r *reader) AlarmStates(_ context.Context, names []string) (map[string]gate.AlarmState, error) {
	out := map[string]gate.AlarmState{}
	for _, n := range names {
		out[n] = gate.AlarmState{Name: n, State: gate.StateOK}
	}
	return out, nil
}

func (r *reader) MetricData(_ context.Context, q gate.MetricQuery) ([]gate.Series, error) {
	r.mu.Lock()
	r.seen++
	r.mu.Unlock()
	cell := strings.Split(q.Metrics[0].Dimensions["LoadBalancer"], "/")[1]
	h := r.of(cell)
	var out []gate.Series
	for _, m := range q.Metrics {
		v := map[string]float64{"requests": h.requests, "target5xx": h.errors5xx, "elb5xx": 0, "p99": h.p99s, "healthy": h.healthy, "unhealthy": 0}[m.ID]
		out = append(out, gate.Series{ID: m.ID, Timestamps: []time.Time{q.Start}, Values: []float64{v}, Complete: true})
	}
	return out, nil
}

// targets builds cell targets as the deploy command does: the stack's
// outputs, and the cell's thresholds (its spec's, which the fleet loader
// fills from its wave's promote_if).
func targets(p *waves.Plan) func(context.Context, string) (gate.Target, error) {
	return func(ctx context.Context, cell string) (gate.Target, error) {
		t, err := target(ctx, cell)
		t.Thresholds = signal.Defaults().Merge(p.Waves[p.WaveOf(cell)].Gate.PromoteIf)
		return t, err
	}
}

func target(_ context.Context, cell string) (gate.Target, error) {
	outputs := map[string]any{"albArnSuffix": "app/" + cell + "/0123", "targetGroupArnSuffix": "targetgroup/" + cell + "/4567",
		"alarmNames": map[string]any{}}
	for k, v := range signal.AlarmNames(awsname.For("", cell)) {
		outputs["alarmNames"].(map[string]any)[k] = v
	}
	return gate.TargetFromOutputs(cell, outputs, signal.Defaults(), gate.Update{}), nil
}

func TestVerdictsNameTheBreachingSignalReadingAndThreshold(t *testing.T) {
	p := parse(t)
	r := &reader{of: func(cell string) health {
		switch cell {
		case "cell-b":
			return health{requests: 1000, errors5xx: 32, p99s: 0.2, healthy: 2}
		case "cell-c":
			return health{requests: 12, p99s: 0.2, healthy: 2}
		}
		return health{requests: 1000, errors5xx: 1, p99s: 0.2, healthy: 2}
	}}
	g := &Gate{Plan: p, Reader: r, Target: targets(p)}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	vs, err := g.Check(context.Background(), executor.GateQuery{Wave: "wave-2", Cells: []string{"cell-a", "cell-b", "cell-c"}, Start: t0, End: t0.Add(5 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0].Decision != waves.Pass || len(vs[0].Readings) == 0 {
		t.Errorf("cell-a %+v", vs[0])
	}
	b := vs[1].Breach
	if vs[1].Decision != waves.Breached || b == nil || b.Signal != "error_rate_5xx" || b.Reading != "3.2%" || b.Threshold != "< 0.5%" {
		t.Errorf("cell-b %+v breach %+v", vs[1], b)
	}
	if vs[2].Decision != waves.Inconclusive || !strings.Contains(vs[2].Reason, "cell-c") {
		t.Errorf("cell-c %+v", vs[2])
	}
	if _, err := g.Check(context.Background(), executor.GateQuery{Wave: "nope", Cells: []string{"cell-a"}}); err == nil {
		t.Errorf("an unknown wave was judged")
	}
	broken := &Gate{Plan: p, Reader: r, Target: func(context.Context, string) (gate.Target, error) {
		return gate.Target{}, errors.New("stack cell-a has no outputs")
	}}
	vs, _ = broken.Check(context.Background(), executor.GateQuery{Wave: "canary", Cells: []string{"cell-a"}, Start: t0, End: t0.Add(time.Minute)})
	if vs[0].Decision != waves.Breached || !strings.Contains(vs[0].Breach.Reading, "no outputs") {
		t.Errorf("an unreadable target did not breach: %+v", vs[0])
	}
}

// The executor driven by the real gate evaluator: a build that is bad on
// cell-c is caught in wave-2 and the wave rolled back.
func TestExecutorWithTheRealGateRollsBackABadWave(t *testing.T) {
	p := parse(t)
	cells := &fleet{cur: map[string]executor.CellConfig{}}
	desired := map[string]executor.CellConfig{}
	for _, c := range []string{"cell-a", "cell-b", "cell-c", "cell-d"} {
		cells.cur[c] = executor.CellConfig{Image: "app:v1", Settings: map[string]any{"DesiredCount": 2}}
		desired[c] = executor.CellConfig{Image: "app:v2", Settings: map[string]any{"DesiredCount": 2}}
	}
	r := &reader{of: func(cell string) health {
		if cell == "cell-c" && cells.image(cell) == "app:v2" {
			return health{requests: 1000, errors5xx: 32, p99s: 0.2, healthy: 2}
		}
		return health{requests: 1000, errors5xx: 1, p99s: 0.2, healthy: 2}
	}}
	ex := &executor.Executor{Updater: cells, Gate: &Gate{Plan: p, Reader: r, Target: targets(p)}, Store: &store{}, Clock: executortest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))}
	out, err := ex.Run(context.Background(), executor.Plan{Waves: p.Waves, Desired: desired}, executor.Options{Host: "ci", PID: 1})
	var h *executor.HaltedError
	if !errors.As(err, &h) || h.Wave != "wave-2" || h.Breach.Cell != "cell-c" || h.Breach.Signal != "error_rate_5xx" || h.Breach.Reading != "3.2%" || !h.RolledBack {
		t.Fatalf("err = %v", err)
	}
	got := map[string]string{}
	for _, row := range out.Summary {
		got[row.Cell] = row.Image + " " + row.State
	}
	want := map[string]string{"cell-a": "app:v2 new", "cell-b": "app:v1 rolled back", "cell-c": "app:v1 rolled back", "cell-d": "app:v1 untouched"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("summary %v, want %v", got, want)
	}
	for c, img := range map[string]string{"cell-a": "app:v2", "cell-b": "app:v1", "cell-c": "app:v1", "cell-d": "app:v1"} {
		if cells.image(c) != img {
			t.Errorf("%s runs %s, want %s", c, cells.image(c), img)
		}
	}
}

type fleet struct {
	mu  sync.Mutex
	cur map[string]executor.CellConfig
}

func (f *fleet) image(c string) string { f.mu.Lock(); defer f.mu.Unlock(); return f.cur[c].Image }

func (f *fleet) Current(_ context.Context, c string) (executor.CellConfig, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur[c].Clone(), nil
}

func (f *fleet) Apply(_ context.Context, c string, cfg executor.CellConfig) (executor.ApplyResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur[c] = cfg.Clone()
	return executor.ApplyResult{Changed: 1}, nil
}

type store struct {
	mu   sync.Mutex
	recs map[string][]byte
	lock *executor.Holder
}

func (s *store) Load(_ context.Context, id string) (*executor.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.recs[id]
	if !ok {
		return nil, executor.ErrNoRecord
	}
	var r executor.Record
	return &r, json.Unmarshal(raw, &r)
}

func (s *store) Save(_ context.Context, r *executor.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, err := json.Marshal(r)
	if s.recs == nil {
		s.recs = map[string][]byte{}
	}
	s.recs[r.ID] = raw
	return err
}

func (s *store) Lock(_ context.Context, h executor.Holder) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock != nil {
		return &executor.LockedError{Holder: *s.lock}
	}
	s.lock = &h
	return nil
}

func (s *store) Unlock(_ context.Context, h executor.Holder) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock != nil && s.lock.Same(h) {
		s.lock = nil
	}
	return nil
}

func (s *store) BreakLock(ctx context.Context, h executor.Holder) error { return s.Unlock(ctx, h) }
