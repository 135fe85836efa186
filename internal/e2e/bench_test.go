package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/runplan"
	"github.com/cellctl/cellctl/internal/sim"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// writeFleet writes a fleet of n cells (no router) to a fresh directory.
func writeFleet(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("Pulumi.yaml", `name: cells
runtime: go
stackConfigDir: stacks
config:
  cells:image: registry.example.com/app:1.0.0
  cells:fleetBucket: bench-fleet
  cells:fleetDomain: bench.example.com
  cells:hostedZoneId: Z0123456789ABCDEFGHIJ
  cells:natMode: single
  aws:region: us-east-1
`)
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("cell-%02d", i)
		ids = append(ids, id)
		write("stacks/Pulumi."+id+".yaml", fmt.Sprintf("config:\n  cells:index: %d\n", i+1))
	}
	write("stacks/waves.yaml", "waves:\n  - name: all\n    cells: ["+strings.Join(ids, ", ")+"]\n")
	return dir
}

// benchEngine returns an engine over the fleet in dir on the simulated
// cloud, with every quota raised (as an account running many cells would).
func benchEngine(b *testing.B, dir string, parallel int) (*engine.Engine, *fleet.Fleet) {
	b.Helper()
	fl, err := fleet.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	live, err := sim.Open(cloud.SimDir(dir))
	if err != nil {
		b.Fatal(err)
	}
	quotas, err := live.Quotas("us-east-1")
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range quotas {
		if q.Value < 500 {
			if err := live.SetQuota("us-east-1", q.Code, 500); err != nil {
				b.Fatal(err)
			}
		}
	}
	simCloud, err := cloud.New(cloud.Sim, dir, fl.Project)
	if err != nil {
		b.Fatal(err)
	}
	eng, err := engine.New(engine.Options{
		Fleet:               fl,
		Parallel:            parallel,
		AllowDemoPassphrase: true,
		Cloud:               simCloud,
		Pulumi:              pulumiCommand(b),
		Env:                 map[string]string{"PULUMI_HOME": pulumiHom},
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := eng.EnsureOriginVerifySecret(context.Background(), fl.CellIDs()); err != nil {
		b.Fatal(err)
	}
	// The stack files gained the secret: reload so the fleet knows.
	if fl, err = fleet.Load(dir); err != nil {
		b.Fatal(err)
	}
	return eng, fl
}

// upCells runs the plan of `cellctl up` over every cell of the fleet.
func upCells(ctx context.Context, eng *engine.Engine, fl *fleet.Fleet, parallel int) (*runplan.Result, error) {
	return runplan.ForStacks(stackrun.OpUp, fl.CellIDs(), runplan.BuildOptions{Parallel: parallel}).Run(ctx, eng, runplan.Options{})
}

func pulumiCommand(b *testing.B) auto.PulumiCommand {
	b.Helper()
	path, err := engine.FindPulumi(binDir)
	if err != nil {
		b.Fatal(err)
	}
	cmd, err := engine.NewCommand(path)
	if err != nil {
		b.Fatal(err)
	}
	return cmd
}

// BenchmarkFleetUp measures a first `up` of N cells on the simulated cloud
// with 200 ms per create (a rehearsal of real timings), at --parallel 1
// and 4. Parallel efficiency = wall(N=1)·ceil(N/P)/wall(N, P).
func BenchmarkFleetUp(b *testing.B) {
	latency := 200 * time.Millisecond
	if v := os.Getenv("CELLCTL_BENCH_LATENCY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		latency = d
	}
	for _, n := range []int{1, 4, 16} {
		for _, p := range []int{1, 4} {
			if n == 1 && p == 4 {
				continue
			}
			b.Run(fmt.Sprintf("cells=%d/parallel=%d", n, p), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					dir := writeFleet(b, n)
					eng, fl := benchEngine(b, dir, p)
					live, _ := sim.Open(cloud.SimDir(dir))
					if err := live.SetLatency(sim.Latency{Op: "create", Duration: sim.Duration(latency)}); err != nil {
						b.Fatal(err)
					}
					cpu0 := cpuSeconds()
					b.StartTimer()
					res, err := upCells(context.Background(), eng, fl, p)
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					b.ReportMetric((cpuSeconds()-cpu0)/float64(n), "cpu-s/stack")
					var setup, engineTime float64
					for _, s := range res.Stacks {
						setup += s.Timing.Setup + s.Timing.Repair + s.Timing.Finish
						engineTime += s.Timing.Engine
					}
					b.ReportMetric(setup/float64(n), "cellctl-s/stack")
					b.ReportMetric(engineTime/float64(n), "engine-s/stack")
				}
			})
		}
	}
}

// BenchmarkNoChangeUp measures cellctl's fixed cost per stack — workspace,
// stack selection, provider attach, repair check, outputs — against the
// engine's own time, for an up of one deployed cell that changes nothing.
func BenchmarkNoChangeUp(b *testing.B) {
	dir := writeFleet(b, 1)
	eng, fl := benchEngine(b, dir, 1)
	ctx := context.Background()
	if _, err := upCells(ctx, eng, fl, 1); err != nil {
		b.Fatal(err)
	}
	var setup, repair, engineTime, finish float64
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := upCells(ctx, eng, fl, 1)
		if err != nil {
			b.Fatal(err)
		}
		s := res.Stacks[0]
		if s.Changes.Total() != 0 {
			b.Fatalf("no-change up changed: %+v", s.Changes)
		}
		setup += s.Timing.Setup
		repair += s.Timing.Repair
		engineTime += s.Timing.Engine
		finish += s.Timing.Finish
	}
	n := float64(b.N)
	// The CPU of the whole up (this process's and the pulumi CLI runs'):
	// what a run costs on a busy machine, where wall times wander.
	b.ReportMetric((cpuSeconds()-cpu0)/n, "cpu-s")
	b.ReportMetric(setup/n, "setup-s")
	b.ReportMetric(repair/n, "repair-s")
	b.ReportMetric(finish/n, "finish-s")
	b.ReportMetric((setup+repair+finish)/n, "cellctl-s")
	b.ReportMetric(engineTime/n, "engine-s")
}

// cpuSeconds is the CPU time used so far by this process and its waited-for
// children (the pulumi CLI runs): what bounds parallelism on a small machine.
func cpuSeconds() float64 {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}
