package router

import (
	"fmt"
	"math/bits"
	"sort"

	"github.com/cellctl/cellctl/internal/diag"
)

// CellWeight is a cell and its relative capacity.
type CellWeight struct {
	Cell   string `json:"cell"`
	Weight int    `json:"weight"`
}

// Assignment maps every bucket (the index) to a cell id.
type Assignment []string

// Ranges returns the buckets assigned to cell.
func (a Assignment) Ranges(cell string) Ranges {
	var rs Ranges
	for b, c := range a {
		if c != cell {
			continue
		}
		if n := len(rs); n > 0 && rs[n-1].Last+1 == b {
			rs[n-1].Last = b
			continue
		}
		rs = append(rs, Range{b, b})
	}
	return rs
}

// Counts returns how many buckets each cell holds.
func (a Assignment) Counts() map[string]int {
	m := map[string]int{}
	for _, c := range a {
		m[c]++
	}
	return m
}

// Place assigns buckets to cells in proportion to their weights by the
// largest-remainder method: each cell gets ⌊B·w/W⌋ or ⌈B·w/W⌉ buckets,
// as one contiguous range, in the order the cells are given (ties on the
// remainder go to the earlier cell). Cells with weight ≤ 0 get nothing; it
// returns nil when no cell has a positive weight or buckets < 1.
func Place(cells []CellWeight, buckets int) Assignment {
	if buckets < 1 {
		return nil
	}
	w := make([]uint64, len(cells))
	for i, c := range cells {
		if c.Weight > 0 {
			w[i] = uint64(c.Weight)
		}
	}
	counts := apportion(w, buckets)
	if counts == nil {
		return nil
	}
	a := make(Assignment, 0, buckets)
	for i, n := range counts {
		for ; n > 0; n-- {
			a = append(a, cells[i].Cell)
		}
	}
	return a
}

// apportion splits n seats by weights with the largest-remainder method,
// in exact integer arithmetic. Nil when all weights are zero.
func apportion(weights []uint64, n int) []int {
	var total uint64
	for _, w := range weights {
		total += w
	}
	if total == 0 {
		return nil
	}
	counts := make([]int, len(weights))
	rems := make([]uint64, len(weights))
	left := n
	for i, w := range weights {
		hi, lo := bits.Mul64(uint64(n), w)
		q, r := bits.Div64(hi, lo, total) // q ≤ n, so no overflow
		counts[i], rems[i] = int(q), r
		left -= int(q)
	}
	order := make([]int, 0, len(weights))
	for i, w := range weights {
		if w > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return rems[order[a]] > rems[order[b]] })
	for _, i := range order[:left] {
		counts[i]++
	}
	return counts
}

// Rebalance returns a copy of t, one version up, in which the given
// buckets of cell have moved to the other active cells — the step of a
// gradual drain. Only those buckets move: they go to the receivers in
// proportion to how far each is below its weighted share of the buckets
// the receivers will hold together, so no receiver ends above ⌈its
// share⌉ and a receiver already above its share gets nothing. Each
// receiver gets one contiguous slice of the moved buckets, in bucket
// order. The cell's state does not change.
func Rebalance(t *Table, cell string, buckets Ranges) (*Table, error) {
	s := t.Spec()
	ci := cellIndexIn(s, cell)
	if ci < 0 {
		return nil, fmt.Errorf("cannot move buckets of %q: no such cell in the routing table (cells: %s)", cell, diag.Quote(t.cellIDs))
	}
	buckets = buckets.Normalize()
	for _, r := range buckets {
		for b := r.First; b <= r.Last; b++ {
			if b < 0 || b >= t.Buckets() {
				return nil, fmt.Errorf("cannot move bucket %d: buckets are 0-%d", b, t.Buckets()-1)
			}
			if owner := t.CellOf(b); owner != cell {
				return nil, fmt.Errorf("cannot move bucket %d away from %q: it belongs to %q", b, cell, owner)
			}
		}
	}
	if err := spread(&s, ci, buckets); err != nil {
		return nil, fmt.Errorf("cannot move buckets of %q: %w", cell, err)
	}
	s.Version++
	return New(s)
}

func cellIndexIn(s Spec, cell string) int {
	for i, c := range s.Cells {
		if c.ID == cell {
			return i
		}
	}
	return -1
}

// spread moves the buckets (all owned by cell ci) to the other active
// cells of s, by deficit to their weighted share.
func spread(s *Spec, ci int, buckets Ranges) error {
	var moved []int
	for _, r := range buckets {
		for b := r.First; b <= r.Last; b++ {
			moved = append(moved, b)
		}
	}
	if len(moved) == 0 {
		return nil
	}
	var recv []int
	var held, weight uint64
	for i, c := range s.Cells {
		if i != ci && c.State == CellActive {
			recv = append(recv, i)
			held += uint64(c.Buckets.Count())
			weight += uint64(c.Weight)
		}
	}
	if len(recv) == 0 {
		return fmt.Errorf("no other active cell can take its %d buckets", len(moved))
	}
	// Deficit of receiver i, scaled by the receivers' total weight W:
	// (held+moved)·w_i − count_i·W, floored at 0. The deficits add up to
	// at least moved·W, so sharing by them never overfills a cell.
	after := held + uint64(len(moved))
	deficits := make([]uint64, len(recv))
	for k, i := range recv {
		want := after * uint64(s.Cells[i].Weight)
		have := uint64(s.Cells[i].Buckets.Count()) * weight
		if want > have {
			deficits[k] = want - have
		}
	}
	counts := apportion(deficits, len(moved))
	next := 0
	for k, i := range recv {
		got := RangesOf(moved[next : next+counts[k]])
		next += counts[k]
		s.Cells[i].Buckets = append(s.Cells[i].Buckets, got...).Normalize()
	}
	s.Cells[ci].Buckets = subtract(s.Cells[ci].Buckets, buckets)
	return nil
}

// subtract removes the buckets of b from a (both normalized).
func subtract(a, b Ranges) Ranges {
	var out Ranges
	for _, r := range a {
		cur := r
		for _, x := range b {
			if x.Last < cur.First || x.First > cur.Last {
				continue
			}
			if x.First > cur.First {
				out = append(out, Range{cur.First, x.First - 1})
			}
			cur.First = x.Last + 1
			if cur.First > cur.Last {
				break
			}
		}
		if cur.First <= cur.Last {
			out = append(out, cur)
		}
	}
	return out
}
