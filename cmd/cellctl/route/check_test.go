package route

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/exitcode"
)

var updateCheck = flag.Bool("update", false, "rewrite testdata/routing/check/*.want")

// checkDir holds the tables of TestRouteCheck, paths relative to the
// fleet (the repository root) as an operator would type them.
const checkDir = "testdata/routing/check"

func checkPath(name string) string { return filepath.Join("../../..", checkDir, name) }

// TestRouteCheck: each bad table of testdata/routing/check fails with
// exactly the messages in its .want (file:line: field: …), exits 1 and
// writes nothing; good.json passes against the demo fleet.
func TestRouteCheck(t *testing.T) {
	files, err := filepath.Glob(checkPath("*.json"))
	if err != nil || len(files) < 3 {
		t.Fatalf("check tables: %v %v", files, err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			before, _ := os.ReadFile(f)
			stdout, _, err := runRoute(t, "table", RouteOptions{CheckPath: f})
			if after, _ := os.ReadFile(f); string(after) != string(before) {
				t.Fatal("route --check changed the file it checked")
			}
			if name == "good.json" {
				if err != nil {
					t.Fatalf("good.json: %v", err)
				}
				if !strings.Contains(stdout, "routing table version 7 is valid (2 cells, 1 overrides)") || !strings.Contains(stdout, "the fleet's cells") {
					t.Errorf("stdout: %s", stdout)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %s:\n%s", name, stdout)
			}
			if code := exitcode.Of(err); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			got := strings.ReplaceAll(err.Error(), filepath.Join("../../..", checkDir), checkDir) + "\n"
			wantFile := strings.TrimSuffix(f, ".json") + ".want"
			if *updateCheck {
				if err := os.WriteFile(wantFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestRouteCheckMalformedTables: every malformed table of
// testdata/routing/bad fails, and every message names the file and a
// line (file:line: …).
func TestRouteCheckMalformedTables(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/routing/bad/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("bad tables: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, _, err := runRoute(t, "table", RouteOptions{CheckPath: f})
			if err == nil {
				t.Fatal("accepted")
			}
			lineRe := regexp.MustCompile("^" + regexp.QuoteMeta(f) + `:[0-9]+: `)
			for _, line := range strings.Split(err.Error(), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasSuffix(line, "problems:") || strings.HasPrefix(line, "and ") {
					continue
				}
				if !lineRe.MatchString(line) {
					t.Errorf("message without file:line: %q", line)
				}
			}
		})
	}
}

// TestRouteCheckJSON: -o json is one document saying valid or not, with
// every error.
func TestRouteCheckJSON(t *testing.T) {
	stdout, _, err := runRoute(t, "json", RouteOptions{CheckPath: checkPath("overlap_and_bad_override.json")})
	if err == nil {
		t.Fatal("accepted")
	}
	var r CheckReport
	oneJSON(t, stdout, &r)
	if r.Valid || len(r.Errors) < 2 || !r.Fleet {
		t.Errorf("report: %+v", r)
	}
	stdout, _, err = runRoute(t, "json", RouteOptions{CheckPath: checkPath("good.json")})
	if err != nil {
		t.Fatal(err)
	}
	r = CheckReport{}
	oneJSON(t, stdout, &r)
	if !r.Valid || r.Version != 7 || r.Cells != 2 {
		t.Errorf("report: %+v", r)
	}
}

// TestRouteCheckFlags: --check takes no tenants, --diff or --table.
func TestRouteCheckFlags(t *testing.T) {
	f, _, _ := routeFactory("table")
	cmd := NewCmdRoute(f, func(*RouteOptions) error { return nil })
	cmd.SetArgs([]string{"--check", "x.json", "acme"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--check FILE validates one table file") {
		t.Errorf("--check with a tenant: %v", err)
	}
	var got *RouteOptions
	cmd = NewCmdRoute(f, func(o *RouteOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--check", "x.json"})
	if err := cmd.Execute(); err != nil || got == nil || got.CheckPath != "x.json" {
		t.Errorf("--check x.json: %v %+v", err, got)
	}
}

// A table in the seeds' shape passes --check against the demo fleet, and
// the report says what its function package costs: the image's size, the
// package's, and the memory the table needs against the function's.
func TestRouteCheckSeedShapeReportsImageSizeAndMemory(t *testing.T) {
	seed := filepath.Join("../../..", "testdata", "routing", "seed", "example.json")
	stdout, _, err := runRoute(t, "json", RouteOptions{CheckPath: seed})
	if err != nil {
		t.Fatal(err)
	}
	var r CheckReport
	oneJSON(t, stdout, &r)
	if !r.Valid || !r.Fleet || r.Version != 42 || r.Overrides != 4 || r.GeneratedAt != "2026-05-01T12:00:00Z" || !strings.HasPrefix(r.Checksum, "sha256:") {
		t.Fatalf("report: %+v", r)
	}
	if r.ImageBytes < 2048 || r.PackageBytes <= r.ImageBytes || r.MemoryMB != 128 || r.NeededMemoryMB < 50 || r.NeededMemoryMB > r.MemoryMB {
		t.Errorf("costs: %+v", r)
	}
	stdout, _, err = runRoute(t, "table", RouteOptions{CheckPath: seed})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"routing table version 42 is valid (3 cells, 4 overrides)", "routing image: ", "edge memory:   needs ", "the function has 128 MB", "generated at:  2026-05-01T12:00:00Z"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--check output lacks %q:\n%s", want, stdout)
		}
	}
}

// route --diff compares a table in the seeds' shape with one in cellctl's:
// the same routing is no change; a migration started on it shows as one.
func TestRouteDiffAcrossTheTwoShapes(t *testing.T) {
	seed := filepath.Join("../../..", "testdata", "routing", "seed", "example.json")
	twin := filepath.Join("../../..", "testdata", "routing", "seed", "example.cellctl.json")
	stdout, _, err := runRoute(t, "json", RouteOptions{DiffPath: seed, TablePath: twin})
	if err != nil {
		t.Fatal(err)
	}
	var d RouteDiff
	oneJSON(t, stdout, &d)
	if d.Changed || !d.VersionOK || d.MovedBuckets != 0 {
		t.Errorf("seed → its cellctl twin: %+v", d.DiffReport)
	}
	stdout, _, err = runRoute(t, "json", RouteOptions{DiffPath: twin, TablePath: seed, Tenants: []string{"globex", "hooli"}})
	if err != nil {
		t.Fatal(err)
	}
	oneJSON(t, stdout, &d)
	if len(d.Tenants) != 2 || d.Tenants[0].From.Cell != "cell-a" || d.Tenants[0].To.State != "migrating" || d.Tenants[1].To.Cell != "cell-a" {
		t.Errorf("tenants across the shapes: %+v", d.Tenants)
	}
}
