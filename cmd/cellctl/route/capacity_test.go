package route

import (
	"bytes"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/routeview"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/exitcode"
)

const capacityFixtures = "../../../testdata/routing/capacity"

func runCapacity(t *testing.T, output string, opts CapacityOptions) (string, error) {
	t.Helper()
	f, stdout, _ := routeFactory(output)
	opts.IO, opts.Fleet, opts.Dir = f.IO, f.Fleet, f.Global.Dir
	var err error
	if opts.View, err = render.Pick(output, routeview.CapacityFormats...); err != nil {
		t.Fatal(err)
	}
	err = capacityRun(&opts)
	return stdout.String(), err
}

func TestCapacityFlags(t *testing.T) {
	f, _, _ := routeFactory(cmdutil.FormatJSON)
	var got *CapacityOptions
	cmd := NewCmdCapacity(f, func(o *CapacityOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--load", "x.csv", "--table", "t.json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.LoadPath != "x.csv" || got.TablePath != "t.json" || got.View == nil {
		t.Fatalf("options = %+v", got)
	}
	for _, tc := range []struct {
		output string
		args   []string
		want   string
	}{
		{cmdutil.FormatMarkdown, nil, `--output "markdown" is not supported here (allowed: table, json)`},
		{cmdutil.FormatTable, []string{"cell-a"}, `unknown command "cell-a" for "capacity"`},
	} {
		f, _, _ := routeFactory(tc.output)
		ran := false
		cmd := NewCmdCapacity(f, func(*CapacityOptions) error { ran = true; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil || ran || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: ran %v, error %v; want %q", tc.output, tc.args, ran, err, tc.want)
		}
	}
}

func TestCapacityTable(t *testing.T) {
	out, err := runCapacity(t, cmdutil.FormatTable, CapacityOptions{TablePath: filepath.Join(capacityFixtures, "table.json")})
	if err != nil {
		t.Fatal(err)
	}
	want := `CELL    STATE   BUCKETS  TENANTS  PINNED  LOAD  CAPACITY  USED
cell-a  active  8        50.0%    0       28    40        70.0%
cell-b  active  8        50.0%    1       44    72*       61.1%

routing table version 7 (../../../testdata/routing/capacity/table.json); load: routing table, 72 units in all
* derived from the weight (twice the cell's weighted share of the load); set "capacity" in routing.json once the cell is load-tested
`
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// An exported load that puts a cell over its capacity is a finding (exit
// 2), reported after the table; the worst cell comes first.
func TestCapacityOverIsAFinding(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "load.csv")
	// Buckets 0-7 are cell-a's (capacity 40).
	if err := os.WriteFile(csv, []byte("bucket,load\n0,30\n5,20\n9,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCapacity(t, cmdutil.FormatJSON, CapacityOptions{TablePath: filepath.Join(capacityFixtures, "table.json"), LoadPath: csv})
	if exitcode.Of(err) != exitcode.Findings || err.Error() != "1 cell(s) over capacity: cell-a carries 50 of 40 (125.0%)" {
		t.Fatalf("exit %d: %v", exitcode.Of(err), err)
	}
	var doc CapacityDoc
	oneJSON(t, out, &doc)
	if doc.Table != filepath.Join(capacityFixtures, "table.json") || doc.LoadSource != csv || doc.TotalLoad != 54 ||
		len(doc.Cells) != 2 || doc.Cells[0].Cell != "cell-a" || !doc.Cells[0].Over || doc.Cells[0].Used != 1.25 ||
		doc.Cells[1].Capacity != 54 || !doc.Cells[1].CapacityDefault || len(doc.Over) != 1 {
		t.Errorf("json: %+v", doc)
	}
}

func TestCapacityRefusesBadLoadFiles(t *testing.T) {
	table := filepath.Join(capacityFixtures, "table.json")
	_, err := runCapacity(t, cmdutil.FormatTable, CapacityOptions{TablePath: table, LoadPath: filepath.Join(capacityFixtures, "bad_load.csv")})
	if exitcode.Of(err) != exitcode.Error || !strings.HasPrefix(err.Error(), "invalid load file "+filepath.Join(capacityFixtures, "bad_load.csv")+":\n5 problems:\n") ||
		!strings.Contains(err.Error(), `bad_load.csv:2: load: must be a whole number of load units from 0 to 1099511627776; got "12.5"`) {
		t.Errorf("exit %d: %v", exitcode.Of(err), err)
	}
	_, err = runCapacity(t, cmdutil.FormatTable, CapacityOptions{TablePath: table, LoadPath: "no-such.csv"})
	if exitcode.Of(err) != exitcode.Error || err.Error() != "cannot read the load file: open no-such.csv: no such file or directory" {
		t.Errorf("exit %d: %v", exitcode.Of(err), err)
	}
}

func TestCapacityOfTheDemoFleet(t *testing.T) {
	stdout, err := runCapacity(t, cmdutil.FormatJSON, CapacityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var doc CapacityDoc
	oneJSON(t, stdout, &doc)
	if doc.Table != "stacks/routing.json" || doc.LoadSource != "uniform" || len(doc.Cells) == 0 {
		t.Fatalf("demo fleet: %+v", doc)
	}
	for _, c := range doc.Cells {
		if c.Over || c.Capacity < 1 || c.Load != int64(c.Buckets) {
			t.Errorf("%s: %+v", c.Cell, c)
		}
	}
}

func TestRouteDiffShowsCapacityChanges(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(capacityFixtures, "table.json")
	data, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Replace(string(data), `"version": 7`, `"version": 8`, 1)
	next = strings.Replace(next, `"capacity": 40, `, ``, 1)
	next = strings.Replace(next, `"12": 30`, `"12": 31`, 1)
	newPath := filepath.Join(dir, "routing.json")
	if err := os.WriteFile(newPath, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := runRoute(t, cmdutil.FormatTable, RouteOptions{TablePath: newPath, DiffPath: old})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "Capacity\nCELL    CAPACITY\ncell-a  40 → derived\n(all)   per-bucket load changed\n") {
		t.Errorf("route --diff:\n%s", stdout)
	}
}
