package router

import (
	"testing"
)

// refusal is one call that must be refused with exactly this message.
type refusal struct {
	name string
	call func() error
	want string
}

func checkRefusals(t *testing.T, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		err := tc.call()
		if err == nil {
			t.Errorf("%s: accepted, want %q", tc.name, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%s:\n got: %s\nwant: %s", tc.name, err, tc.want)
		}
	}
}

func errOf[T any](_ T, err error) error { return err }

// withCapacity is the demo table with every cell's capacity set.
func withCapacity(t *testing.T, capacity int64, overrides bool) *Table {
	s := demoTable(t).Spec()
	for i := range s.Cells {
		s.Cells[i].Capacity = capacity
	}
	if !overrides {
		s.Overrides = nil
	}
	return mustNew(t, s)
}

func TestDrainRefusals(t *testing.T) {
	demo := demoTable(t) // a 0-255, b 256-511, c 512-767, d 768-1023; acme pinned to b; globex a → c
	tight := withCapacity(t, 300, false)
	one := tableFrom(t, []CellWeight{{"cell-a", 1}}, 8)

	// Only cell-b active: cell-a draining with buckets, cell-c drained.
	s := tableFrom(t, []CellWeight{{"cell-a", 1}, {"cell-b", 1}, {"cell-c", 1}}, 9).Spec()
	s.Cells[0].State = CellDraining
	s.Cells[1].Buckets = append(s.Cells[1].Buckets, s.Cells[2].Buckets...).Normalize()
	s.Cells[2].Buckets, s.Cells[2].State = nil, CellDrained
	lonely := mustNew(t, s)

	// Loads that fit in total but not bucket by bucket: cell-d's bucket
	// 768 carries 100, every other cell has 60 spare.
	lumpy := withCapacity(t, 316, false)
	lumpyLoad := lumpy.TableLoad()
	for b := 768; b < 1024; b++ {
		lumpyLoad.Buckets[b] = 0
	}
	lumpyLoad.Buckets[768] = 100

	// A pinned tenant too heavy for any cell's room.
	pinnedLoad := withCapacity(t, 400, true).TableLoad()
	pinnedLoad.Pinned = map[string]int64{"acme": 1000}
	spec := withCapacity(t, 400, true).Spec()
	spec.Overrides = spec.Overrides[:1] // acme pinned to cell-b only
	heavyPin := mustNew(t, spec)

	many := demo.Spec()
	for _, tenant := range []string{"t1", "t2", "t3", "t4", "t5", "t6"} {
		many.Overrides = append(many.Overrides, Override{Tenant: tenant, Cell: "cell-d", State: OverrideActive})
	}
	manyPins := mustNew(t, many)

	checkRefusals(t, []refusal{
		{"unknown cell", func() error { return errOf(DrainCell(demo, "cell-x", DrainOptions{})) },
			`cannot drain "cell-x": no such cell in the routing table (cells: "cell-a", "cell-b", "cell-c" or "cell-d")`},
		{"already drained", func() error { return errOf(DrainCell(lonely, "cell-c", DrainOptions{})) },
			`cell "cell-c" is already drained`},
		{"pinned tenant", func() error { return errOf(DrainCell(demo, "cell-b", DrainOptions{})) },
			`cannot drain "cell-b": tenant "acme" is pinned to it; move the pins with the drain (--move-pinned) or migrate the tenants first`},
		{"many pinned tenants", func() error { return errOf(DrainCell(manyPins, "cell-d", DrainOptions{})) },
			`cannot drain "cell-d": 6 tenants are pinned to it ("t1", "t2", "t3", "t4", "t5" and 1 more); move the pins with the drain (--move-pinned) or migrate the tenants first`},
		{"migration target", func() error { return errOf(DrainCell(demo, "cell-c", DrainOptions{Pinned: MovePinned})) },
			`cannot drain "cell-c": tenant "globex" is migrating to it; finish or abort that migration first`},
		{"migration source", func() error { return errOf(DrainCell(demo, "cell-a", DrainOptions{})) },
			`cannot drain "cell-a": tenant "globex" is migrating from it to "cell-c"; finish or abort that migration first`},
		{"migration source, moving pins", func() error { return errOf(DrainCell(demo, "cell-a", DrainOptions{Pinned: MovePinned})) },
			`cannot drain "cell-a": tenant "globex" is migrating from it to "cell-c"; finish or abort that migration first`},
		{"last active cell", func() error { return errOf(DrainCell(one, "cell-a", DrainOptions{})) },
			`cannot drain "cell-a": it is the last active cell; add a cell (cellctl cell add) or undrain one first`},
		{"last active cell, another draining", func() error { return errOf(DrainCell(lonely, "cell-b", DrainOptions{})) },
			`cannot drain "cell-b": it is the last active cell; add a cell (cellctl cell add) or undrain one first`},
		{"no active cell for a draining cell", func() error {
			s := lonely.Spec()
			s.Cells[1].State = CellDraining
			return errOf(DrainCell(mustNew(t, s), "cell-a", DrainOptions{}))
		}, `cannot drain "cell-a": no active cell can take its 3 buckets`},
		{"already draining with nothing left", func() error {
			tr, err := DrainCell(withCapacity(t, 512, false), "cell-d", DrainOptions{})
			if err != nil {
				return err
			}
			return errOf(DrainCell(tr.To, "cell-d", DrainOptions{}))
		}, `cannot drain "cell-d": it is already draining and owns no buckets; once the router serves this table, mark it drained`},
		{"does not fit", func() error { return errOf(DrainCell(tight, "cell-d", DrainOptions{})) },
			`cannot drain "cell-d": its 256 buckets carry 256 load units, but the other active cells have only 132 spare: cell-a 44 (load 256 of capacity 300), cell-b 44 (load 256 of capacity 300), cell-c 44 (load 256 of capacity 300); add capacity (cellctl cell add, or raise a cell's capacity) first`},
		{"does not fit with pinned load", func() error {
			return errOf(DrainCell(heavyPin, "cell-b", DrainOptions{Pinned: MovePinned, Load: pinnedLoad}))
		}, `cannot drain "cell-b": its 256 buckets carry 256 load units and its pinned tenants 1000, but the other active cells have only 432 spare: cell-a 144 (load 256 of capacity 400), cell-c 144 (load 256 of capacity 400), cell-d 144 (load 256 of capacity 400); add capacity (cellctl cell add, or raise a cell's capacity) first`},
		{"a bucket fits nowhere", func() error { return errOf(DrainCell(lumpy, "cell-d", DrainOptions{Load: lumpyLoad})) },
			`cannot drain "cell-d": bucket 768 carries 100 load units and fits in no active cell: the most room is 60, in cell-a`},
		{"a pinned tenant fits nowhere", func() error {
			l := heavyPin.TableLoad()
			l.Pinned = map[string]int64{"acme": 100}
			return errOf(DrainCell(heavyPin, "cell-b", DrainOptions{Pinned: MovePinned, Load: l}))
		}, `cannot drain "cell-b": pinned tenant "acme" carries 100 load units and no active cell has room for it`},
		{"a load for another table", func() error {
			return errOf(DrainCell(demo, "cell-d", DrainOptions{Load: &LoadFigures{Source: "x.csv", Buckets: make([]int64, 8)}}))
		}, `cannot drain "cell-d": the load (x.csv) has 8 buckets but the routing table has 1024`},
		{"a pinned load for a tenant without override", func() error {
			l := demo.TableLoad()
			l.Source, l.Pinned = "x.csv", map[string]int64{"initech": 5}
			return errOf(DrainCell(demo, "cell-d", DrainOptions{Load: l}))
		}, `cannot drain "cell-d": the load (x.csv) counts tenant "initech" as pinned, but the routing table has no override for it`},
	})
}

