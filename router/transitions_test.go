package router

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// randomFleet is a random table and a load on it: weighted cells, some of
// them with explicit capacities, a few draining (still owning buckets)
// or drained, pinned tenants, and either the uniform load or a random
// per-bucket one.
type randomFleet struct {
	t    *Table
	load *LoadFigures // what the test passes (nil: the table's own)
	eff  *LoadFigures // the load in effect
}

func genFleet(tb testing.TB, rng *rand.Rand, trial int) randomFleet {
	tb.Helper()
	n := 2 + rng.IntN(24)
	buckets := 1 + rng.IntN(2048)
	if trial%7 == 0 {
		buckets = DefaultBuckets
	}
	cells := randomCells(rng, n, trial%3 == 0)
	a := Place(cells, buckets)
	s := Spec{Version: int64(1 + rng.IntN(100)), Buckets: buckets}
	for _, c := range cells {
		s.Cells = append(s.Cells, CellSpec{ID: c.Cell, State: CellActive, Weight: c.Weight, Buckets: a.Ranges(c.Cell)})
	}
	// Shuffle some buckets so cells are unbalanced and fragmented.
	shuffle := 0
	if trial%2 == 1 && buckets >= 4 {
		shuffle = rng.IntN(buckets / 4)
	}
	for k := shuffle; k > 0; k-- {
		b := rng.IntN(buckets)
		from := -1
		for i := range s.Cells {
			if s.Cells[i].Buckets.Contains(b) {
				from = i
			}
		}
		to := rng.IntN(n)
		s.Cells[from].Buckets = subtract(s.Cells[from].Buckets, Ranges{{b, b}})
		s.Cells[to].Buckets = append(s.Cells[to].Buckets, Range{b, b}).Normalize()
	}
	if rng.IntN(3) == 0 {
		s.Cells[rng.IntN(n)].State = CellDraining
	}
	uniform := trial%2 == 0
	unit := int64(1)
	if uniform && trial%6 == 4 {
		unit = 2 + rng.Int64N(5) // equal loads above one unit: rounding may overfill
	}
	load := make([]int64, buckets)
	for b := range load {
		load[b] = unit
		if !uniform {
			load[b] = int64(rng.IntN(50))
			if rng.IntN(20) == 0 {
				load[b] = int64(rng.IntN(1000))
			}
		}
	}
	var total int64
	for _, l := range load {
		total += l
	}
	var weights int64
	for _, c := range s.Cells {
		weights += int64(c.Weight)
	}
	for i := range s.Cells {
		if rng.IntN(2) == 0 {
			// Explicit, between 0.8× and 4× the weighted share.
			share := float64(total) * float64(s.Cells[i].Weight) / float64(weights)
			s.Cells[i].Capacity = max(1, int64(share*(0.8+3.2*rng.Float64())))
		}
	}
	ids := make([]string, n)
	for i, c := range s.Cells {
		ids[i] = c.ID
	}
	for k := rng.IntN(6); k > 0; k-- {
		tenant := fmt.Sprintf("pinned-%d-%d", trial, k)
		c := ids[rng.IntN(n)]
		s.Overrides = append(s.Overrides, Override{Tenant: tenant, Cell: c, State: OverrideActive})
	}
	if trial%5 == 0 { // a migration between two cells
		from, to := rng.IntN(n), rng.IntN(n)
		if from != to && s.Cells[to].State == CellActive {
			s.Overrides = append(s.Overrides, Override{Tenant: fmt.Sprintf("moving-%d", trial), Cell: ids[from], State: OverrideMigrating, Target: ids[to], WriteMode: WriteRejectWith503})
		}
	}
	t := mustNew(tb, s)
	lf := &LoadFigures{Source: "random", Buckets: load}
	if len(t.Overrides()) > 0 && !uniform {
		lf.Pinned = map[string]int64{}
		for _, o := range t.Overrides() {
			lf.Pinned[o.Tenant] = int64(rng.IntN(40))
		}
	}
	if uniform && unit == 1 && rng.IntN(2) == 0 {
		lf = nil // the table's own (uniform) load
	}
	eff := lf
	if eff == nil {
		eff = t.TableLoad()
	}
	return randomFleet{t: t, load: lf, eff: eff}
}

