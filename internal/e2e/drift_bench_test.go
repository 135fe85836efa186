package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/drift"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/sim"
)

// engineCloud is the drift audit's CloudReader over the engine (the same
// adaptation cmd/cellctl/drift makes).
type engineCloud struct{ e *engine.Engine }

func (c engineCloud) CloudDrift(ctx context.Context, stack string) (*drift.CellCloud, error) {
	res, err := c.e.RefreshDrift(ctx, stack)
	if err != nil {
		return nil, err
	}
	out := &drift.CellCloud{}
	for _, r := range res {
		cr := drift.CloudResource{URN: r.URN, Type: r.Type, Name: r.Name, State: r.State, Reason: r.Reason}
		for _, ch := range r.Changes {
			cr.Changes = append(cr.Changes, drift.PropertyChange{Path: ch.Path, Old: ch.Old, New: ch.New})
		}
		out.Resources = append(out.Resources, cr)
	}
	return out, nil
}

// driftBenchFleet writes a fleet of n cells on the demo fleet's baseline
// (Pulumi.yaml of the repository: single NAT, each cell its own
// certificate), no router.
func driftBenchFleet(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	project, err := os.ReadFile(filepath.Join(repoRoot, "Pulumi.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	write := func(name string, data []byte) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("Pulumi.yaml", project)
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("cell-%02d", i)
		ids = append(ids, id)
		write("stacks/Pulumi."+id+".yaml", []byte(fmt.Sprintf("config:\n  cells:index: %d\n", i+1)))
	}
	write("stacks/waves.yaml", []byte("waves:\n  - name: all\n    cells: ["+strings.Join(ids, ", ")+"]\n"))
	return dir
}

// BenchmarkDriftCloud measures `drift --cloud` over 16 deployed cells on
// the simulated cloud with a fixed latency per read
// (CELLCTL_BENCH_READ_LATENCY, default 200ms), against one cell alone:
// parallel efficiency = wall(1 cell)·⌈N/P⌉ / wall(N cells, P).
func BenchmarkDriftCloud(b *testing.B) {
	latency := 200 * time.Millisecond
	if v := os.Getenv("CELLCTL_BENCH_READ_LATENCY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		latency = d
	}
	const n = 16
	dir := driftBenchFleet(b, n)
	eng, fl := benchEngine(b, dir, 4)
	ctx := context.Background()
	var live *sim.Cloud
	var err error
	if _, err := upCells(ctx, eng, fl, 4); err != nil {
		b.Fatal(err)
	}
	live, err = sim.Open(cloud.SimDir(dir))
	if err != nil {
		b.Fatal(err)
	}
	if err := live.SetLatency(sim.Latency{Op: sim.OpRead, Duration: sim.Duration(latency)}); err != nil {
		b.Fatal(err)
	}
	reader := engineCloud{eng}
	audit := func(b *testing.B, ids []string, p int) {
		part := drift.Cloud(ctx, ids, reader, nil, p)
		if len(part.Findings) != 0 {
			b.Fatalf("a freshly deployed fleet has cloud findings: %+v", part.Findings[0])
		}
	}
	var one float64
	b.Run("cells=1", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			audit(b, fl.CellIDs()[:1], 1)
		}
		one = time.Since(start).Seconds() / float64(b.N)
	})
	for _, p := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("cells=%d/parallel=%d", n, p), func(b *testing.B) {
			cpu0 := cpuSeconds()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				audit(b, fl.CellIDs(), p)
			}
			wall := time.Since(start).Seconds() / float64(b.N)
			if one > 0 {
				b.ReportMetric(one*float64((n+p-1)/p)/wall, "efficiency")
			}
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N*n), "cpu-s/cell")
		})
	}
}
