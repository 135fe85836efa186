package router

import (
	"fmt"
	"sort"
)

// DiffReport says what changes between two versions of the routing table,
// in the terms a reviewer needs: how much traffic moves, and where.
//
// What is counted:
//   - MovedBuckets / MovedBucketShare: buckets whose cell differs.
//   - HashedTenantShare: the share of tenants *without* an override (in
//     either version) whose cell changes. Tenants spread uniformly over
//     buckets, so this equals MovedBucketShare; when B changes it is the
//     share of the hash space whose cell changes.
//   - OverriddenTenantsMoved: every tenant with an override in either
//     version whose effective cell (override cell, else bucket cell)
//     changes, listed by name — these are exact, not estimated.
type DiffReport struct {
	FromVersion int64 `json:"fromVersion"`
	ToVersion   int64 `json:"toVersion"`
	// Changed is true when anything but the version differs.
	Changed bool `json:"changed"`
	// VersionOK is false when the content changed but the version did not
	// go up (see CheckSuccessor).
	VersionOK bool `json:"versionOk"`

	FromBuckets int `json:"fromBuckets"`
	ToBuckets   int `json:"toBuckets"`
	// Rebucketed is true when B changed: every tenant is rehashed, moves
	// are shares of the hash space and bucket counts are zero.
	Rebucketed bool `json:"rebucketed"`
	// Estimated is true when a rebucketing share was sampled rather than
	// counted exactly (lcm of the two B above 2^24).
	Estimated bool `json:"estimated"`

	MovedBuckets           int          `json:"movedBuckets"`
	MovedBucketShare       float64      `json:"movedBucketShare"`
	HashedTenantShare      float64      `json:"hashedTenantShare"`
	Moves                  []BucketMove `json:"moves"`
	OverriddenTenantsMoved []TenantMove `json:"overriddenTenantsMoved"`

	CellsAdded       []string         `json:"cellsAdded"`
	CellsRemoved     []string         `json:"cellsRemoved"`
	CellsChanged     []CellChange     `json:"cellsChanged"`
	OverridesAdded   []Override       `json:"overridesAdded"`
	OverridesRemoved []Override       `json:"overridesRemoved"`
	OverridesChanged []OverrideChange `json:"overridesChanged"`
	// CapacitiesChanged and LoadChanged: the planning data of the table
	// (capacity.go), which changes no route but is reviewed like one.
	CapacitiesChanged []CapacityChange `json:"capacitiesChanged"`
	LoadChanged       bool             `json:"loadChanged"`
}

// BucketMove is the traffic moving from one cell to another.
type BucketMove struct {
	From    string   `json:"from"`
	To      string   `json:"to"`
	Buckets int      `json:"buckets"`          // 0 when rebucketed
	Share   float64  `json:"share"`            // of all buckets (of the hash space)
	Ranges  []string `json:"ranges,omitempty"` // the moving buckets, as in routing.json
}

