package router

import (
	"container/heap"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/internal/diag"
)

// Routing table transitions (the fleet's add → drain → retire): drain, mark drained,
// undrain, add. Each takes a validated table and returns the next one (one
// version up) with a report of what moved; none touches a file or a
// cloud — the commands write the table (SaveTable) and publish the router.
// docs/LIFECYCLE.md states the algorithms and their guarantees.

// Action names a transition.
type Action string

const (
	ActionDrain           Action = "drain"
	ActionMarkDrained     Action = "mark-drained"
	ActionUndrain         Action = "undrain"
	ActionAdd             Action = "add"
	ActionMigrate         Action = "migrate"
	ActionFinishMigration Action = "finish-migration"
	ActionAbortMigration  Action = "abort-migration"
)

// Transition is one change of the table and what it moves.
type Transition struct {
	Action      Action `json:"action"`
	Cell        string `json:"cell,omitempty"`
	Tenant      string `json:"tenant,omitempty"`
	FromVersion int64  `json:"fromVersion"`
	ToVersion   int64  `json:"toVersion"`
	LoadSource  string `json:"loadSource"`

	// MovedBuckets buckets change cell; MovedShare is their share of all
	// buckets, which is the share of tenants routed by hash that move.
	MovedBuckets int     `json:"movedBuckets"`
	MovedShare   float64 `json:"movedShare"`
	MovedLoad    int64   `json:"movedLoad"`
	// LowerBound is, for undrain and add, the fewest buckets any
	// transition reaching the same goal has to move (see LIFECYCLE.md);
	// MovedBuckets equals it except where that document says otherwise.
	LowerBound int `json:"lowerBound"`

	Moves        []LoadMove       `json:"moves"`        // per source → destination
	TenantsMoved []TenantMove     `json:"tenantsMoved"` // overridden tenants whose serving cell changes
	Cells        []CellLoadChange `json:"cells"`        // every cell, before → after

	From *Table `json:"-"`
	To   *Table `json:"-"`
}

// LoadMove is what moves from one cell to another.
type LoadMove struct {
	From    string   `json:"from"`
	To      string   `json:"to"`
	Buckets int      `json:"buckets"`
	Share   float64  `json:"share"` // of all buckets: the share of tenants routed by hash
	Load    int64    `json:"load"`
	Ranges  []string `json:"ranges"`
}

// CellLoadChange is one cell before and after a transition. Capacity is
// the cell's capacity in the new table (defaults move when a cell is
// added); FromUsed is measured against it too.
type CellLoadChange struct {
	Cell            string    `json:"cell"`
	FromState       CellState `json:"fromState"` // "" for a cell the transition adds
	ToState         CellState `json:"toState"`
	FromBuckets     int       `json:"fromBuckets"`
	ToBuckets       int       `json:"toBuckets"`
	FromLoad        int64     `json:"fromLoad"`
	ToLoad          int64     `json:"toLoad"`
	Capacity        int64     `json:"capacity"`
	CapacityDefault bool      `json:"capacityDefault"`
	FromUsed        float64   `json:"fromUsed"`
	ToUsed          float64   `json:"toUsed"`
}

// PinnedPolicy says what a drain does with tenants an override pins to the
// drained cell.
type PinnedPolicy int

const (
	// RefusePinned refuses the drain, listing the pinned tenants.
	RefusePinned PinnedPolicy = iota
	// MovePinned re-pins each tenant to the active cell holding its bucket
	// after the drain (or, when that cell has no room for its load, the
	// active cell with the most room). A tenant migrating away from the cell still refuses the
	// drain: finish or abort the migration first.
	MovePinned
	// KeepPinned leaves the pins: the cell stays draining and keeps serving
	// those tenants until they are migrated.
	KeepPinned
)

// DrainOptions are the choices of DrainCell.
type DrainOptions struct {
	Pinned PinnedPolicy
	// Load is the load to balance by; nil means the table's own.
	Load *LoadFigures
}