// cellLoads recomputes each cell's load and capacity from scratch: the
// tests' own arithmetic, independent of fleetState.
func cellLoads(t *Table, lf *LoadFigures) (load, caps map[string]int64) {
	if lf == nil {
		lf = t.TableLoad()
	}
	load, caps = map[string]int64{}, map[string]int64{}
	for b := 0; b < t.Buckets(); b++ {
		load[t.CellOf(b)] += lf.Buckets[b]
	}
	for _, o := range t.Overrides() {
		load[o.Cell] += lf.Pinned[o.Tenant]
	}
	var total, weights int64
	for _, l := range load {
		total += l
	}
	for _, c := range t.Cells() {
		weights += int64(c.Weight)
	}
	for _, c := range t.Cells() {
		if c.Capacity > 0 {
			caps[c.ID] = c.Capacity
		} else {
			v := new(big.Int).Mul(big.NewInt(2*total), big.NewInt(int64(c.Weight)))
			q, r := new(big.Int).QuoRem(v, big.NewInt(weights), new(big.Int))
			if r.Sign() > 0 {
				q.Add(q, big.NewInt(1))
			}
			caps[c.ID] = max(1, q.Int64())
		}
	}
	return load, caps
}

func bucketLoadOf(lf *LoadFigures, _ *Table, b int) int64 { return lf.Buckets[b] }

