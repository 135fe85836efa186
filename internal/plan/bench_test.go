package plan

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router"
)

// generatedFleet builds a valid fleet of n cells (indexes 0…n-1) spread
// over two regions, with a router and a routing table over all of them.
func generatedFleet(tb testing.TB, n int) *fleet.Fleet {
	tb.Helper()
	fsys := fstest.MapFS{}
	fsys["Pulumi.yaml"] = &fstest.MapFile{Data: []byte(`name: cells
runtime: go
stackConfigDir: stacks
config:
  cells:image: registry.example.com/app:1.0.0
  cells:fleetBucket: bench-fleet
  cells:fleetDomain: bench.example.com
  cells:hostedZoneId: Z0123456789ABCDEFGHIJ
  cells:natMode: single
  aws:region: us-east-1
`)}
	var ids []string
	var weights []router.CellWeight
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("cell-%03d", i)
		ids = append(ids, id)
		weights = append(weights, router.CellWeight{Cell: id, Weight: 1})
		fsys["stacks/Pulumi."+id+".yaml"] = &fstest.MapFile{Data: []byte(fmt.Sprintf("config:\n  cells:index: %d\n", i))}
	}
	return loadGenerated(tb, fsys, weights, "waves:\n  - name: canary\n    cells: ["+ids[0]+"]\n  - name: rest\n    cells: ["+strings.Join(ids[1:], ", ")+"]\n")
}

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

// loadGenerated completes a generated fleet — the router's stack file,
// waves.yaml and a routing table placing the cells' weights over 4096
// buckets — and loads it.
func loadGenerated(tb testing.TB, fsys fstest.MapFS, weights []router.CellWeight, waves string) *fleet.Fleet {
	tb.Helper()
	fsys["stacks/Pulumi.router.yaml"] = &fstest.MapFile{Data: []byte("config:\n  aws:region: us-east-1\n")}
	fsys["stacks/waves.yaml"] = &fstest.MapFile{Data: []byte(waves)}
	assign := router.Place(weights, 4096)
	spec := router.Spec{Version: 1, Buckets: 4096}
	for _, w := range weights {
		spec.Cells = append(spec.Cells, router.CellSpec{ID: w.Cell, State: router.CellActive, Weight: 1, Buckets: assign.Ranges(w.Cell)})
	}
	table, err := router.New(spec)
	if err != nil {
		tb.Fatal(err)
	}
	fsys["stacks/routing.json"] = &fstest.MapFile{Data: table.Marshal()}
	f, err := fleet.LoadFS(fsys, "generated")
	if err != nil {
		tb.Fatal(err)
	}
	return f
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
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				paths, _, err := r.Paths(f)
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
