package router

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const seedDir = "../testdata/routing/seed"

// The seeds' example routes every tenant as its contract says: assigned
// tenants to their cell (a migrating one to its current cell, writes
// refused or allowed as its write_mode says), everyone else to
// default_cell; and it is the same table as its cellctl-shaped twin.
func TestSeedExampleRoutesAsItsContractSays(t *testing.T) {
	tb, err := Load(filepath.Join(seedDir, "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	if tb.Version() != 42 || tb.GeneratedAt() != "2026-05-01T12:00:00Z" || tb.Buckets() != DefaultBuckets {
		t.Fatalf("version %d, generated_at %q, buckets %d", tb.Version(), tb.GeneratedAt(), tb.Buckets())
	}
	for _, c := range []struct {
		tenant, cell string
		override     bool
		state        OverrideState
		target       string
		rejects      bool
	}{
		{"acme", "cell-b", true, OverrideActive, "", false},
		{"globex", "cell-a", true, OverrideMigrating, "cell-c", true},
		{"initech", "cell-c", true, OverrideActive, "", false},
		{"umbrella", "cell-b", true, OverrideMigrating, "cell-a", false},
		{"hooli", "cell-a", false, "", "", false},
		{"tenant-0001", "cell-a", false, "", "", false},
	} {
		r := tb.Route(c.tenant)
		if !r.Valid || r.Cell != c.cell || (r.Override != nil) != c.override || r.RejectsWrites() != c.rejects {
			t.Errorf("%s: routed to %s (override %v, rejects writes %v), want %s (%v, %v)", c.tenant, r.Cell, r.Override != nil, r.RejectsWrites(), c.cell, c.override, c.rejects)
			continue
		}
		if r.Override != nil && (r.Override.State != c.state || r.Override.Target != c.target) {
			t.Errorf("%s: state %s target %s, want %s %s", c.tenant, r.Override.State, r.Override.Target, c.state, c.target)
		}
	}
	for _, b := range []int{0, 511, DefaultBuckets - 1} {
		if got := tb.CellOf(b); got != "cell-a" {
			t.Errorf("bucket %d is %s's, want the default cell's", b, got)
		}
	}

	twin, err := Load(filepath.Join(seedDir, "example.cellctl.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !twin.Equal(tb) || twin.Checksum() != tb.Checksum() {
		t.Errorf("the seed's example and its cellctl-shaped twin differ:\n%s\nvs\n%s", tb.Marshal(), twin.Marshal())
	}
	if got, want := string(tb.Marshal()), mustRead(t, filepath.Join(seedDir, "example.cellctl.json")); got != want {
		t.Errorf("Marshal of the seed's example:\n%s\nwant example.cellctl.json:\n%s", got, want)
	}
	if d := Diff(twin, tb); d.Changed || !d.VersionOK || d.MovedBuckets != 0 || len(d.OverridesChanged) != 0 {
		t.Errorf("diff across the two shapes: %+v", d)
	}
}

// A change written in cellctl's shape diffs against the seed's table as it
// would against the same table in either shape.
func TestDiffAcrossTheTwoShapes(t *testing.T) {
	seed, err := Load(filepath.Join(seedDir, "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := StartMigration(seed, "acme", "cell-c")
	if err != nil {
		t.Fatal(err)
	}
	d := Diff(seed, tr.To)
	if !d.Changed || !d.VersionOK || len(d.OverridesChanged) != 1 || d.OverridesChanged[0].Tenant != "acme" {
		t.Fatalf("seed → cellctl shape: %+v", d)
	}
	back, err := Parse("next.json", tr.To.Marshal())
	if err != nil || !back.Equal(tr.To) {
		t.Fatalf("the next table in cellctl's shape: %v", err)
	}
}

// Seed-shaped tables the loader refuses, with the seed's field names.
func TestSeedShapeProblemsNameTheSeedsFields(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(seedDir, "bad_*.json"))
	if len(files) < 3 {
		t.Fatalf("bad seed tables: %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := Load(f)
			if err == nil {
				t.Fatal("accepted")
			}
			want := strings.TrimSpace(mustRead(t, strings.TrimSuffix(f, ".json")+".want"))
			got := strings.ReplaceAll(err.Error(), f+":", filepath.Base(f)+":")
			if strings.TrimSpace(got) != want {
				t.Errorf("problems:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