// TestDrainPropertiesOverRandomFleets drains random cells of many random
// fleets and checks what an operator relies on: only the drained cell's
// buckets move, only to active cells, no receiver ends above its
// capacity, each receiver gets its share of the moved load in proportion
// to its spare capacity (within one bucket), and a refusal happens only
// when the load truly does not fit.
func TestDrainPropertiesOverRandomFleets(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	drained, refused := 0, 0
	for trial := 0; trial < 1500; trial++ {
		f := genFleet(t, rng, trial)
		ids := f.t.CellIDs()
		victim := ids[rng.IntN(len(ids))]
		vc, _ := f.t.Cell(victim)
		if vc.State == CellDrained {
			continue
		}
		policy := []PinnedPolicy{KeepPinned, MovePinned}[rng.IntN(2)]
		load, caps := cellLoads(f.t, f.load)
		var recv []string
		var spare, movedLoad, pinnedLoad, maxMoved int64
		for _, c := range f.t.Cells() {
			if c.ID != victim && c.State == CellActive {
				recv = append(recv, c.ID)
				spare += max(0, caps[c.ID]-load[c.ID])
			}
		}
		for _, r := range vc.Buckets {
			for b := r.First; b <= r.Last; b++ {
				l := bucketLoadOf(f.eff, f.t, b)
				movedLoad += l
				maxMoved = max(maxMoved, l)
			}
		}
		if policy == MovePinned && f.load != nil {
			for _, o := range f.t.Overrides() {
				if o.Cell == victim {
					pinnedLoad += f.load.Pinned[o.Tenant]
				}
			}
		}

		tr, err := DrainCell(f.t, victim, DrainOptions{Pinned: policy, Load: f.load})
		if err != nil {
			msg := err.Error()
			switch {
			case strings.Contains(msg, "is migrating to it") || strings.Contains(msg, "is migrating from it"):
				migrating := false
				for _, o := range f.t.Overrides() {
					if o.State == OverrideMigrating && (o.Target == victim || o.Cell == victim && policy != KeepPinned) {
						migrating = true
					}
				}
				if !migrating {
					t.Fatalf("trial %d: refused for a migration that is not there: %v", trial, err)
				}
			case len(recv) == 0 && strings.Contains(msg, "it is the last active cell"):
			case vc.State == CellDraining && vc.Buckets.Count() == 0 && strings.Contains(msg, "already draining and owns no buckets"):
			case strings.Contains(msg, "but the other active cells have only"):
				if movedLoad+pinnedLoad <= spare {
					t.Fatalf("trial %d: refused although %d + %d fits in %d spare: %v", trial, movedLoad, pinnedLoad, spare, err)
				}
			case strings.Contains(msg, "fits in no active cell") || strings.Contains(msg, "no active cell has room for it"):
				// Granularity: the total fits but one bucket or tenant does not.
				if movedLoad+pinnedLoad > spare {
					t.Fatalf("trial %d: wrong refusal for a load that does not fit at all: %v", trial, err)
				}
			default:
				t.Fatalf("trial %d: unexpected refusal: %v", trial, err)
			}
			refused++
			continue
		}
		drained++
		next := tr.To
		if next.Version() != f.t.Version()+1 {
			t.Fatalf("version %d → %d", f.t.Version(), next.Version())
		}
		if c, _ := next.Cell(victim); c.State != CellDraining || c.Buckets.Count() != 0 {
			t.Fatalf("trial %d: %s is %s with %d buckets after the drain", trial, victim, c.State, c.Buckets.Count())
		}
		received := map[string]int64{}
		receivedBuckets := map[string]int{}
		for b := 0; b < f.t.Buckets(); b++ {
			was, is := f.t.CellOf(b), next.CellOf(b)
			if was != victim {
				if is != was {
					t.Fatalf("trial %d: bucket %d moved %s → %s, but only %s was drained", trial, b, was, is, victim)
				}
				continue
			}
			if c, _ := f.t.Cell(is); c.State != CellActive {
				t.Fatalf("trial %d: bucket %d went to %s, which is %s", trial, b, is, c.State)
			}
			received[is] += bucketLoadOf(f.eff, f.t, b)
			receivedBuckets[is]++
		}
		after, _ := cellLoads(next, f.load)
		for _, r := range recv {
			if after[r] > load[r] && after[r] > caps[r] {
				t.Fatalf("trial %d: %s ends with load %d above its capacity %d", trial, r, after[r], caps[r])
			}
		}
		// Balance: each receiver's share is ∝ its spare capacity. With
		// equal bucket loads its bucket count is within one of the exact
		// share; otherwise no receiver is short by a bucket's load or more.
		if spare > 0 {
			equal := maxMoved*int64(vc.Buckets.Count()) == movedLoad
			for _, r := range recv {
				s := float64(max(0, caps[r]-load[r]))
				if equal && maxMoved > 0 {
					want := float64(vc.Buckets.Count()) * s / float64(spare)
					if got := float64(receivedBuckets[r]); math.Abs(got-want) >= 1+1e-9 && maxMoved == 1 {
						t.Fatalf("trial %d: %s received %v buckets, its share of the spare capacity is %.2f", trial, r, got, want)
					}
				}
				want := float64(movedLoad) * s / float64(spare)
				if got := float64(received[r]); got <= want-float64(maxMoved)-1e-6 && maxMoved > 0 {
					t.Fatalf("trial %d: %s received load %v, short of its share %.2f by a bucket (%d) or more", trial, r, got, want, maxMoved)
				}
			}
		}
		// Overrides: kept, or moved off the victim to active cells.
		for _, o := range f.t.Overrides() {
			no, ok := next.Override(o.Tenant)
			if !ok {
				t.Fatalf("trial %d: override of %s disappeared", trial, o.Tenant)
			}
			switch {
			case o.Cell != victim || policy == KeepPinned:
				if no != o {
					t.Fatalf("trial %d: override %+v changed to %+v", trial, o, no)
				}
			default:
				if c, _ := next.Cell(no.Cell); no.Cell == victim || c.State != CellActive {
					t.Fatalf("trial %d: pinned %s moved to %s (%s)", trial, o.Tenant, no.Cell, c.State)
				}
			}
		}
		// The report agrees with the tables.
		var sum int64
		nb := 0
		for _, m := range tr.Moves {
			if m.From != victim {
				t.Fatalf("trial %d: report moves from %s", trial, m.From)
			}
			sum += m.Load
			nb += m.Buckets
		}
		if nb != vc.Buckets.Count() || tr.MovedBuckets != nb || sum != movedLoad || tr.MovedLoad != movedLoad {
			t.Fatalf("trial %d: report moves %d buckets (load %d), the cell had %d (load %d)", trial, nb, sum, vc.Buckets.Count(), movedLoad)
		}
		for _, c := range tr.Cells {
			if c.FromLoad != load[c.Cell] || c.ToLoad != after[c.Cell] || c.Capacity != caps[c.Cell] {
				t.Fatalf("trial %d: report for %s: load %d → %d cap %d; recomputed %d → %d cap %d",
					trial, c.Cell, c.FromLoad, c.ToLoad, c.Capacity, load[c.Cell], after[c.Cell], caps[c.Cell])
			}
		}
		// Finishing the drain changes nothing but the state.
		pinnedLeft := false
		for _, o := range next.Overrides() {
			pinnedLeft = pinnedLeft || o.Cell == victim
		}
		fin, err := MarkDrained(next, victim)
		if pinnedLeft != (err != nil) {
			t.Fatalf("trial %d: MarkDrained with pins left=%v: %v", trial, pinnedLeft, err)
		}
		if err == nil {
			if c, _ := fin.To.Cell(victim); c.State != CellDrained || fin.MovedBuckets != 0 || fin.To.Version() != next.Version()+1 {
				t.Fatalf("trial %d: MarkDrained: %s, %d moved", trial, c.State, fin.MovedBuckets)
			}
		}
	}
	t.Logf("%d drains, %d refusals", drained, refused)
	if drained < 500 || refused < 50 {
		t.Fatalf("%d drains and %d refusals: the generator must exercise both", drained, refused)
	}
}

