package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cellctl/cellctl/waves"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fileStore is memStore that also writes every record to a file (write to a
// temporary file, rename), as the file:// blob backend does, so the
// benchmarks pay for record saves the way a real run does.
type fileStore struct {
	*memStore
	dir string
}

func (s *fileStore) Save(ctx context.Context, r *Record) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.dir, r.ID+".json.tmp")
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, r.ID+".json")); err != nil {
		return err
	}
	return s.memStore.Save(ctx, r)
}

// benchFleet is 16 cells in 4 waves of 4, every cell on app:v1; each
// iteration ships a new image so every cell changes.
func benchFleet(bake, poll time.Duration, image string) Plan {
	var p Plan
	p.Desired = map[string]CellConfig{}
	for w := range 4 {
		wave := Wave{Name: fmt.Sprintf("wave-%d", w+1), Bake: bake,
			Gate: waves.Gate{Poll: poll, OnBreach: waves.HaltAndRollbackWave, OnInconclusive: waves.InconclusiveHalt}}
		for c := range 4 {
			cell := fmt.Sprintf("cell-%d", w*4+c)
			wave.Cells = append(wave.Cells, cell)
			p.Desired[cell] = withImage(oldConfig(), image)
		}
		p.Waves = append(p.Waves, wave)
	}
	return p
}

// BenchmarkRolloutOverhead is a 16-cell fleet in 4 waves with a fixed
// latency per cell update and short bakes, on the wall clock. The ideal
// wall time is Σ over waves (slowest cell update + bake) = 4 × (latency +
// bake); overhead-% is how much longer the executor takes.
func BenchmarkRolloutOverhead(b *testing.B) {
	for _, tc := range []struct{ latency, bake, poll time.Duration }{
		{50 * time.Millisecond, 250 * time.Millisecond, 50 * time.Millisecond},
		{200 * time.Millisecond, time.Second, 100 * time.Millisecond},
	} {
		b.Run(fmt.Sprintf("update=%s/bake=%s/poll=%s", tc.latency, tc.bake, tc.poll), func(b *testing.B) {
			before := map[string]CellConfig{}
			for i := range 16 {
				before[fmt.Sprintf("cell-%d", i)] = oldConfig()
			}
			cells := newCells(before)
			cells.delay = tc.latency
			ex := &Executor{Updater: cells, Gate: &fakeGate{answer: healthByImage(cells, nil)},
				Store: &fileStore{memStore: newStore(), dir: b.TempDir()}, Progress: &events{}}
			ideal := 4 * (tc.latency + tc.bake)
			var total time.Duration
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				plan := benchFleet(tc.bake, tc.poll, fmt.Sprintf("app:v%d", i+2))
				start := time.Now()
				if _, err := ex.Run(context.Background(), plan, Options{Host: "bench", PID: 1}); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			mean := total / time.Duration(b.N)
			// CPU is what the executor (and the fakes, which mostly sleep)
			// burnt: unlike wall time it does not grow with the machine's load.
			b.ReportMetric(float64((cpuTime()-cpu0)/time.Duration(b.N))/float64(time.Millisecond), "cpu-ms")
			b.ReportMetric(float64(ideal)/float64(time.Second), "ideal-s")
			b.ReportMetric(float64(mean)/float64(time.Second), "wall-s")
			b.ReportMetric(100*float64(mean-ideal)/float64(ideal), "overhead-%")
			b.ReportMetric(float64(mean-ideal)/4/float64(time.Millisecond), "overhead-ms/wave")
		})
	}
}

// BenchmarkBreachToRollback measures the time from a breach appearing in the
// metrics to the rollback starting. The gate reports a breach for every
// poll at or after bake start + offset; offsets are spread over the poll
// interval so every phase of the poll cycle is sampled.
func BenchmarkBreachToRollback(b *testing.B) {
	const (
		poll = 100 * time.Millisecond
		bake = 2 * time.Second
	)
	var worst, sum time.Duration
	for i := 0; i < b.N; i++ {
		offset := 300*time.Millisecond + time.Duration(i*37%100)*time.Millisecond
		before := map[string]CellConfig{"cell-0": oldConfig(), "cell-1": oldConfig()}
		cells := newCells(before)
		var (
			mu       sync.Mutex
			appeared time.Time
			started  time.Time
		)
		gate := &fakeGate{answer: func(q GateQuery) ([]Verdict, error) {
			var out []Verdict
			at := q.Start.Add(offset)
			for _, c := range q.Cells {
				if c == "cell-1" && !time.Now().Before(at) {
					mu.Lock()
					appeared = at
					mu.Unlock()
					out = append(out, Verdict{Cell: c, Decision: waves.Breached, Breach: &Breach{Signal: "error_rate_5xx", Reading: "3.2%", Threshold: "< 0.5%"}})
					continue
				}
				out = append(out, Verdict{Cell: c, Decision: waves.Pass})
			}
			return out, nil
		}}
		progress := ProgressFunc(func(e Event) {
			if e.Kind == RollingBack {
				mu.Lock()
				started = time.Now()
				mu.Unlock()
			}
		})
		ex := &Executor{Updater: cells, Gate: gate, Store: &fileStore{memStore: newStore(), dir: b.TempDir()}, Progress: progress}
		plan := Plan{Waves: []Wave{{Name: "canary", Cells: []string{"cell-0", "cell-1"}, Bake: bake,
			Gate: waves.Gate{Poll: poll, OnBreach: waves.HaltAndRollbackWave, OnInconclusive: waves.InconclusiveHalt}}},
			Desired: map[string]CellConfig{"cell-0": withImage(oldConfig(), "bad"), "cell-1": withImage(oldConfig(), "bad")}}
		if _, err := ex.Run(context.Background(), plan, Options{}); err == nil {
			b.Fatal("want a halt")
		}
		d := started.Sub(appeared)
		sum += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(sum/time.Duration(b.N))/float64(time.Millisecond), "mean-ms")
	b.ReportMetric(float64(worst)/float64(time.Millisecond), "worst-ms")
	b.ReportMetric(float64(poll)/float64(time.Millisecond), "poll-ms")
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
