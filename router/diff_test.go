package router

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestDiffCountsMovesAndChanges(t *testing.T) {
	old := demoTable(t) // a 0-255, b 256-511, c 512-767, d 768-1023; acme → b (bucket in c); globex a → c migrating
	s := old.Spec()
	s.Version = 2
	set := func(id string, f func(*CellSpec)) {
		for i := range s.Cells {
			if s.Cells[i].ID == id {
				f(&s.Cells[i])
			}
		}
	}
	set("cell-a", func(c *CellSpec) { c.Buckets = Ranges{{10, 255}} })
	set("cell-b", func(c *CellSpec) { c.Buckets = Ranges{{0, 9}, {266, 511}} })
	set("cell-c", func(c *CellSpec) { c.Buckets = Ranges{{512, 767}, {1000, 1023}} })
	set("cell-d", func(c *CellSpec) { c.Buckets = Ranges{{768, 999}}; c.Weight = 2 })
	s.Cells = append(s.Cells, CellSpec{ID: "cell-e", State: CellActive, Weight: 1, Buckets: Ranges{{256, 265}}})
	s.Overrides = []Override{
		{Tenant: "globex", Cell: "cell-c", State: OverrideActive},   // migration finished: a → c
		{Tenant: "initech", Cell: "cell-d", State: OverrideActive},  // bucket 65 is cell-a's: moves a → d
		{Tenant: "tenant-1", Cell: "cell-a", State: OverrideActive}, // bucket 139 is cell-a's already: no move
		// acme's override is removed: back to its bucket 527 in cell-c.
	}
	d := Diff(old, mustNew(t, s))

	if !d.Changed || !d.VersionOK || d.FromVersion != 1 || d.ToVersion != 2 || d.Rebucketed {
		t.Errorf("header: %+v", d)
	}
	if d.MovedBuckets != 44 || d.MovedBucketShare != 44.0/1024 || d.HashedTenantShare != 44.0/1024 {
		t.Errorf("moved %d buckets (share %v, tenants %v), want 44", d.MovedBuckets, d.MovedBucketShare, d.HashedTenantShare)
	}
	wantMoves := []BucketMove{
		{From: "cell-a", To: "cell-b", Buckets: 10, Share: 10.0 / 1024, Ranges: []string{"0-9"}},
		{From: "cell-b", To: "cell-e", Buckets: 10, Share: 10.0 / 1024, Ranges: []string{"256-265"}},
		{From: "cell-d", To: "cell-c", Buckets: 24, Share: 24.0 / 1024, Ranges: []string{"1000-1023"}},
	}
	if !reflect.DeepEqual(d.Moves, wantMoves) {
		t.Errorf("moves %+v\nwant %+v", d.Moves, wantMoves)
	}
	wantTenants := []TenantMove{{"acme", "cell-b", "cell-c"}, {"globex", "cell-a", "cell-c"}, {"initech", "cell-a", "cell-d"}}
	if !reflect.DeepEqual(d.OverriddenTenantsMoved, wantTenants) {
		t.Errorf("overridden tenants moved %+v\nwant %+v", d.OverriddenTenantsMoved, wantTenants)
	}
	if !reflect.DeepEqual(d.CellsAdded, []string{"cell-e"}) || len(d.CellsRemoved) != 0 {
		t.Errorf("cells added %v removed %v", d.CellsAdded, d.CellsRemoved)
	}
	wantCells := []CellChange{
		{Cell: "cell-a", FromState: CellActive, ToState: CellActive, FromWeight: 1, ToWeight: 1, FromBuckets: 256, ToBuckets: 246},
		{Cell: "cell-c", FromState: CellActive, ToState: CellActive, FromWeight: 1, ToWeight: 1, FromBuckets: 256, ToBuckets: 280},
		{Cell: "cell-d", FromState: CellActive, ToState: CellActive, FromWeight: 1, ToWeight: 2, FromBuckets: 256, ToBuckets: 232},
	}
	if !reflect.DeepEqual(d.CellsChanged, wantCells) {
		t.Errorf("cells changed %+v\nwant %+v", d.CellsChanged, wantCells)
	}
	names := func(os []Override) string {
		var n []string
		for _, o := range os {
			n = append(n, o.Tenant)
		}
		return strings.Join(n, ",")
	}
	if names(d.OverridesAdded) != "initech,tenant-1" || names(d.OverridesRemoved) != "acme" ||
		len(d.OverridesChanged) != 1 || d.OverridesChanged[0].Tenant != "globex" || d.OverridesChanged[0].From.State != OverrideMigrating {
		t.Errorf("overrides added %s removed %s changed %+v", names(d.OverridesAdded), names(d.OverridesRemoved), d.OverridesChanged)
	}

	// JSON-friendly: snake_case keys, empty lists as [], not null.
	out, err := json.Marshal(Diff(old, old))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"movedBuckets":0`, `"moves":[]`, `"overriddenTenantsMoved":[]`, `"changed":false`, `"versionOk":true`} {
		if !strings.Contains(string(out), key) {
			t.Errorf("diff JSON lacks %s: %s", key, out)
		}
	}
}

func TestDiffOfNewTable(t *testing.T) {
	d := Diff(nil, demoTable(t))
	if !d.Changed || len(d.CellsAdded) != 4 || len(d.OverridesAdded) != 2 || d.MovedBuckets != 0 {
		t.Errorf("Diff(nil, demo) = %+v", d)
	}
}

func TestDiffRebucketing(t *testing.T) {
	old := demoTable(t)
	// Doubling B with bucket b+1024 on the cell of b moves nobody:
	// h mod 2048 mod 1024 = h mod 1024.
	s := old.Spec()
	s.Version, s.Buckets = 2, 2048
	for i := range s.Cells {
		r := s.Cells[i].Buckets[0]
		s.Cells[i].Buckets = Ranges{r, {r.First + 1024, r.Last + 1024}}
	}
	d := Diff(old, mustNew(t, s))
	if !d.Rebucketed || d.Estimated || d.HashedTenantShare != 0 || len(d.Moves) != 0 {
		t.Errorf("doubling B: %+v", d)
	}

	// B 1024 → 1000: the exact share over the hash space matches what
	// real tenant ids do.
	cells := []CellWeight{{"cell-a", 1}, {"cell-b", 1}, {"cell-c", 1}, {"cell-d", 1}}
	to := tableFrom(t, cells, 1000)
	d = Diff(old, to)
	moved, n := 0, 200000
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("tenant-%d", i)
		if old.Route(id).BucketCell != to.Route(id).BucketCell {
			moved++
		}
	}
	if empirical := float64(moved) / float64(n); math.Abs(empirical-d.HashedTenantShare) > 0.01 {
		t.Errorf("rebucketing share %.4f, but %.4f of sample tenants moved", d.HashedTenantShare, empirical)
	}
	var sum float64
	for _, m := range d.Moves {
		sum += m.Share
	}
	if math.Abs(sum-d.HashedTenantShare) > 1e-9 {
		t.Errorf("move shares add up to %v, total %v", sum, d.HashedTenantShare)
	}
}

func TestCheckSuccessor(t *testing.T) {
	old := demoTable(t)
	same := old.Spec()
	if err := CheckSuccessor(old, mustNew(t, same)); err != nil {
		t.Errorf("unchanged table: %v", err)
	}
	changed := old.Spec()
	changed.Overrides = changed.Overrides[:1]
	if err := CheckSuccessor(old, mustNew(t, changed)); err == nil || err.Error() != "version: the table changed but version is still 1; set it to 2" {
		t.Errorf("changed without bump: %v", err)
	}
	changed.Version = 2
	if err := CheckSuccessor(old, mustNew(t, changed)); err != nil {
		t.Errorf("changed with bump: %v", err)
	}
	if err := CheckSuccessor(mustNew(t, changed), old); err == nil || err.Error() != "version: went down from 2 to 1; versions only go up" {
		t.Errorf("version going down: %v", err)
	}
}