// takeTarget is the tests' own statement of the goal of undrain and
// add: cell c carries min(capacity, ⌊L·cap_c/C⌋) over the active cells,
// and its lower bound: the fewest donor buckets (each no heavier than
// the room c has) whose load covers the need, heaviest first.
func takeTarget(t *Table, lf *LoadFigures, c string) (target int64, lower int, maxDonor int64) {
	load, caps := cellLoads(t, lf)
	L, C := new(big.Int), new(big.Int)
	for _, cc := range t.Cells() {
		if cc.State == CellActive {
			L.Add(L, big.NewInt(load[cc.ID]))
			C.Add(C, big.NewInt(caps[cc.ID]))
		}
	}
	q := new(big.Int).Mul(L, big.NewInt(caps[c]))
	q.Quo(q, C)
	target = min(caps[c], q.Int64())
	need := target - load[c]
	room := caps[c] - load[c]
	var ls []int64
	for b := 0; b < t.Buckets(); b++ {
		owner := t.CellOf(b)
		if cc, _ := t.Cell(owner); owner != c && cc.State == CellActive {
			l := bucketLoadOf(lf, t, b)
			maxDonor = max(maxDonor, l)
			if l > 0 && l <= room {
				ls = append(ls, l)
			}
		}
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i] > ls[j] })
	var sum int64
	for _, l := range ls {
		if sum >= need {
			break
		}
		sum += l
		lower++
	}
	return target, lower, maxDonor
}

// checkTake checks an undrain or add of cell c from `before` (in which c
// is already active, with what it owns): only buckets into c move, only
// from active cells; c ends at or above the target and within capacity;
// and the number of buckets moved is the lower bound.
func checkTake(t *testing.T, trial int, before *Table, lf *LoadFigures, tr *Transition, c string) {
	t.Helper()
	target, lower, maxDonor := takeTarget(before, lf, c)
	_, caps := cellLoads(before, lf)
	moved := 0
	for b := 0; b < before.Buckets(); b++ {
		was, is := before.CellOf(b), tr.To.CellOf(b)
		if was == is {
			continue
		}
		moved++
		if is != c {
			t.Fatalf("trial %d: bucket %d moved %s → %s; only moves into %s are allowed", trial, b, was, is, c)
		}
		if wc, _ := before.Cell(was); wc.State != CellActive {
			t.Fatalf("trial %d: bucket %d taken from %s, which is %s", trial, b, was, wc.State)
		}
	}
	after, _ := cellLoads(tr.To, lf)
	if moved > 0 && after[c] > caps[c] { // (a draining cell may start above it)
		t.Fatalf("trial %d: %s ends at load %d above its capacity %d", trial, c, after[c], caps[c])
	}
	if moved != tr.MovedBuckets || tr.LowerBound != lower {
		t.Fatalf("trial %d: moved %d (report %d), lower bound %d (report %d)", trial, moved, tr.MovedBuckets, lower, tr.LowerBound)
	}
	// When no bucket can overshoot the capacity, the goal is reached with
	// exactly the lower bound; a uniform load is always in that case.
	if target+maxDonor <= caps[c] || maxDonor <= 1 {
		if moved != lower {
			t.Fatalf("trial %d: %s: moved %d buckets, the lower bound is %d (target %d, load %d → %d)", trial, c, moved, lower, target, cellLoad(before, lf, c), after[c])
		}
		if after[c] < target {
			// It stopped short: every bucket left must be too heavy.
			room := caps[c] - after[c]
			for b := 0; b < before.Buckets(); b++ {
				o := tr.To.CellOf(b)
				if oc, _ := before.Cell(o); o != c && oc.State == CellActive && bucketLoadOf(lf, before, b) > 0 && bucketLoadOf(lf, before, b) <= room {
					t.Fatalf("trial %d: %s stops at load %d below its target %d, but bucket %d (load %d) of %s still fits", trial, c, after[c], target, b, bucketLoadOf(lf, before, b), o)
				}
			}
		}
	} else if moved < lower {
		t.Fatalf("trial %d: moved %d below the lower bound %d", trial, moved, lower)
	}
}

