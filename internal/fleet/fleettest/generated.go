package fleettest

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router"
)

// Generated describes a fleet of many cells for tests and benchmarks that
// need more than the demo's four.
type Generated struct {
	// Cells is how many cells (cell-000, cell-001, …; index i).
	Cells int
	// Regions spreads the cells: cell i lives in Regions[i % len]; none:
	// every cell in the baseline's us-east-1.
	Regions []string
	// Bucket is the fleet bucket's name ("generated-fleet" when empty).
	Bucket string
	// Baseline is more of Pulumi.yaml's config, as YAML lines indented
	// two spaces; CellConfig is more of cell i's.
	Baseline   string
	CellConfig func(i int, region string) string
	// RouterConfig is more of the router stack's config, as YAML lines
	// indented two spaces.
	RouterConfig string
	// OneWave puts every cell in one wave; otherwise the first cell is a
	// canary wave and the rest one wave.
	OneWave bool
}

// Generate lays the fleet out in memory — single-NAT cells on a shared
// fleet domain, a router in us-east-1 and a routing table placing the
// cells evenly over 4096 buckets — and loads it.
func Generate(tb testing.TB, g Generated) *fleet.Fleet {
	tb.Helper()
	bucket := g.Bucket
	if bucket == "" {
		bucket = "generated-fleet"
	}
	fsys := fstest.MapFS{"Pulumi.yaml": &fstest.MapFile{Data: []byte(`name: cells
runtime: go
stackConfigDir: stacks
config:
  cells:image: registry.example.com/app:1.0.0
  cells:fleetBucket: ` + bucket + `
  cells:fleetDomain: cells.example.com
  cells:hostedZoneId: Z0123456789ABCDEFGHIJ
  cells:natMode: single
  aws:region: us-east-1
` + g.Baseline)}}
	var ids []string
	var weights []router.CellWeight
	for i := range g.Cells {
		id := fmt.Sprintf("cell-%03d", i)
		ids = append(ids, id)
		weights = append(weights, router.CellWeight{Cell: id, Weight: 1})
		cfg := fmt.Sprintf("config:\n  cells:index: %d\n", i)
		region := "us-east-1"
		if len(g.Regions) > 0 {
			region = g.Regions[i%len(g.Regions)]
			cfg += "  aws:region: " + region + "\n"
		}
		if g.CellConfig != nil {
			cfg += g.CellConfig(i, region)
		}
		fsys["stacks/Pulumi."+id+".yaml"] = &fstest.MapFile{Data: []byte(cfg)}
	}
	fsys["stacks/Pulumi.router.yaml"] = &fstest.MapFile{Data: []byte("config:\n  aws:region: us-east-1\n" + g.RouterConfig)}
	waves := "waves:\n  - name: canary\n    cells: [" + ids[0] + "]\n  - name: rest\n    cells: [" + strings.Join(ids[1:], ", ") + "]\n"
	if g.OneWave || len(ids) == 1 {
		waves = "waves:\n  - name: all\n    cells: [" + strings.Join(ids, ", ") + "]\n"
	}
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
