package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor/executortest"
	"sync"
	"testing"
	"time"
)

// fakeClock is virtual time that jumps forward whenever the executor waits,
// so an hour's bake runs in microseconds and deterministically.
type fakeClock = executortest.Clock

func newClock() *fakeClock {
	return executortest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
}

// fakeCells is the fleet as the updater sees it: what each cell runs.
type fakeCells struct {
	mu      sync.Mutex
	current map[string]CellConfig
	// log is every Apply in the order they started: "cell image".
	log []string
	// fail makes Apply of a cell fail when it returns an error.
	fail func(cell string, cfg CellConfig) error
	// during runs inside Apply (after it counts as in flight).
	during func(cell string, cfg CellConfig)
	// delay is a fixed latency per Apply (benchmarks).
	delay               time.Duration
	inFlight, maxFlight int
	currentErr          map[string]error
}

func newCells(cfgs map[string]CellConfig) *fakeCells {
	cur := map[string]CellConfig{}
	for k, v := range cfgs {
		cur[k] = v.Clone()
	}
	return &fakeCells{current: cur}
}

func (f *fakeCells) Current(ctx context.Context, cell string) (CellConfig, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.currentErr[cell]; err != nil {
		return CellConfig{}, err
	}
	cfg, ok := f.current[cell]
	if !ok {
		return CellConfig{}, fmt.Errorf("cell %s is not deployed", cell)
	}
	return cfg.Clone(), nil
}

func (f *fakeCells) Apply(ctx context.Context, cell string, cfg CellConfig) (ApplyResult, error) {
	f.mu.Lock()
	f.log = append(f.log, cell+" "+cfg.Image)
	f.inFlight++
	f.maxFlight = max(f.maxFlight, f.inFlight)
	during, fail := f.during, f.fail
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if during != nil {
		during(cell, cfg)
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return ApplyResult{}, ctx.Err()
		}
	}
	if fail != nil {
		if err := fail(cell, cfg); err != nil {
			return ApplyResult{}, err
		}
	}
	f.mu.Lock()
	f.current[cell] = cfg.Clone()
	f.mu.Unlock()
	return ApplyResult{Changed: 1}, nil
}

func (f *fakeCells) get(cell string) CellConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.current[cell].Clone()
}

func (f *fakeCells) applies() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// fakeGate answers from a function of the query; it records every query.
type fakeGate struct {
	mu     sync.Mutex
	answer func(q GateQuery) ([]Verdict, error)
	calls  []GateQuery
}

func (g *fakeGate) Check(ctx context.Context, q GateQuery) ([]Verdict, error) {
	g.mu.Lock()
	g.calls = append(g.calls, q)
	answer := g.answer
	g.mu.Unlock()
	return answer(q)
}

func (g *fakeGate) wavesChecked() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{}
	for _, q := range g.calls {
		out[q.Wave]++
	}
	return out
}

// healthByImage is the gate of a fleet whose health follows the image a
// cell runs, like the simulator's health model: a cell on a bad image
// serves 3.2% 5xx; a fleet with no traffic is inconclusive.
func healthByImage(cells *fakeCells, bad map[string]bool) func(q GateQuery) ([]Verdict, error) {
	return func(q GateQuery) ([]Verdict, error) {
		var out []Verdict
		for _, c := range q.Cells {
			img := cells.get(c).Image
			if bad[img] || bad[c+" "+img] {
				b := &Breach{Cell: c, Signal: "error_rate_5xx", Reading: "3.2%", Threshold: "< 0.5%"}
				out = append(out, Verdict{Cell: c, Decision: waves.Breached, Breach: b,
					Readings: []Reading{{Signal: "error_rate_5xx", Value: "3.2%", Threshold: "< 0.5%"}}})
				continue
			}
			out = append(out, Verdict{Cell: c, Decision: waves.Pass,
				Readings: []Reading{{Signal: "error_rate_5xx", Value: "0.1%", Threshold: "< 0.5%", OK: true}}})
		}
		return out, nil
	}
}

// memStore keeps records as JSON (their stored form) and one lock.
type memStore struct {
	mu      sync.Mutex
	records map[string][]byte
	lock    *Holder
	saves   int
	// onSave runs before a save is kept; an error drops the save (the
	// process "died" before it reached the backend).
	onSave func(r *Record) error
	// requests are operators' requests (Requests), by id; onRequest runs
	// at every read of them.
	requests  map[string]Request
	onRequest func(id string)
}

// Request implements Requests.
func (s *memStore) Request(ctx context.Context, id string) (Request, error) {
	s.mu.Lock()
	hook := s.onRequest
	s.mu.Unlock()
	if hook != nil {
		hook(id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneRequest(s.requests[id]), nil
}

// Ask implements Requests.
func (s *memStore) Ask(ctx context.Context, id string, fn func(*Request)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := cloneRequest(s.requests[id])
	fn(&q)
	if s.requests == nil {
		s.requests = map[string]Request{}
	}
	if q.Empty() {
		delete(s.requests, id)
	} else {
		s.requests[id] = q
	}
	return nil
}

func cloneRequest(q Request) Request {
	raw, _ := json.Marshal(q)
	var out Request
	_ = json.Unmarshal(raw, &out)
	return out
}

func newStore() *memStore { return &memStore{records: map[string][]byte{}} }

func (s *memStore) Load(ctx context.Context, id string) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.records[id]
	if !ok {
		return nil, fmt.Errorf("rollout %s: %w", id, ErrNoRecord)
	}
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (s *memStore) Save(ctx context.Context, r *Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.onSave != nil {
		if err := s.onSave(r); err != nil {
			return err
		}
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s.records[r.ID] = raw
	s.saves++
	return nil
}

func (s *memStore) Lock(ctx context.Context, h Holder) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock != nil {
		return &LockedError{Holder: *s.lock}
	}
	s.lock = &h
	return nil
}

func (s *memStore) Unlock(ctx context.Context, h Holder) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock != nil && s.lock.Same(h) {
		s.lock = nil
	}
	return nil
}

func (s *memStore) BreakLock(ctx context.Context, held Holder) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock != nil && s.lock.Same(held) {
		s.lock = nil
	}
	return nil
}

func (s *memStore) holder() *Holder {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return nil
	}
	h := *s.lock
	return &h
}

func (s *memStore) record(t *testing.T, id string) *Record {
	t.Helper()
	r, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("load record: %v", err)
	}
	return r
}

// events collects progress.
type events struct {
	mu   sync.Mutex
	list []Event
}

func (e *events) Event(ev Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
}

func (e *events) kinds() []EventKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []EventKind
	for _, ev := range e.list {
		out = append(out, ev.Kind)
	}
	return out
}

func (e *events) messages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.list {
		if ev.Message != "" {
			out = append(out, ev.Message)
		}
	}
	return out
}

var errDied = errors.New("process killed")

// List implements Lister: every record, as stored.
func (s *memStore) List(ctx context.Context) ([]*Record, error) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.records))
	for id := range s.records {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	var out []*Record
	for _, id := range ids {
		r, err := s.Load(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