func cellLoad(t *Table, lf *LoadFigures, c string) int64 {
	l, _ := cellLoads(t, lf)
	return l[c]
}

// TestUndrainMovesTheMinimumOverRandomFleets drains and undrains random
// cells: the undrain moves only buckets into the cell, the fewest that
// reach its capacity-proportional share.
func TestUndrainMovesTheMinimumOverRandomFleets(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2))
	undrained, moves := 0, 0
	for trial := 0; trial < 1000; trial++ {
		f := genFleet(t, rng, trial)
		ids := f.t.CellIDs()
		c := ids[rng.IntN(len(ids))]
		start := f.t
		if cc, _ := start.Cell(c); cc.State == CellActive {
			tr, err := DrainCell(start, c, DrainOptions{Pinned: MovePinned, Load: f.load})
			if err != nil {
				continue
			}
			start = tr.To
			if rng.IntN(2) == 0 {
				if fin, err := MarkDrained(start, c); err == nil {
					start = fin.To
				}
			}
		}
		tr, err := Undrain(start, c, UndrainOptions{Load: f.load})
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if cc, _ := tr.To.Cell(c); cc.State != CellActive || tr.To.Version() != start.Version()+1 {
			t.Fatalf("trial %d: %s is %s, version %d → %d", trial, c, cc.State, start.Version(), tr.To.Version())
		}
		// The goal is stated over the table with c active.
		s := start.Spec()
		s.Cells[start.cellByID[c]].State = CellActive
		checkTake(t, trial, mustNew(t, s), f.eff, tr, c)
		undrained++
		moves += tr.MovedBuckets
	}
	t.Logf("%d undrains moving %d buckets", undrained, moves)
	if undrained < 500 || moves == 0 {
		t.Fatalf("only %d undrains moving %d buckets", undrained, moves)
	}
}

// TestAddMovesTheMinimumOverRandomFleets adds a cell to random fleets
// with --take auto and with a number of buckets.
func TestAddMovesTheMinimumOverRandomFleets(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 3))
	added, refused := 0, 0
	for trial := 0; trial < 1000; trial++ {
		f := genFleet(t, rng, trial)
		nc := NewCell{ID: "cell-new", Weight: 1 + rng.IntN(4)}
		if rng.IntN(2) == 0 {
			total := f.t.TableLoad().Total()
			if f.load != nil {
				total = f.load.Total()
			}
			nc.Capacity = 1 + rng.Int64N(total+1)
		}
		take := TakeAuto
		if trial%3 == 0 {
			take = rng.IntN(f.t.Buckets()/4 + 1)
		}
		tr, err := AddCell(f.t, nc, AddOptions{Take: take, Load: f.load})
		if err != nil {
			if take >= 0 && strings.Contains(err.Error(), "before its load passes its capacity") {
				refused++
				continue
			}
			t.Fatalf("trial %d: %v", trial, err)
		}
		added++
		if tr.To.Version() != f.t.Version()+1 {
			t.Fatalf("version %d → %d", f.t.Version(), tr.To.Version())
		}
		// The goal is stated over the table with the cell present, empty.
		s := f.t.Spec()
		s.Cells = append(s.Cells, CellSpec{ID: nc.ID, State: CellActive, Weight: nc.Weight, Capacity: nc.Capacity})
		with := mustNew(t, s)
		if take == TakeAuto {
			checkTake(t, trial, with, f.eff, tr, nc.ID)
			continue
		}
		if tr.MovedBuckets != take || tr.LowerBound != take {
			t.Fatalf("trial %d: --take %d moved %d (lower bound %d)", trial, take, tr.MovedBuckets, tr.LowerBound)
		}
		_, caps := cellLoads(with, f.load)
		if l := cellLoad(tr.To, f.load, nc.ID); l > caps[nc.ID] {
			t.Fatalf("trial %d: --take %d: load %d above capacity %d", trial, take, l, caps[nc.ID])
		}
		for b := 0; b < f.t.Buckets(); b++ {
			if was, is := f.t.CellOf(b), tr.To.CellOf(b); was != is && is != nc.ID {
				t.Fatalf("trial %d: bucket %d moved %s → %s", trial, b, was, is)
			}
		}
	}
	t.Logf("%d adds, %d refused", added, refused)
	if added < 600 {
		t.Fatalf("only %d adds", added)
	}
}