// A drain whose buckets carry no load succeeds even when every receiver
// is already above its capacity: nothing is added to them.
func TestDrainOfWeightlessBucketsIntoFullCells(t *testing.T) {
	tb := withCapacity(t, 100, false)
	load := tb.TableLoad()
	for b := 768; b < 1024; b++ {
		load.Buckets[b] = 0 // cell-d's buckets carry nothing; the others 256 of 100
	}
	tr, err := DrainCell(tb, "cell-d", DrainOptions{Load: load})
	if err != nil {
		t.Fatal(err)
	}
	if tr.MovedBuckets != 256 || tr.MovedLoad != 0 {
		t.Errorf("moved %d buckets, load %d", tr.MovedBuckets, tr.MovedLoad)
	}
}

func TestDrainMovesPinnedTenants(t *testing.T) {
	demo := demoTable(t)
	s := demo.Spec()
	s.Overrides = s.Overrides[:1] // acme pinned to cell-b
	tb := mustNew(t, s)
	tr, err := DrainCell(tb, "cell-b", DrainOptions{Pinned: MovePinned})
	if err != nil {
		t.Fatal(err)
	}
	// acme's bucket (in cell-c) did not move: it is re-pinned there.
	if o, _ := tr.To.Override("acme"); o.Cell != "cell-c" || o.State != OverrideActive {
		t.Errorf("acme after the drain: %+v, want pinned to cell-c", o)
	}
	if len(tr.TenantsMoved) != 1 || tr.TenantsMoved[0] != (TenantMove{Tenant: "acme", From: "cell-b", To: "cell-c"}) {
		t.Errorf("tenants moved = %+v", tr.TenantsMoved)
	}
	if _, err := MarkDrained(tr.To, "cell-b"); err != nil {
		t.Errorf("nothing left on cell-b, MarkDrained: %v", err)
	}
}

