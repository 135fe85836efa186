package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// benchWaves are three waves baking 5 s each at --bake-scale 1/60 (5 m of
// waves.yaml), polled every second.
const benchWaves = `waves:
  - {name: canary, cells: [cell-a], bake: 5m}
  - {name: wave-1, cells: [cell-b], bake: 5m}
  - {name: wave-2, cells: [cell-c, cell-d], bake: 5m}
gate:
  promote_if:
    error_rate_5xx: "< 0.5%"
    p99_latency_ms: "< 400"
  min_requests: 10
  poll: 1m
`

// benchRecord is what BenchmarkRollout reads of a rollout record.
type benchRecord struct {
	State string `json:"state"`
	Waves []struct {
		Name      string    `json:"name"`
		State     string    `json:"state"`
		Started   time.Time `json:"started"`
		BakeStart time.Time `json:"bakeStart"`
		Finished  time.Time `json:"finished"`
	} `json:"waves"`
	Router string `json:"router"`
	Canary *struct {
		Outcome string `json:"outcome"`
	} `json:"canary"`
}

// BenchmarkRollout measures what a rollout costs beyond its waves: a
// `cellctl deploy` of a new image to the demo fleet (4 cells in 3 waves,
// 5 s bakes) through the real pulumi CLI and the simulated cloud, its
// wall time against the sum of its waves' own time (each wave's cells'
// updates and its bake, from the rollout record: wave start → finish).
// The router's edge is unchanged, so its step must cost no engine run.
// Reported: wall-s, waves-s, overhead-% = (wall − waves) / waves, and
// where the rest went — before the first wave (fleet load, the apply
// path's gates, the lock, the record), between waves (reading each wave's
// cells before it starts), after the last wave (the router step, the
// final table).
func BenchmarkRollout(b *testing.B) {
	dir := newFleet(b)
	writeWaves(b, dir, benchWaves)
	mustRun(b, dir, "up")
	// A first rollout ships the router once through its canary and
	// records what it shipped; from then on the edge is unchanged.
	deploy := func(image string) (time.Duration, benchRecord) {
		start := time.Now()
		r := mustRun(b, dir, "deploy", "--image", image, "--bake-scale", strconv.FormatFloat(1.0/60, 'f', -1, 64), "-o", "json")
		wall := time.Since(start)
		var out struct {
			Record benchRecord `json:"record"`
		}
		decode(b, r, &out)
		if out.Record.State != "complete" {
			b.Fatalf("deploy of %s: %s\n%s", image, out.Record.State, r)
		}
		return wall, out.Record
	}
	deploy("registry.example.com/shop/api:9.0.0")
	var wall, waves, before, between, after float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StartTimer()
		start := time.Now()
		w, rec := deploy(fmt.Sprintf("registry.example.com/shop/api:9.1.%d", i))
		b.StopTimer()
		if rec.Canary == nil || rec.Canary.Outcome != "unchanged" {
			b.Fatalf("the router step with an unchanged edge: %+v", rec.Canary)
		}
		end := start.Add(w)
		wall += w.Seconds()
		for j, wr := range rec.Waves {
			if wr.State != "passed" {
				b.Fatalf("wave %s: %s", wr.Name, wr.State)
			}
			waves += wr.Finished.Sub(wr.Started).Seconds()
			if j > 0 {
				between += wr.Started.Sub(rec.Waves[j-1].Finished).Seconds()
			}
		}
		before += rec.Waves[0].Started.Sub(start).Seconds()
		after += end.Sub(rec.Waves[len(rec.Waves)-1].Finished).Seconds()
	}
	n := float64(b.N)
	b.ReportMetric(wall/n, "wall-s")
	b.ReportMetric(waves/n, "waves-s")
	b.ReportMetric(100*(wall-waves)/waves, "overhead-%")
	b.ReportMetric(before/n, "before-s")
	b.ReportMetric(between/n, "between-s")
	b.ReportMetric(after/n, "after-s")
}
