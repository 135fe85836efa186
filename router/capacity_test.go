package router

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/diag"
)

const capacityDir = "../testdata/routing/capacity"

func capacityTable(t *testing.T) *Table {
	t.Helper()
	tb, err := Load(filepath.Join(capacityDir, "table.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func problems(err error) []string {
	var out []string
	for _, e := range diag.Errors(err) {
		out = append(out, e.Error())
	}
	return out
}

func checkProblems(t *testing.T, name string, err error, want []string) {
	t.Helper()
	got := problems(err)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: problems:\n  %s\nwant:\n  %s", name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestParseCapacityAndLoad(t *testing.T) {
	tb := capacityTable(t)
	if c, _ := tb.Cell("cell-a"); c.Capacity != 40 {
		t.Errorf("cell-a capacity %d, want 40", c.Capacity)
	}
	if c, _ := tb.Cell("cell-b"); c.Capacity != 0 {
		t.Errorf("cell-b capacity %d, want 0 (derived)", c.Capacity)
	}
	l := tb.TableLoad()
	want := []int64{5, 5, 5, 5, 2, 2, 2, 2, 2, 2, 2, 2, 30, 2, 2, 2}
	for b, v := range want {
		if l.Buckets[b] != v {
			t.Errorf("bucket %d load %d, want %d", b, l.Buckets[b], v)
		}
	}
	data, _ := os.ReadFile(filepath.Join(capacityDir, "table.json"))
	if got := tb.Marshal(); !bytes.Equal(got, data) {
		t.Errorf("Marshal is not the canonical file:\n%s", got)
	}
}

func TestParseRejectsBadCapacityAndLoad(t *testing.T) {
	_, err := Load(filepath.Join(capacityDir, "bad_capacity.json"))
	f := filepath.Join(capacityDir, "bad_capacity.json")
	capRule := "must be an integer from 1 to 9007199254740991: the load units the cell is tested to carry (omit it to derive it from the weight); got "
	loadRule := "must be an integer from 0 to 1099511627776 (load units per bucket); got "
	checkProblems(t, "bad_capacity.json", err, []string{
		f + ":5: cells.cell-a.capacity: " + capRule + "0",
		f + `:6: cells.cell-b.capacity: ` + capRule + `the string "lots"`,
		f + ":7: cells.cell-c.capacity: " + capRule + "9007199254740992",
		f + ":8: cells.cell-d.capacity: " + capRule + "a number (1.5)",
		f + ":11: load.default: " + loadRule + "-1",
		f + ":14: load.buckets.2-5: bucket 2 already has a load (load.buckets.0-3); give each bucket one load",
		f + `:15: load.buckets.15-16: "15-16" is outside the table; buckets are 0-15 (buckets: 16)`,
		f + ":16: load.buckets.7: " + loadRule + "2000000000000",
		f + `:17: load.buckets.9-x: "9-x" is not a bucket range; use "N" or "N-M"`,
		f + `:18: load.buckets.10: ` + loadRule + `the string "hot"`,
		f + `:20: load.unit: unknown key; allowed keys: "default" or "buckets"`,
	})
	f = filepath.Join(capacityDir, "bad_load_kind.json")
	_, err = Load(f)
	checkProblems(t, "bad_load_kind.json", err, []string{
		f + `:7: load: must be an object with "default" and "buckets"; got an array`,
	})
	// A Spec built in code is checked the same way, without lines.
	s := capacityTable(t).Spec()
	s.Cells[0].Capacity = -3
	s.Load.Default = MaxBucketLoad + 1
	_, err = New(s)
	checkProblems(t, "New", err, []string{
		"routing table: cells.cell-a.capacity: " + capRule + "-3",
		"routing table: load.default: " + loadRule + "1099511627777",
	})
	// Overlapping load ranges cost their length: a file of copies of one
	// huge range is cut short.
	s = capacityTable(t).Spec()
	s.Load = &LoadSpec{Default: 1}
	for i := 0; i < 6; i++ {
		s.Load.Buckets = append(s.Load.Buckets, BucketLoad{Range{0, 15}, 3})
	}
	_, err = New(s)
	dup := "routing table: load.buckets.0-15: bucket 0 already has a load (load.buckets.0-15); give each bucket one load"
	checkProblems(t, "overlaps", err, []string{dup, dup, dup,
		"routing table: load.buckets.0-15: too many overlapping bucket ranges; fix the ranges reported above and check again"})
}

func TestLoadIsCanonical(t *testing.T) {
	s := capacityTable(t).Spec()
	s.Load = &LoadSpec{Default: 2, Buckets: []BucketLoad{
		{Range{12, 12}, 30}, {Range{0, 1}, 5}, {Range{2, 3}, 5}, {Range{5, 6}, 2},
	}}
	tb := mustNew(t, s)
	if !tb.Equal(capacityTable(t)) {
		t.Errorf("equivalent loads differ:\n%s", tb.Marshal())
	}
	// A uniform load of one unit is the default and is not written.
	s.Load = &LoadSpec{Default: 1, Buckets: []BucketLoad{{Range{3, 4}, 1}}}
	tb = mustNew(t, s)
	if tb.Spec().Load != nil || strings.Contains(string(tb.Marshal()), `"load"`) {
		t.Errorf("a uniform load of 1 is written:\n%s", tb.Marshal())
	}
	// Changing the load or a capacity is a change a reviewer sees.
	old := capacityTable(t)
	s = old.Spec()
	s.Version++
	s.Cells[0].Capacity = 50
	s.Load.Buckets[1].Load = 31
	d := Diff(old, mustNew(t, s))
	if !d.Changed || !d.LoadChanged || len(d.CapacitiesChanged) != 1 || d.CapacitiesChanged[0] != (CapacityChange{Cell: "cell-a", From: 40, To: 50}) || d.MovedBuckets != 0 {
		t.Errorf("diff: changed %v load %v capacities %+v moved %d", d.Changed, d.LoadChanged, d.CapacitiesChanged, d.MovedBuckets)
	}
	s.Version--
	if err := CheckSuccessor(old, mustNew(t, s)); err == nil || err.Error() != "version: the table changed but version is still 7; set it to 8" {
		t.Errorf("a capacity change without a version bump: %v", err)
	}
}

func TestCapacityReport(t *testing.T) {
	tb := capacityTable(t)
	r, err := Capacity(tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	// cell-a: 4·5 + 4·2 = 28 of 40 (70%); cell-b: 4·2 + 30 + 3·2 = 44 of
	// the default ⌈2·72·1/2⌉ = 72 (61%); worst first.
	if r.TotalLoad != 72 || r.LoadSource != "routing table" || len(r.Over) != 0 || len(r.Cells) != 2 {
		t.Fatalf("report: %+v", r)
	}
	a, b := r.Cells[0], r.Cells[1]
	if a.Cell != "cell-a" || a.Load != 28 || a.Capacity != 40 || a.CapacityDefault || a.Used != 0.7 || a.Buckets != 8 || a.TenantShare != 0.5 || a.Pinned != 0 {
		t.Errorf("cell-a: %+v", a)
	}
	if b.Cell != "cell-b" || b.Load != 44 || b.Capacity != 72 || !b.CapacityDefault || b.Pinned != 1 || b.Over {
		t.Errorf("cell-b: %+v", b)
	}
	if err := r.OverCapacityError(); err != nil {
		t.Errorf("no cell is over: %v", err)
	}

	data, _ := os.ReadFile(filepath.Join(capacityDir, "load_buckets.csv"))
	l, err := FoldLoad(tb, "load_buckets.csv", data)
	if err != nil {
		t.Fatal(err)
	}
	// Bucket 0: 10 (cell-a); bucket 12: 55 (cell-b). Default capacity
	// of cell-b: ⌈2·65/2⌉ = 65; make cell-a small to put it over.
	s := tb.Spec()
	s.Cells[0].Capacity = 8
	r, err = Capacity(mustNew(t, s), l)
	if err != nil {
		t.Fatal(err)
	}
	if r.LoadSource != "load_buckets.csv" || r.TotalLoad != 65 || r.Cells[0].Cell != "cell-a" || !r.Cells[0].Over || r.Cells[0].Used != 1.25 || len(r.Over) != 1 {
		t.Errorf("report: %+v", r)
	}
	if err := r.OverCapacityError(); err == nil || err.Error() != "1 cell(s) over capacity: cell-a carries 10 of 8 (125.0%)" {
		t.Errorf("over capacity: %v", err)
	}
}

func TestFoldLoad(t *testing.T) {
	tb := capacityTable(t)
	data, _ := os.ReadFile(filepath.Join(capacityDir, "load_tenants.csv"))
	l, err := FoldLoad(tb, "load_tenants.csv", data)
	if err != nil {
		t.Fatal(err)
	}
	// acme has an override: its load is its own, counted in cell-b.
	// globex's two lines add up in its bucket.
	if l.Pinned["acme"] != 100 || len(l.Pinned) != 1 {
		t.Errorf("pinned = %v", l.Pinned)
	}
	if got := l.Buckets[BucketOf("globex", 16)]; got != 10 {
		t.Errorf("globex's bucket carries %d, want 10", got)
	}
	if l.Total() != 110 || l.Source != "load_tenants.csv" {
		t.Errorf("total %d from %s", l.Total(), l.Source)
	}
	// A spreadsheet's BOM and a header in capitals are fine.
	l, err = FoldLoad(tb, "x.csv", []byte("\xef\xbb\xbfBucket,Load\n3,7\n"))
	if err != nil || l.Buckets[3] != 7 {
		t.Errorf("BOM/capitals: %v", err)
	}

	data, _ = os.ReadFile(filepath.Join(capacityDir, "bad_load.csv"))
	_, err = FoldLoad(tb, "bad_load.csv", data)
	rule := "load: must be a whole number of load units from 0 to 1099511627776; got "
	checkProblems(t, "bad_load.csv", err, []string{
		`bad_load.csv:2: ` + rule + `"12.5"`,
		`bad_load.csv:3: tenant: tenant id "a b" contains U+0020 (space) at byte 1; allowed: 1-128 bytes of UTF-8 without whitespace, control or invisible formatting characters`,
		`bad_load.csv:4: ` + rule + `"-1"`,
		`bad_load.csv:5: expected 2 fields (tenant,load), got 1`,
		`bad_load.csv:6: ` + rule + `"99999999999999999"`,
	})
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "", `x.csv:1: the file is empty; expected the header "tenant,load" or "bucket,load" and one line per tenant or bucket`},
		{"no header", "acme,5\n", `x.csv:1: the first line must be the header "tenant,load" or "bucket,load"; got "acme,5"`},
		{"bad bucket", "bucket,load\n16,1\n", `x.csv:2: bucket: must be a bucket number from 0 to 15; got "16"`},
		{"malformed", "bucket,load\n\"3,1\n", `x.csv:2: malformed CSV: extraneous or missing " in quoted-field`},
		{"sum too large", "bucket,load\n1,1099511627776\n2,1099511627776\n3,1099511627776\n4,1099511627776\n5,1099511627776\n6,1099511627776\n7,1099511627776\n8,1099511627776\n9,1099511627776\n10,1099511627776\n11,1099511627776\n12,1099511627776\n13,1099511627776\n14,1099511627776\n15,1099511627776\n0,1099511627776\n0,1\n",
			`x.csv:18: load: the loads add up to more than 17592186044416; use a coarser unit`},
	} {
		_, err := FoldLoad(tb, "x.csv", []byte(tc.data))
		checkProblems(t, tc.name, err, []string{tc.want})
	}
	var many strings.Builder
	many.WriteString("bucket,load\n")
	for i := 0; i < 30; i++ {
		many.WriteString("x,1\n")
	}
	_, err = FoldLoad(tb, "x.csv", []byte(many.String()))
	if p := problems(err); len(p) != 21 || p[20] != "x.csv:22: too many problems; fix the ones above and check again" {
		t.Errorf("%d problems, last %q", len(p), p[len(p)-1])
	}
}

// FuzzFoldLoad: any load file is folded or refused with positioned
// problems, never a panic, and a folded load fits the table.
func FuzzFoldLoad(f *testing.F) {
	for _, name := range []string{"load_tenants.csv", "load_buckets.csv", "bad_load.csv"} {
		data, err := os.ReadFile(filepath.Join(capacityDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("bucket,load\n\"3,1\n"))
	tb, err := Load(filepath.Join(capacityDir, "table.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := FoldLoad(tb, "fuzz.csv", data)
		if err != nil {
			if len(problems(err)) == 0 {
				t.Fatalf("an error without problems: %v", err)
			}
			return
		}
		if len(l.Buckets) != tb.Buckets() {
			t.Fatalf("%d buckets", len(l.Buckets))
		}
		for _, v := range l.Buckets {
			if v < 0 {
				t.Fatalf("negative load %d", v)
			}
		}
		if _, err := Capacity(tb, l); err != nil {
			t.Fatalf("a folded load does not fit its table: %v", err)
		}
	})
}

// FuzzParseCapacity: tables with capacities and loads parse or are
// refused with positioned problems, and round-trip through Marshal.
func FuzzParseCapacity(f *testing.F) {
	for _, name := range []string{"table.json", "bad_capacity.json", "bad_load_kind.json"} {
		data, err := os.ReadFile(filepath.Join(capacityDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := Parse("fuzz.json", data)
		if err != nil {
			for _, e := range diag.Errors(err) {
				if _, ok := e.(*diag.Error); !ok {
					t.Fatalf("problem %q is a %T, want *diag.Error", e, e)
				}
			}
			return
		}
		out := tb.Marshal()
		back, err := Parse("fuzz.json", out)
		if err != nil {
			t.Fatalf("accepted input re-marshals to a table that does not parse: %v\n%s", err, out)
		}
		if !back.Equal(tb) || !bytes.Equal(back.Marshal(), out) {
			t.Fatalf("round trip differs:\n%s\nvs\n%s", out, back.Marshal())
		}
		if _, err := Capacity(tb, nil); err != nil {
			t.Fatalf("capacity of a valid table: %v", err)
		}
	})
}

// TestFoldLoadUsesTheRoutersHash folds random tenants and checks each
// load landed where the router sends the tenant: its bucket by FNV-1a, or
// its override's cell.
func TestFoldLoadUsesTheRoutersHash(t *testing.T) {
	tb := demoTable(t) // acme pinned to cell-b, globex migrating from cell-a
	var csv strings.Builder
	csv.WriteString("tenant,load\n")
	want := make([]int64, tb.Buckets())
	perCell := map[string]int64{}
	for i := 0; i < 2000; i++ {
		tenant := fmt.Sprintf("t-%d", i*7919)
		csv.WriteString(tenant + "," + strconv.Itoa(i%13) + "\n")
		want[Hash(tenant)%uint64(tb.Buckets())] += int64(i % 13)
		perCell[tb.Route(tenant).Cell] += int64(i % 13)
	}
	csv.WriteString("acme,500\nglobex,70\n")
	perCell["cell-b"] += 500
	perCell["cell-a"] += 70
	l, err := FoldLoad(tb, "x.csv", []byte(csv.String()))
	if err != nil {
		t.Fatal(err)
	}
	for b, v := range want {
		if l.Buckets[b] != v {
			t.Fatalf("bucket %d carries %d, want %d", b, l.Buckets[b], v)
		}
	}
	r, err := Capacity(tb, l)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Cells {
		if c.Load != perCell[c.Cell] {
			t.Errorf("%s carries %d, the tenants it serves %d", c.Cell, c.Load, perCell[c.Cell])
		}
	}
}
