package router

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func randomCells(rng *rand.Rand, n int, equal bool) []CellWeight {
	cells := make([]CellWeight, n)
	for i := range cells {
		w := 1
		if !equal {
			w = 1 + rng.IntN(MaxWeight)
			if rng.IntN(3) == 0 {
				w = 1 + rng.IntN(4) // small weights make remainders matter
			}
		}
		cells[i] = CellWeight{Cell: fmt.Sprintf("cell-%03d", i), Weight: w}
	}
	return cells
}

// TestPlaceIsBalanced checks the largest-remainder guarantees over many
// random fleets: every cell gets ⌊B·w/W⌋ or ⌈B·w/W⌉ buckets, as one
// contiguous range, so the busiest cell carries at most one bucket more
// than its share: load/mean ≤ 1 + W/(B·w), which is 1 + cells/B for
// equal weights.
func TestPlaceIsBalanced(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 1000; trial++ {
		n := 1 + rng.IntN(64)
		buckets := 1 + rng.IntN(1<<12)
		switch {
		case trial%10 == 0:
			buckets = DefaultBuckets
		case trial%100 == 1:
			buckets = 1 + rng.IntN(MaxBuckets)
		}
		equal := trial%3 == 0
		cells := randomCells(rng, n, equal)
		a := Place(cells, buckets)
		if len(a) != buckets {
			t.Fatalf("Place(%d cells, B=%d) assigned %d buckets", n, buckets, len(a))
		}
		var total int64
		for _, c := range cells {
			total += int64(c.Weight)
		}
		counts := a.Counts()
		runs := map[string]int{} // contiguous ranges per cell
		for i, c := range a {
			if i == 0 || a[i-1] != c {
				runs[c]++
			}
		}
		maxRatio := 0.0
		for _, c := range cells {
			got := int64(counts[c.Cell])
			// |got − B·w/W| < 1, in integers: |got·W − B·w| < W.
			if d := got*total - int64(buckets)*int64(c.Weight); d <= -total || d >= total {
				t.Fatalf("B=%d weights=%v: %s got %d buckets, share is %.3f", buckets, cells, c.Cell, got, float64(buckets)*float64(c.Weight)/float64(total))
			}
			if runs[c.Cell] > 1 {
				t.Fatalf("B=%d: %s got %d ranges, want one contiguous range", buckets, c.Cell, runs[c.Cell])
			}
			ratio := float64(got) / float64(c.Weight) / (float64(buckets) / float64(total))
			if bound := 1 + float64(total)/(float64(buckets)*float64(c.Weight)) + 1e-9; ratio > bound {
				t.Fatalf("B=%d: %s load/mean %.4f > %.4f", buckets, c.Cell, ratio, bound)
			}
			maxRatio = max(maxRatio, ratio)
		}
		if equal && maxRatio > 1+float64(n)/float64(buckets)+1e-9 {
			t.Fatalf("equal weights, %d cells, B=%d: max/mean %.4f > 1 + cells/B", n, buckets, maxRatio)
		}
	}
}