// DrainCell marks cell draining and moves all of its buckets — and only
// its buckets — to the other active cells, in proportion to their spare
// capacity, never above a cell's capacity. It refuses, with the numbers,
// when the load does not fit, and refuses to drain the last active cell.
// After the router is published with the new table, MarkDrained finishes
// the drain.
func DrainCell(t *Table, cell string, opts DrainOptions) (*Transition, error) {
	st, ci, err := stateFor(t, cell, opts.Load, "drain %q")
	if err != nil {
		return nil, err
	}
	c := st.spec.Cells[ci]
	if c.State == CellDrained {
		return nil, fmt.Errorf("cell %q is already drained", cell)
	}
	var pinned []int // active pins to the cell
	for _, oi := range st.pins[ci] {
		o := st.spec.Overrides[oi]
		if o.State == OverrideMigrating && opts.Pinned != KeepPinned {
			return nil, fmt.Errorf("cannot drain %q: tenant %q is migrating from it to %q; finish or abort that migration first", cell, o.Tenant, o.Target)
		}
		pinned = append(pinned, oi)
	}
	for _, o := range st.spec.Overrides {
		if o.State == OverrideMigrating && o.Target == cell {
			return nil, fmt.Errorf("cannot drain %q: tenant %q is migrating to it; finish or abort that migration first", cell, o.Tenant)
		}
	}
	var recv []int
	for i, rc := range st.spec.Cells {
		if i != ci && rc.State == CellActive {
			recv = append(recv, i)
		}
	}
	if len(recv) == 0 {
		if c.State == CellActive {
			return nil, fmt.Errorf("cannot drain %q: it is the last active cell; add a cell (cellctl cell add) or undrain one first", cell)
		}
		return nil, fmt.Errorf("cannot drain %q: no active cell can take its %d buckets", cell, st.count[ci])
	}
	if len(pinned) > 0 && opts.Pinned == RefusePinned {
		tenants := make([]string, len(pinned))
		for i, oi := range pinned {
			tenants[i] = st.spec.Overrides[oi].Tenant
		}
		return nil, fmt.Errorf("cannot drain %q: %s; move the pins with the drain (--move-pinned) or migrate the tenants first", cell, pinnedText(tenants))
	}

	if c.State == CellDraining && st.count[ci] == 0 && (len(pinned) == 0 || opts.Pinned != MovePinned) {
		return nil, fmt.Errorf("cannot drain %q: it is already draining and owns no buckets; once the router serves this table, mark it drained", cell)
	}

	var buckets []int
	var movedLoad, pinnedLoad int64
	for b, o := range st.owner {
		if int(o) == ci {
			buckets = append(buckets, b)
			movedLoad += st.bload[b]
		}
	}
	if opts.Pinned == MovePinned {
		for _, oi := range pinned {
			pinnedLoad += st.pload[st.spec.Overrides[oi].Tenant]
		}
	}
	if err := st.checkFits(cell, recv, movedLoad, pinnedLoad, len(buckets)); err != nil {
		return nil, err
	}
	if err := st.spread(cell, recv, buckets, movedLoad); err != nil {
		return nil, err
	}
	if opts.Pinned == MovePinned {
		if err := st.movePins(cell, ci, recv, pinned); err != nil {
			return nil, err
		}
	}
	st.spec.Cells[ci].State = CellDraining
	return st.commit(ActionDrain, cell, t)
}