// TenantMove is one overridden tenant whose cell changes.
type TenantMove struct {
	Tenant string `json:"tenant"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// CellChange is a cell present in both versions whose state, weight or
// bucket count changed.
type CellChange struct {
	Cell        string    `json:"cell"`
	FromState   CellState `json:"fromState"`
	ToState     CellState `json:"toState"`
	FromWeight  int       `json:"fromWeight"`
	ToWeight    int       `json:"toWeight"`
	FromBuckets int       `json:"fromBuckets"`
	ToBuckets   int       `json:"toBuckets"`
}

// CapacityChange is a cell whose capacity, as written in the table (0:
// derived from the weight), changed.
type CapacityChange struct {
	Cell string `json:"cell"`
	From int64  `json:"from"`
	To   int64  `json:"to"`
}

// OverrideChange is a tenant whose override differs between versions.
type OverrideChange struct {
	Tenant string   `json:"tenant"`
	From   Override `json:"from"`
	To     Override `json:"to"`
}

// Diff compares two versions of the table. old may be nil (a new table):
// then everything is added and nothing moves; new must not be nil.
func Diff(old, new *Table) DiffReport {
	r := DiffReport{
		ToVersion: new.Version(), ToBuckets: new.Buckets(),
		Moves: []BucketMove{}, OverriddenTenantsMoved: []TenantMove{},
		CellsAdded: []string{}, CellsRemoved: []string{}, CellsChanged: []CellChange{},
		OverridesAdded: []Override{}, OverridesRemoved: []Override{}, OverridesChanged: []OverrideChange{},
		CapacitiesChanged: []CapacityChange{},
	}
	if old == nil {
		r.Changed, r.VersionOK = true, true
		r.CellsAdded = new.CellIDs()
		r.OverridesAdded = new.Overrides()
		return r
	}
	r.FromVersion, r.FromBuckets = old.Version(), old.Buckets()

	diffBuckets(old, new, &r)
	diffCells(old, new, &r)
	diffOverrides(old, new, &r)
	r.LoadChanged = !old.spec.Load.equal(new.spec.Load)

	r.Changed = r.MovedBuckets > 0 || r.Rebucketed || len(r.CellsAdded)+len(r.CellsRemoved)+len(r.CellsChanged) > 0 ||
		len(r.OverridesAdded)+len(r.OverridesRemoved)+len(r.OverridesChanged) > 0 || len(r.CapacitiesChanged) > 0 || r.LoadChanged
	r.VersionOK = !r.Changed || new.Version() > old.Version()
	if new.Version() < old.Version() {
		r.VersionOK = false
	}
	return r
}

// CheckSuccessor is the rule CI applies to a pull request: a changed table
// must carry a higher version, and a version never goes down.
func CheckSuccessor(old, new *Table) error {
	d := Diff(old, new)
	switch {
	case new.Version() < old.Version():
		return fmt.Errorf("version: went down from %d to %d; versions only go up", old.Version(), new.Version())
	case !d.VersionOK:
		return fmt.Errorf("version: the table changed but version is still %d; set it to %d", new.Version(), old.Version()+1)
	}
	return nil
}

func diffBuckets(old, new *Table, r *DiffReport) {
	type pair struct{ from, to cellIndex }
	if old.Buckets() == new.Buckets() {
		moved := map[pair][]int{}
		for b := range old.bucketCell {
			f, t := old.bucketCell[b], new.bucketCell[b]
			if old.cellIDs[f] != new.cellIDs[t] {
				k := pair{f, t}
				moved[k] = append(moved[k], b)
				r.MovedBuckets++
			}
		}
		for k, bs := range moved {
			r.Moves = append(r.Moves, BucketMove{
				From: old.cellIDs[k.from], To: new.cellIDs[k.to], Buckets: len(bs),
				Share: float64(len(bs)) / float64(old.Buckets()), Ranges: RangesOf(bs).Strings(),
			})
		}
		r.MovedBucketShare = float64(r.MovedBuckets) / float64(old.Buckets())
		r.HashedTenantShare = r.MovedBucketShare
	} else {
		// Over h uniform in 2^64, (h mod B1, h mod B2) is uniform over the
		// residues of x in [0, lcm): count x whose cell changes.
		r.Rebucketed = true
		b1, b2 := uint64(old.Buckets()), uint64(new.Buckets())
		l := b1 / gcd(b1, b2) * b2
		counts := map[pair]uint64{}
		var total, movedN uint64
		visit := func(x uint64) {
			f, t := old.bucketCell[x%b1], new.bucketCell[x%b2]
			total++
			if old.cellIDs[f] != new.cellIDs[t] {
				counts[pair{f, t}]++
				movedN++
			}
		}
		if l <= 1<<24 {
			for x := uint64(0); x < l; x++ {
				visit(x)
			}
		} else {
			r.Estimated = true
			seed := uint64(0x243F6A8885A308D3)
			for i := 0; i < 1<<20; i++ {
				visit(splitmix64(&seed))
			}
		}
		for k, n := range counts {
			r.Moves = append(r.Moves, BucketMove{From: old.cellIDs[k.from], To: new.cellIDs[k.to], Share: float64(n) / float64(total)})
		}
		r.HashedTenantShare = float64(movedN) / float64(total)
		r.MovedBucketShare = r.HashedTenantShare
	}
	sort.Slice(r.Moves, func(i, j int) bool {
		if r.Moves[i].From != r.Moves[j].From {
			return r.Moves[i].From < r.Moves[j].From
		}
		return r.Moves[i].To < r.Moves[j].To
	})
}

func diffCells(old, new *Table, r *DiffReport) {
	for _, id := range old.cellIDs {
		if _, ok := new.cellByID[id]; !ok {
			r.CellsRemoved = append(r.CellsRemoved, id)
		}
	}
	for _, id := range new.cellIDs {
		oc, inOld := old.Cell(id)
		nc, _ := new.Cell(id)
		if !inOld {
			r.CellsAdded = append(r.CellsAdded, id)
			continue
		}
		if oc.Capacity != nc.Capacity {
			r.CapacitiesChanged = append(r.CapacitiesChanged, CapacityChange{Cell: id, From: oc.Capacity, To: nc.Capacity})
		}
		if oc.State != nc.State || oc.Weight != nc.Weight || oc.Buckets.Count() != nc.Buckets.Count() {
			r.CellsChanged = append(r.CellsChanged, CellChange{
				Cell: id, FromState: oc.State, ToState: nc.State, FromWeight: oc.Weight, ToWeight: nc.Weight,
				FromBuckets: oc.Buckets.Count(), ToBuckets: nc.Buckets.Count(),
			})
		}
	}
}

func diffOverrides(old, new *Table, r *DiffReport) {
	a, b := old.spec.Overrides, new.spec.Overrides
	moved := func(tenant string) {
		from, to := old.Route(tenant).Cell, new.Route(tenant).Cell
		if from != to {
			r.OverriddenTenantsMoved = append(r.OverriddenTenantsMoved, TenantMove{Tenant: tenant, From: from, To: to})
		}
	}
	// Both lists are sorted by tenant: merge.
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Tenant < b[j].Tenant):
			r.OverridesRemoved = append(r.OverridesRemoved, a[i])
			moved(a[i].Tenant)
			i++
		case i == len(a) || b[j].Tenant < a[i].Tenant:
			r.OverridesAdded = append(r.OverridesAdded, b[j])
			moved(b[j].Tenant)
			j++
		default:
			if a[i] != b[j] {
				r.OverridesChanged = append(r.OverridesChanged, OverrideChange{Tenant: a[i].Tenant, From: a[i], To: b[j]})
				moved(a[i].Tenant)
			}
			i++
			j++
		}
	}
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func splitmix64(s *uint64) uint64 {
	*s += 0x9E3779B97F4A7C15
	z := *s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}