func TestPlaceEdgeCases(t *testing.T) {
	if a := Place(nil, 1024); a != nil {
		t.Errorf("Place(no cells) = %d buckets, want nil", len(a))
	}
	if a := Place([]CellWeight{{"cell-a", 0}}, 1024); a != nil {
		t.Errorf("Place(zero weights) = %d buckets, want nil", len(a))
	}
	a := Place([]CellWeight{{"cell-a", 1}, {"cell-b", 0}, {"cell-c", 1}}, 3)
	if strings.Join(a, ",") != "cell-a,cell-a,cell-c" {
		t.Errorf("zero-weight cell or tie-break wrong: %v", a)
	}
	a = Place([]CellWeight{{"cell-a", 1}, {"cell-b", 1}, {"cell-c", 1}, {"cell-d", 1}}, 1024)
	for i, want := range []string{"0-255", "256-511", "512-767", "768-1023"} {
		id := fmt.Sprintf("cell-%c", 'a'+i)
		if got := a.Ranges(id).String(); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
}

func tableFrom(t testing.TB, cells []CellWeight, buckets int) *Table {
	t.Helper()
	a := Place(cells, buckets)
	s := Spec{Version: 1, Buckets: buckets}
	for _, c := range cells {
		s.Cells = append(s.Cells, CellSpec{ID: c.Cell, State: CellActive, Weight: c.Weight, Buckets: a.Ranges(c.Cell)})
	}
	tb, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func mustNew(t testing.TB, s Spec) *Table {
	t.Helper()
	tb, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestDrainExample(t *testing.T) {
	tb := demoTable(t) // 4 equal cells of 256 buckets; acme pinned to cell-b; globex cell-a → cell-c
	next, err := Drain(tb, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cell-a": "0-255, 768-853", "cell-b": "256-511, 854-938", "cell-c": "512-767, 939-1023", "cell-d": ""}
	for id, rs := range want {
		if c, _ := next.Cell(id); c.Buckets.String() != rs {
			t.Errorf("%s owns %q, want %q", id, c.Buckets, rs)
		}
	}
	// cell-b still serves the pinned tenant acme: draining, not drained.
	next, err = Drain(next, "cell-b")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := next.Cell("cell-b"); c.State != CellDraining || c.Buckets.Count() != 0 {
		t.Errorf("cell-b with a pinned tenant: %s with %d buckets, want draining with none", c.State, c.Buckets.Count())
	}
	for _, tc := range []struct{ cell, want string }{
		{"cell-c", `cannot drain "cell-c": tenant "globex" is migrating to it; finish or abort that migration first`},
		{"cell-x", `cannot drain "cell-x": no such cell in the routing table (cells: "cell-a", "cell-b", "cell-c" or "cell-d")`},
		{"cell-d", `cell "cell-d" is already drained`},
	} {
		if _, err := Drain(next, tc.cell); err == nil || err.Error() != tc.want {
			t.Errorf("Drain(%s) = %v, want %q", tc.cell, err, tc.want)
		}
	}
	one := tableFrom(t, []CellWeight{{"cell-a", 1}}, 8)
	if _, err := Drain(one, "cell-a"); err == nil || err.Error() != `cannot drain "cell-a": it is the last active cell; add a cell (cellctl cell add) or undrain one first` {
		t.Errorf("Drain(last cell) = %v", err)
	}
}

// TestRebalanceMovesOnlyTheGivenBuckets is the step of a gradual drain:
// a slice of one cell's buckets moves, nothing else does, and receivers
// stay within their weighted share.
func TestRebalanceMovesOnlyTheGivenBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 200; trial++ {
		n := 2 + rng.IntN(10)
		tb := tableFrom(t, randomCells(rng, n, trial%2 == 0), 1+rng.IntN(4096))
		for step := 0; step < 4; step++ {
			from := tb.CellIDs()[rng.IntN(n)]
			c, _ := tb.Cell(from)
			if c.Buckets.Count() == 0 {
				continue
			}
			// A random sub-range of one of its ranges.
			r := c.Buckets[rng.IntN(len(c.Buckets))]
			first := r.First + rng.IntN(r.Len())
			part := Ranges{{first, first + rng.IntN(r.Last-first+1)}}
			next, err := Rebalance(tb, from, part)
			if err != nil {
				t.Fatal(err)
			}
			for b, owner := range tb.Assignment() {
				got := next.CellOf(b)
				if part.Contains(b) == (got == owner) {
					t.Fatalf("bucket %d: %s → %s; moving %s of %s", b, owner, got, part, from)
				}
			}
			if nc, _ := next.Cell(from); nc.State != c.State || next.Version() != tb.Version()+1 {
				t.Fatalf("state %s → %s, version %d → %d", c.State, nc.State, tb.Version(), next.Version())
			}
			tb = next
		}
	}
	tb := demoTable(t)
	for _, tc := range []struct {
		cell string
		rs   Ranges
		want string
	}{
		{"cell-a", Ranges{{250, 260}}, `cannot move bucket 256 away from "cell-a": it belongs to "cell-b"`},
		{"cell-a", Ranges{{1024, 1024}}, `cannot move bucket 1024: buckets are 0-1023`},
		{"cell-z", Ranges{{0, 1}}, `cannot move buckets of "cell-z": no such cell in the routing table (cells: "cell-a", "cell-b", "cell-c" or "cell-d")`},
	} {
		if _, err := Rebalance(tb, tc.cell, tc.rs); err == nil || err.Error() != tc.want {
			t.Errorf("Rebalance(%s, %s) = %v, want %q", tc.cell, tc.rs, err, tc.want)
		}
	}
	next, err := Rebalance(tb, "cell-a", Ranges{{0, 9}, {100, 100}})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := next.Cell("cell-a"); c.Buckets.String() != "10-99, 101-255" {
		t.Errorf("cell-a keeps %s", c.Buckets)
	}
}