func pinnedText(tenants []string) string {
	list := tenants
	more := ""
	if len(list) > 5 {
		list, more = list[:5], fmt.Sprintf(" and %d more", len(tenants)-5)
	}
	if len(tenants) == 1 {
		return fmt.Sprintf("tenant %s is pinned to it", diag.Quote(list))
	}
	return fmt.Sprintf("%d tenants are pinned to it (%s%s)", len(tenants), strings.Join(quoteAll(list), ", "), more)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// checkFits refuses a drain whose load is above the receivers' spare
// capacity, naming each receiver's numbers (the five with the most spare).
func (st *fleetState) checkFits(cell string, recv []int, movedLoad, pinnedLoad int64, buckets int) error {
	var spare int64
	type room struct {
		i     int
		spare int64
	}
	rooms := make([]room, 0, len(recv))
	for _, r := range recv {
		s := max(0, st.caps[r]-st.load[r])
		spare += s
		rooms = append(rooms, room{r, s})
	}
	need := movedLoad + pinnedLoad
	if need <= spare {
		return nil
	}
	sort.SliceStable(rooms, func(a, b int) bool { return rooms[a].spare > rooms[b].spare })
	var parts []string
	for k, rm := range rooms {
		if k == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(rooms)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d (load %d of capacity %d)", st.spec.Cells[rm.i].ID, rm.spare, st.load[rm.i], st.caps[rm.i]))
	}
	what := fmt.Sprintf("its %d buckets carry %d load units", buckets, movedLoad)
	if pinnedLoad > 0 {
		what += fmt.Sprintf(" and its pinned tenants %d", pinnedLoad)
	}
	return fmt.Errorf("cannot drain %q: %s, but the other active cells have only %d spare: %s; add capacity (cellctl cell add, or raise a cell's capacity) first",
		cell, what, spare, strings.Join(parts, ", "))
}

// spread gives the buckets (all of one cell, in bucket order) to the
// receivers in proportion to their spare capacity, each receiver one
// contiguous slice, then moves buckets off any receiver the rounding put
// above its capacity to the receiver with the most room.
func (st *fleetState) spread(cell string, recv []int, buckets []int, movedLoad int64) error {
	if len(buckets) == 0 {
		return nil
	}
	spare := make([]uint64, len(recv))
	var total uint64
	for k, r := range recv {
		spare[k] = uint64(max(0, st.caps[r]-st.load[r]))
		total += spare[k]
	}
	if total == 0 { // nothing carries load: share by capacity
		for k, r := range recv {
			spare[k] = uint64(st.caps[r])
		}
	}
	uniform := true
	for _, b := range buckets[1:] {
		if st.bload[b] != st.bload[buckets[0]] {
			uniform = false
			break
		}
	}
	slice := make([]int, len(buckets)) // receiver index (into recv) of each bucket
	if uniform {
		// Exact shares, ties to the earlier cell: with the default
		// capacities this is the weighted split Drain always made.
		counts := apportion(spare, len(buckets))
		next := 0
		for k, n := range counts {
			for ; n > 0; n-- {
				slice[next] = k
				next++
			}
		}
	} else {
		// Cumulative targets: bucket j goes to the receiver whose share of
		// the moved load covers the middle of bucket j.
		var sum float64
		for _, s := range spare {
			sum += float64(s)
		}
		k, bound := 0, float64(movedLoad)*float64(spare[0])/sum
		var cum float64
		for j, b := range buckets {
			mid := cum + float64(st.bload[b])/2
			for k < len(recv)-1 && mid >= bound {
				k++
				bound += float64(movedLoad) * float64(spare[k]) / sum
			}
			slice[j] = k
			cum += float64(st.bload[b])
		}
	}
	for j, b := range buckets {
		st.move(b, recv[slice[j]])
	}
	// Repair: receivers above capacity give back their last buckets.
	var overflow []int
	for k := len(buckets) - 1; k >= 0; k-- {
		r := recv[slice[k]]
		if st.load[r] > st.caps[r] && st.bload[buckets[k]] > 0 { // (a weightless bucket fits anywhere)
			overflow = append(overflow, buckets[k])
			st.unmove(buckets[k], r)
		}
	}
	sort.SliceStable(overflow, func(a, b int) bool { return st.bload[overflow[a]] > st.bload[overflow[b]] })
	for _, b := range overflow {
		best, bestRoom := -1, int64(-1)
		for _, r := range recv {
			if room := st.caps[r] - st.load[r]; room > bestRoom {
				best, bestRoom = r, room
			}
		}
		if bestRoom < st.bload[b] {
			return fmt.Errorf("cannot drain %q: bucket %d carries %d load units and fits in no active cell: the most room is %d, in %s",
				cell, b, st.bload[b], bestRoom, st.spec.Cells[best].ID)
		}
		st.move(b, best)
	}
	return nil
}

// movePins re-pins the tenants pinned to the drained cell ci.
func (st *fleetState) movePins(cell string, ci int, recv []int, pinned []int) error {
	order := append([]int(nil), pinned...)
	sort.SliceStable(order, func(a, b int) bool {
		return st.pload[st.spec.Overrides[order[a]].Tenant] > st.pload[st.spec.Overrides[order[b]].Tenant]
	})
	for _, oi := range order {
		o := &st.spec.Overrides[oi]
		l := st.pload[o.Tenant]
		to := int(st.owner[BucketOf(o.Tenant, len(st.owner))])
		if to == ci || st.spec.Cells[to].State != CellActive || st.caps[to]-st.load[to] < l {
			to = -1
			best := int64(-1)
			for _, r := range recv {
				if room := st.caps[r] - st.load[r]; room >= l && room > best {
					to, best = r, room
				}
			}
		}
		if to < 0 {
			return fmt.Errorf("cannot drain %q: pinned tenant %q carries %d load units and no active cell has room for it", cell, o.Tenant, l)
		}
		st.load[ci] -= l
		st.load[to] += l
		o.Cell = st.spec.Cells[to].ID
	}
	return nil
}

// MarkDrained finishes a drain once the router serves a table in which
// cell owns nothing: the cell becomes drained, and may be destroyed.
func MarkDrained(t *Table, cell string) (*Transition, error) {
	st, ci, err := stateFor(t, cell, nil, "mark %q drained")
	if err != nil {
		return nil, err
	}
	switch st.spec.Cells[ci].State {
	case CellDrained:
		return nil, fmt.Errorf("cell %q is already drained", cell)
	case CellActive:
		return nil, fmt.Errorf("cannot mark %q drained: it is active; drain it first", cell)
	}
	if n := st.count[ci]; n > 0 {
		return nil, fmt.Errorf("cannot mark %q drained: it still owns %d buckets (%s); drain it first", cell, n, st.spec.Cells[ci].Buckets)
	}
	if len(st.pins[ci]) > 0 {
		tenants := make([]string, len(st.pins[ci]))
		for i, oi := range st.pins[ci] {
			tenants[i] = st.spec.Overrides[oi].Tenant
		}
		return nil, fmt.Errorf("cannot mark %q drained: it still serves %s; migrate them first", cell, servedText(tenants))
	}
	for _, o := range st.spec.Overrides {
		if o.State == OverrideMigrating && o.Target == cell {
			return nil, fmt.Errorf("cannot mark %q drained: tenant %q is migrating to it; finish or abort that migration first", cell, o.Tenant)
		}
	}
	st.spec.Cells[ci].State = CellDrained
	return st.commit(ActionMarkDrained, cell, t)
}

func servedText(tenants []string) string {
	if len(tenants) == 1 {
		return "tenant " + strconv.Quote(tenants[0])
	}
	list, more := tenants, ""
	if len(list) > 5 {
		list, more = list[:5], fmt.Sprintf(" and %d more", len(tenants)-5)
	}
	return fmt.Sprintf("%d tenants (%s%s)", len(tenants), strings.Join(quoteAll(list), ", "), more)
}

// Drain drains cell in one version: DrainCell keeping its pins, then
// MarkDrained when nothing is pinned to it (it stays draining otherwise).
// It is for building tables — fixtures, tests — where no router is
// published in between; operators' commands use DrainCell, publish, then
// MarkDrained.
func Drain(t *Table, cell string) (*Table, error) {
	tr, err := DrainCell(t, cell, DrainOptions{Pinned: KeepPinned})
	if err != nil {
		return nil, err
	}
	for _, o := range tr.To.spec.Overrides {
		if o.Cell == cell {
			return tr.To, nil
		}
	}
	s := tr.To.Spec()
	s.Cells[tr.To.cellByID[cell]].State = CellDrained
	return New(s)
}

// UndrainOptions are the choices of Undrain.
type UndrainOptions struct {
	// Load is the load to balance by; nil means the table's own.
	Load *LoadFigures
}

// Undrain makes a draining or drained cell active again and gives it back
// only what balance needs: buckets move to it (and nowhere else) until it
// carries its capacity-proportional share of the active cells' load,
// heaviest buckets first, each from the most loaded cell that has one.
func Undrain(t *Table, cell string, opts UndrainOptions) (*Transition, error) {
	st, ci, err := stateFor(t, cell, opts.Load, "undrain %q")
	if err != nil {
		return nil, err
	}
	if st.spec.Cells[ci].State == CellActive {
		return nil, fmt.Errorf("cell %q is already active", cell)
	}
	st.spec.Cells[ci].State = CellActive
	if _, err := st.take(cell, ci, TakeAuto); err != nil {
		return nil, err
	}
	return st.commit(ActionUndrain, cell, t)
}

// TakeAuto asks AddCell to take the cell's capacity-proportional share.
const TakeAuto = -1

// ParseTake reads a --take value: "auto" or a number of buckets.
func ParseTake(s string) (int, error) {
	if s == "auto" {
		return TakeAuto, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > MaxBuckets {
		return 0, fmt.Errorf("--take %q: must be \"auto\" or a number of buckets from 0 to %d", s, MaxBuckets)
	}
	return n, nil
}

// NewCell is a cell AddCell puts in the table.
type NewCell struct {
	ID       string
	Weight   int   // 0: 1
	Capacity int64 // 0: derived from the weight
}

// AddOptions are the choices of AddCell.
type AddOptions struct {
	// Take is the number of buckets the cell takes, or TakeAuto for its
	// capacity-proportional share of the active cells' load; 0 adds it
	// with no traffic.
	Take int
	// Load is the load to balance by; nil means the table's own.
	Load *LoadFigures
}

// AddCell puts a new active cell in the table and gives it buckets by
// moving the fewest buckets there are, from the most loaded cells: with
// TakeAuto until it carries its capacity-proportional share, otherwise
// exactly opts.Take buckets.
func AddCell(t *Table, c NewCell, opts AddOptions) (*Transition, error) {
	if !ValidCellID(c.ID) {
		return nil, fmt.Errorf("cannot add %q: not a valid cell id; cell ids are %s", c.ID, cellIDRule)
	}
	if old, ok := t.Cell(c.ID); ok {
		return nil, fmt.Errorf("cannot add %q: it is already in the routing table (%s, %d buckets); undrain it instead", c.ID, old.State, old.Buckets.Count())
	}
	if opts.Take < TakeAuto || opts.Take > t.Buckets() {
		return nil, fmt.Errorf("cannot add %q: take must be \"auto\" or a number of buckets from 0 to %d; got %d", c.ID, t.Buckets(), opts.Take)
	}
	if c.Weight == 0 {
		c.Weight = 1
	}
	s := t.Spec()
	s.Cells = append(s.Cells, CellSpec{ID: c.ID, State: CellActive, Weight: c.Weight, Capacity: c.Capacity})
	with, err := New(s)
	if err != nil {
		return nil, fmt.Errorf("cannot add %q: %w", c.ID, err)
	}
	st, ci, err := stateFor(with, c.ID, opts.Load, "add %q")
	if err != nil {
		return nil, err
	}
	lb, err := st.take(c.ID, ci, opts.Take)
	if err != nil {
		return nil, err
	}
	tr, err := st.commit(ActionAdd, c.ID, t)
	if err != nil {
		return nil, err
	}
	tr.LowerBound = lb
	for i := range tr.Cells {
		if tr.Cells[i].Cell == c.ID {
			tr.Cells[i].FromState = ""
		}
	}
	return tr, nil
}

// take moves buckets of the other active cells to cell ci: count of them,
// or with TakeAuto until ci carries its capacity-proportional share of the
// active cells' load. Buckets go heaviest first; among buckets of equal
// load, from the donor using the largest share of its capacity (its
// highest-numbered bucket). It returns the lower bound on the buckets to
// move and stores it for commit.
func (st *fleetState) take(cell string, ci int, count int) (int, error) {
	var donors []int
	var loadAct, capAct uint64
	for i, c := range st.spec.Cells {
		if c.State != CellActive {
			continue
		}
		loadAct += uint64(st.load[i])
		capAct += uint64(st.caps[i])
		if i != ci {
			donors = append(donors, i)
		}
	}
	isDonor := make([]bool, len(st.spec.Cells))
	for _, d := range donors {
		isDonor[d] = true
	}
	// Donor buckets: for TakeAuto heaviest first (fewest buckets for the
	// load), then by bucket; for a count, in bucket order as one level, so
	// the cell gets ordinary buckets from the most loaded cells.
	cand := make([]candidate, 0, len(st.owner))
	uniform := true
	for b, o := range st.owner {
		if isDonor[o] {
			cand = append(cand, candidate{load: st.bload[b], bucket: int32(b), donor: o})
			uniform = uniform && st.bload[b] == cand[0].load
		}
	}
	// Heaviest first, lazily: a heap yields the order as far as it is
	// read, which under a skewed load is a few buckets of tens of
	// thousands.
	order := cand
	var ch candHeap
	if count == TakeAuto && !uniform {
		ch = candHeap(cand)
		heap.Init(&ch)
		order = make([]candidate, 0, 64)
	}
	ensure := func(n int) bool {
		for len(order) < n && ch.Len() > 0 {
			order = append(order, heap.Pop(&ch).(candidate))
		}
		return len(order) >= n
	}
	room0 := st.caps[ci] - st.load[ci]
	target := int64(-1)
	lower := count
	if count == TakeAuto {
		target = min(st.caps[ci], int64(mulDivFloor(loadAct, uint64(st.caps[ci]), capAct)))
		lower = 0
		need := target - st.load[ci]
		if need <= 0 {
			st.lower = 0
			return 0, nil
		}
		// The lower bound: the fewest donor buckets (each no heavier than
		// the room the cell has) whose load adds up to the need.
		var sum int64
		for i := 0; sum < need && ensure(i+1) && order[i].load > 0; i++ {
			if order[i].load <= room0 {
				sum += order[i].load
				lower++
			}
		}
	} else if count > len(cand) {
		return 0, fmt.Errorf("cannot add %q with %d buckets: the other active cells own only %d", cell, count, len(cand))
	}
	st.lower = lower

	// Level by level (buckets of equal load), each bucket from the donor
	// using the largest share of its capacity: a heap of donors, each
	// with a stack of its buckets in the level (highest on top).
	moved := 0
	done := func() bool {
		if target >= 0 {
			return st.load[ci] >= target
		}
		return moved == count
	}
	head := make([]int32, len(st.spec.Cells))
	link := make([]int32, len(cand))
	h := &donorHeap{st: st}
	for lo := 0; ensure(lo+1) && !done(); {
		level := order[lo].load
		hi := lo
		for ensure(hi+1) && (target < 0 || order[hi].load == level) {
			hi++
		}
		if target < 0 {
			level = 0 // one level; each bucket is checked against the room
		}
		if target >= 0 && level == 0 {
			break // weightless buckets bring no load
		}
		if level > st.caps[ci]-st.load[ci] {
			lo = hi
			continue
		}
		for _, d := range donors {
			head[d] = -1
		}
		h.items = h.items[:0]
		for i := lo; i < hi; i++ {
			d := order[i].donor
			if head[d] < 0 {
				h.items = append(h.items, int(d))
			}
			link[i], head[d] = head[d], int32(i)
		}
		heap.Init(h)
		for h.Len() > 0 && !done() && level <= st.caps[ci]-st.load[ci] {
			d := h.items[0]
			i := head[d]
			head[d] = link[i]
			if order[i].load <= st.caps[ci]-st.load[ci] { // (always, within a level of TakeAuto)
				st.move(int(order[i].bucket), ci)
				moved++
			}
			if head[d] < 0 {
				heap.Pop(h)
			} else {
				heap.Fix(h, 0)
			}
		}
		lo = hi
	}
	if target < 0 && moved < count {
		return 0, fmt.Errorf("cannot add %q with %d buckets: it can take only %d before its load passes its capacity of %d",
			cell, count, moved, st.caps[ci])
	}
	return lower, nil
}

// overriddenMoves lists the tenants with an override in either table
// whose serving cell differs between them.
func overriddenMoves(from, to *Table) []TenantMove {
	out := []TenantMove{}
	seen := map[string]bool{}
	for _, list := range [][]Override{from.spec.Overrides, to.spec.Overrides} {
		for _, o := range list {
			if seen[o.Tenant] {
				continue
			}
			seen[o.Tenant] = true
			if a, b := from.Route(o.Tenant).Cell, to.Route(o.Tenant).Cell; a != b {
				out = append(out, TenantMove{Tenant: o.Tenant, From: a, To: b})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tenant < out[j].Tenant })
	return out
}

type candidate struct {
	load   int64
	bucket int32
	donor  int32
}

// candHeap yields candidates heaviest first, then by bucket.
type candHeap []candidate

func (h candHeap) Len() int { return len(h) }
func (h candHeap) Less(i, j int) bool {
	if h[i].load != h[j].load {
		return h[i].load > h[j].load
	}
	return h[i].bucket < h[j].bucket
}
func (h candHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)   { *h = append(*h, x.(candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// donorHeap orders donor cells by load/capacity, highest first, then by
// canonical order.
type donorHeap struct {
	st    *fleetState
	items []int
}

func (h *donorHeap) Len() int { return len(h.items) }
func (h *donorHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	ah, al := bits.Mul64(uint64(h.st.load[a]), uint64(h.st.caps[b]))
	bh, bl := bits.Mul64(uint64(h.st.load[b]), uint64(h.st.caps[a]))
	if ah != bh || al != bl {
		return ah > bh || ah == bh && al > bl
	}
	return a < b
}
func (h *donorHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *donorHeap) Push(x any)    { h.items = append(h.items, x.(int)) }
func (h *donorHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// stateFor loads t under load (nil: the table's) and finds cell; what
// says what is being done ("drain %q") for messages.
func stateFor(t *Table, cell string, load *LoadFigures, what string) (*fleetState, int, error) {
	what = fmt.Sprintf(what, cell)
	ci, ok := t.cellByID[cell]
	if !ok {
		return nil, 0, fmt.Errorf("cannot %s: no such cell in the routing table (cells: %s)", what, diag.Quote(t.cellIDs))
	}
	if load == nil {
		load = t.TableLoad()
	}
	st, err := newFleetState(t, load)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot %s: %w", what, err)
	}
	st.source = load.Source
	st.start()
	return st, int(ci), nil
}

// start records the state a transition starts from.
func (st *fleetState) start() {
	st.count0 = append([]int(nil), st.count...)
	st.load0 = append([]int64(nil), st.load...)
	st.states0 = make([]CellState, len(st.spec.Cells))
	for i, c := range st.spec.Cells {
		st.states0[i] = c.State
	}
}

// move gives bucket b to cell to.
func (st *fleetState) move(b int, to int) {
	from := st.owner[b]
	st.count[from]--
	st.load[from] -= st.bload[b]
	st.owner[b] = int32(to)
	st.count[to]++
	st.load[to] += st.bload[b]
}

// unmove gives bucket b, moved to cell r, back to the cell it came from.
func (st *fleetState) unmove(b int, r int) {
	from := int(st.t.bucketCell[b])
	st.count[r]--
	st.load[r] -= st.bload[b]
	st.owner[b] = int32(from)
	st.count[from]++
	st.load[from] += st.bload[b]
}

// commit builds the next table (one version up) and the report. from is
// the table the operator started from (for an add, without the new cell).
func (st *fleetState) commit(action Action, cell string, from *Table) (*Transition, error) {
	n := len(st.spec.Cells)
	ranges := make([]Ranges, n)
	for b, o := range st.owner {
		rs := ranges[o]
		if k := len(rs); k > 0 && rs[k-1].Last+1 == b {
			rs[k-1].Last = b
			continue
		}
		ranges[o] = append(rs, Range{b, b})
	}
	for i := range st.spec.Cells {
		st.spec.Cells[i].Buckets = ranges[i]
	}
	st.spec.Version = from.Version() + 1
	to, err := New(st.spec)
	if err != nil {
		// Every transition keeps the table valid; this is a bug.
		return nil, fmt.Errorf("internal error: %s %s produced an invalid table: %w", action, cell, err)
	}
	tr := &Transition{
		Action: action, Cell: cell, FromVersion: from.Version(), ToVersion: to.Version(), LoadSource: st.source,
		LowerBound: st.lower, From: from, To: to,
		Moves: []LoadMove{}, TenantsMoved: []TenantMove{},
	}
	type pair struct{ from, to int32 }
	moves := map[pair]*LoadMove{}
	var keys []pair
	moved := map[pair][]int{}
	for b, o := range st.owner {
		f := int32(st.t.bucketCell[b])
		if f == o {
			continue
		}
		k := pair{f, o}
		m := moves[k]
		if m == nil {
			m = &LoadMove{From: st.spec.Cells[f].ID, To: st.spec.Cells[o].ID}
			moves[k] = m
			keys = append(keys, k)
		}
		m.Buckets++
		m.Load += st.bload[b]
		moved[k] = append(moved[k], b)
		tr.MovedBuckets++
		tr.MovedLoad += st.bload[b]
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].from != keys[j].from {
			return keys[i].from < keys[j].from
		}
		return keys[i].to < keys[j].to
	})
	B := float64(to.Buckets())
	for _, k := range keys {
		m := moves[k]
		m.Share = float64(m.Buckets) / B
		m.Ranges = RangesOf(moved[k]).Strings()
		tr.Moves = append(tr.Moves, *m)
	}
	tr.MovedShare = float64(tr.MovedBuckets) / B
	tr.TenantsMoved = overriddenMoves(from, to)
	for i, c := range st.spec.Cells {
		tr.Cells = append(tr.Cells, CellLoadChange{
			Cell: c.ID, FromState: st.states0[i], ToState: c.State,
			FromBuckets: st.count0[i], ToBuckets: st.count[i], FromLoad: st.load0[i], ToLoad: st.load[i],
			Capacity: st.caps[i], CapacityDefault: st.capDefault[i],
			FromUsed: float64(st.load0[i]) / float64(st.caps[i]), ToUsed: float64(st.load[i]) / float64(st.caps[i]),
		})
	}
	return tr, nil
}