func TestDrainReport(t *testing.T) {
	tb := withCapacity(t, 512, false)
	tr, err := DrainCell(tb, "cell-d", DrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Action != ActionDrain || tr.FromVersion != 1 || tr.ToVersion != 2 || tr.MovedBuckets != 256 || tr.MovedShare != 0.25 || tr.MovedLoad != 256 || tr.LoadSource != "uniform" {
		t.Errorf("report header: %+v", tr)
	}
	want := []LoadMove{
		{From: "cell-d", To: "cell-a", Buckets: 86, Share: 86.0 / 1024, Load: 86, Ranges: []string{"768-853"}},
		{From: "cell-d", To: "cell-b", Buckets: 85, Share: 85.0 / 1024, Load: 85, Ranges: []string{"854-938"}},
		{From: "cell-d", To: "cell-c", Buckets: 85, Share: 85.0 / 1024, Load: 85, Ranges: []string{"939-1023"}},
	}
	for i, m := range tr.Moves {
		if i >= len(want) || m.From != want[i].From || m.To != want[i].To || m.Buckets != want[i].Buckets || m.Share != want[i].Share || m.Load != want[i].Load || m.Ranges[0] != want[i].Ranges[0] {
			t.Errorf("move %d = %+v, want %+v", i, m, want[i])
		}
	}
	if d := tr.Cells[3]; d.Cell != "cell-d" || d.FromState != CellActive || d.ToState != CellDraining || d.FromLoad != 256 || d.ToLoad != 0 || d.Capacity != 512 || d.FromUsed != 0.5 || d.ToUsed != 0 {
		t.Errorf("cell-d: %+v", d)
	}
	if a := tr.Cells[0]; a.FromLoad != 256 || a.ToLoad != 342 || a.ToBuckets != 342 || a.CapacityDefault {
		t.Errorf("cell-a: %+v", a)
	}
	fin, err := MarkDrained(tr.To, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := fin.To.Cell("cell-d"); c.State != CellDrained || fin.ToVersion != 3 || fin.MovedBuckets != 0 {
		t.Errorf("after MarkDrained: %s, v%d, %d moved", c.State, fin.ToVersion, fin.MovedBuckets)
	}
}

func TestMarkDrainedRefusals(t *testing.T) {
	demo := demoTable(t)
	draining := func(cell string, keepBuckets bool) *Table {
		s := demo.Spec()
		i := demo.cellByID[cell]
		s.Cells[i].State = CellDraining
		if !keepBuckets {
			s.Cells[(i+1)%4].Buckets = append(s.Cells[(i+1)%4].Buckets, s.Cells[i].Buckets...).Normalize()
			s.Cells[i].Buckets = nil
		}
		return mustNew(t, s)
	}
	drained, err := Drain(demo, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	checkRefusals(t, []refusal{
		{"unknown", func() error { return errOf(MarkDrained(demo, "cell-x")) },
			`cannot mark "cell-x" drained: no such cell in the routing table (cells: "cell-a", "cell-b", "cell-c" or "cell-d")`},
		{"active", func() error { return errOf(MarkDrained(demo, "cell-d")) },
			`cannot mark "cell-d" drained: it is active; drain it first`},
		{"already drained", func() error { return errOf(MarkDrained(drained, "cell-d")) },
			`cell "cell-d" is already drained`},
		{"still owns buckets", func() error { return errOf(MarkDrained(draining("cell-d", true), "cell-d")) },
			`cannot mark "cell-d" drained: it still owns 256 buckets (768-1023); drain it first`},
		{"still serves a pinned tenant", func() error { return errOf(MarkDrained(draining("cell-b", false), "cell-b")) },
			`cannot mark "cell-b" drained: it still serves tenant "acme"; migrate them first`},
		{"still serves a migrating tenant", func() error { return errOf(MarkDrained(draining("cell-a", false), "cell-a")) },
			`cannot mark "cell-a" drained: it still serves tenant "globex"; migrate them first`},
		{"a migration goes to it", func() error { return errOf(MarkDrained(draining("cell-c", false), "cell-c")) },
			`cannot mark "cell-c" drained: tenant "globex" is migrating to it; finish or abort that migration first`},
	})
}

func TestUndrainAndAddRefusals(t *testing.T) {
	demo := demoTable(t)
	s := demo.Spec()
	s.Cells[0].State = CellDraining // cell-a draining, keeps its 256 buckets
	halfDrained := mustNew(t, s)
	checkRefusals(t, []refusal{
		{"undrain unknown", func() error { return errOf(Undrain(demo, "cell-x", UndrainOptions{})) },
			`cannot undrain "cell-x": no such cell in the routing table (cells: "cell-a", "cell-b", "cell-c" or "cell-d")`},
		{"undrain active", func() error { return errOf(Undrain(demo, "cell-d", UndrainOptions{})) },
			`cell "cell-d" is already active`},
		{"add invalid id", func() error { return errOf(AddCell(demo, NewCell{ID: "Cell_X"}, AddOptions{})) },
			`cannot add "Cell_X": not a valid cell id; cell ids are "cell-" followed by 1–15 lowercase letters, digits or single inner hyphens (e.g. "cell-a", "cell-eu-1")`},
		{"add existing", func() error { return errOf(AddCell(demo, NewCell{ID: "cell-a"}, AddOptions{})) },
			`cannot add "cell-a": it is already in the routing table (active, 256 buckets); undrain it instead`},
		{"add take out of range", func() error { return errOf(AddCell(demo, NewCell{ID: "cell-e"}, AddOptions{Take: 5000})) },
			`cannot add "cell-e": take must be "auto" or a number of buckets from 0 to 1024; got 5000`},
		{"add more than the donors own", func() error { return errOf(AddCell(halfDrained, NewCell{ID: "cell-e"}, AddOptions{Take: 800})) },
			`cannot add "cell-e" with 800 buckets: the other active cells own only 768`},
		{"add above capacity", func() error { return errOf(AddCell(demo, NewCell{ID: "cell-e", Capacity: 10}, AddOptions{Take: 20})) },
			`cannot add "cell-e" with 20 buckets: it can take only 10 before its load passes its capacity of 10`},
		{"add bad weight", func() error { return errOf(AddCell(demo, NewCell{ID: "cell-e", Weight: 5000}, AddOptions{})) },
			`cannot add "cell-e": routing table: cells.cell-e.weight: must be an integer from 1 to 1000 (the cell's relative capacity); got 5000`},
		{"parse take", func() error { return errOf(ParseTake("half")) },
			`--take "half": must be "auto" or a number of buckets from 0 to 1048576`},
		{"parse negative take", func() error { return errOf(ParseTake("-1")) },
			`--take "-1": must be "auto" or a number of buckets from 0 to 1048576`},
	})
	if n, err := ParseTake("auto"); n != TakeAuto || err != nil {
		t.Errorf("ParseTake(auto) = %d, %v", n, err)
	}
	if n, err := ParseTake("64"); n != 64 || err != nil {
		t.Errorf("ParseTake(64) = %d, %v", n, err)
	}
}

func TestUndrainAndAddExamples(t *testing.T) {
	tb := withCapacity(t, 512, false)
	tr, err := DrainCell(tb, "cell-d", DrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := Undrain(tr.To, "cell-d", UndrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Equal capacities: cell-d takes back its quarter, 256 buckets, the
	// fewest there are; the donors end level (342 → 256 each… within one).
	if back.MovedBuckets != 256 || back.LowerBound != 256 || back.ToVersion != 3 {
		t.Errorf("undrain moved %d (lower bound %d), v%d", back.MovedBuckets, back.LowerBound, back.ToVersion)
	}
	for _, c := range back.Cells {
		if c.ToBuckets != 256 {
			t.Errorf("%s ends with %d buckets, want 256", c.Cell, c.ToBuckets)
		}
	}
	for _, m := range back.Moves {
		if m.To != "cell-d" {
			t.Errorf("undrain moved buckets to %s", m.To)
		}
	}

	// A fifth cell of equal capacity takes ⌊1024·512/2560⌋ = 204 buckets,
	// 51 from each of the four.
	add, err := AddCell(tb, NewCell{ID: "cell-e", Capacity: 512}, AddOptions{Take: TakeAuto})
	if err != nil {
		t.Fatal(err)
	}
	if add.MovedBuckets != 204 || add.LowerBound != 204 || len(add.Moves) != 4 {
		t.Errorf("add moved %d (lower bound %d) in %d moves", add.MovedBuckets, add.LowerBound, len(add.Moves))
	}
	for _, m := range add.Moves {
		if m.Buckets != 51 || m.To != "cell-e" {
			t.Errorf("move %+v, want 51 buckets to cell-e", m)
		}
	}
	if c := add.Cells[4]; c.Cell != "cell-e" || c.FromState != "" || c.ToState != CellActive || c.ToLoad != 204 {
		t.Errorf("cell-e: %+v", c)
	}
	zero, err := AddCell(tb, NewCell{ID: "cell-e"}, AddOptions{Take: 0})
	if err != nil || zero.MovedBuckets != 0 || zero.ToVersion != 2 {
		t.Errorf("add with no traffic: %v, %+v", err, zero)
	}
	if c, ok := zero.To.Cell("cell-e"); !ok || c.State != CellActive || c.Weight != 1 || c.Buckets.Count() != 0 {
		t.Errorf("cell-e with no traffic: %+v", c)
	}
}
