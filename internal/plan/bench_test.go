package plan

import (
	"context"
	"fmt"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
)

// BenchmarkPlan renders a whole generated fleet offline (every cell, the
// router and the isolation audit) — the cost of `cellctl plan`.
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{64, 256} {
		f := generatedFleet(b, n)
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, err := Render(context.Background(), f, Options{Now: testNow, Parallel: 4})
				if err != nil {
					b.Fatal(err)
				}
				if !r.Isolation.OK {
					b.Fatal(r.Isolation.Violations)
				}
			}
		})
	}
}

// BenchmarkLoadFleet measures reading and validating a generated fleet.
func BenchmarkLoadFleet(b *testing.B) {
	for _, n := range []int{64, 256} {
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				generatedFleet(b, n)
			}
		})
	}
}

// BenchmarkPaths is what the access paths add to `cellctl plan` on a
// whole generated fleet: reading the render into the access model, every
// required path and the isolation claim's forbidden paths (all cells
// against all cells). The render itself is BenchmarkPlan.
func BenchmarkPaths(b *testing.B) {
	for _, n := range []int{64, 256} {
		f := generatedFleet(b, n)
		r, err := Render(context.Background(), f, Options{Parallel: 4})
		if err != nil {
			b.Fatal(err)
		}
		decl := sharedOf(b, f)
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				paths, _, err := r.Paths(f, decl)
				if err != nil {
					b.Fatal(err)
				}
				if fs := paths.Findings(); len(fs) > 0 {
					b.Fatalf("%d findings, first: %s: %s", len(fs), fs[0].Describe(), fs[0].Reason)
				}
				allowed, _, denied, forbidden := paths.Counts()
				b.ReportMetric(float64(allowed), "required")
				b.ReportMetric(float64(forbidden), "forbidden")
				_ = denied
			}
		})
	}
}

// BenchmarkNetworkPaths is what the network paths add to `cellctl plan`
// on a whole generated fleet: reading every stack's network into the
// model, each cell's required paths, and the forbidden ones (every
// ordered pair of cells, and each cell's exposures). The render itself is
// BenchmarkPlan.
func BenchmarkNetworkPaths(b *testing.B) {
	for _, n := range []int{64, 256} {
		f := generatedFleet(b, n)
		r, err := Render(context.Background(), f, Options{Parallel: 4})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				paths, err := r.NetworkPaths(f)
				if err != nil {
					b.Fatal(err)
				}
				if fs := paths.Findings(); len(fs) > 0 {
					b.Fatalf("%d findings, first: %s: %s", len(fs), fs[0].Path, fs[0].Reason)
				}
				_, required, _, forbidden := paths.Counts()
				b.ReportMetric(float64(required), "required")
				b.ReportMetric(float64(forbidden), "forbidden")
			}
		})
	}
}

// generatedFleet is a valid fleet of n cells in us-east-1, a canary and
// the rest.
func generatedFleet(tb testing.TB, n int) *fleet.Fleet {
	return fleettest.Generate(tb, fleettest.Generated{Cells: n})
}
