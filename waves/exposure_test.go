package waves

import (
	"os"
	"testing"
	"time"

	"github.com/cellctl/cellctl/router"
)

// TestDemoExposureMatchesTheRoutingTable checks the dry run's numbers for
// the demo fleet against the routing table itself: buckets counted one by
// one with CellOf, pinned tenants by routing each override's tenant.
func TestDemoExposureMatchesTheRoutingTable(t *testing.T) {
	tb, err := router.Load("../stacks/routing.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../stacks/waves.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Parse("stacks/waves.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	got := plan.Exposure(tb, Estimate{})
	if len(got) != len(plan.Waves) {
		t.Fatalf("%d waves", len(got))
	}
	bucketsOf := map[string]int{}
	for b := 0; b < tb.Buckets(); b++ {
		bucketsOf[tb.CellOf(b)]++
	}
	pinnedOf := map[string]int{}
	for _, o := range tb.Overrides() {
		pinnedOf[tb.Route(o.Tenant).Cell]++
	}
	cumB, cumP := 0, 0
	for i, w := range plan.Waves {
		wantB, wantP := 0, 0
		for _, c := range w.Cells {
			wantB += bucketsOf[c]
			wantP += pinnedOf[c]
		}
		cumB += wantB
		cumP += wantP
		e := got[i]
		if e.Buckets != wantB || e.Pinned != wantP || e.CumulativeBuckets != cumB || e.CumulativePinned != cumP ||
			e.TotalBuckets != tb.Buckets() || e.TotalPinned != len(tb.Overrides()) {
			t.Errorf("wave %s: %+v, want buckets %d pinned %d (cumulative %d, %d)", w.Name, e, wantB, wantP, cumB, cumP)
		}
	}
	// And the demo's numbers in words: the canary is cell-a, a quarter of
	// the buckets and globex (one of two pinned tenants).
	c := got[0]
	if c.BucketShare != 0.25 || c.PinnedShare != 0.5 || got[1].CumulativeBucketShare != 0.5 ||
		got[1].CumulativePinnedShare != 1 || got[2].CumulativeBucketShare != 1 {
		t.Errorf("demo exposure %+v", got)
	}
	// canary 5m + 30m; wave-1 5m + 10m; wave-2 two cells one at a time.
	if c.Wall != 35*time.Minute || got[1].Wall != 15*time.Minute || got[2].Update != 10*time.Minute ||
		got[2].CumulativeWall != 35*time.Minute+15*time.Minute+20*time.Minute {
		t.Errorf("wall times %v %v %v %v", c.Wall, got[1].Wall, got[2].Update, got[2].CumulativeWall)
	}
}

func TestExposureWithUnevenCellsAndUnchangedOnes(t *testing.T) {
	tb, err := router.New(router.Spec{Version: 3, Buckets: 16, Cells: []router.CellSpec{
		{ID: "cell-a", State: router.CellActive, Weight: 1, Buckets: router.Ranges{{First: 0, Last: 0}}},
		{ID: "cell-b", State: router.CellActive, Weight: 1, Buckets: router.Ranges{{First: 1, Last: 9}}},
		{ID: "cell-c", State: router.CellActive, Weight: 1, Buckets: router.Ranges{{First: 10, Last: 15}}},
	}, Overrides: []router.Override{
		{Tenant: "t1", Cell: "cell-c", State: router.OverrideActive},
		{Tenant: "t2", Cell: "cell-c", State: router.OverrideActive},
		{Tenant: "t3", Cell: "cell-b", State: router.OverrideMigrating, Target: "cell-a", WriteMode: router.WriteRejectWith503},
	}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Parse("waves.yaml", []byte(`waves:
  - {name: canary, cells: [cell-a], bake: 1h}
  - {name: rest, cells: [cell-b, cell-c], bake: 20m, max_parallel: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := plan.Exposure(tb, Estimate{CellUpdate: 2 * time.Minute, Unchanged: map[string]bool{"cell-a": true, "cell-c": true}})
	a, r := got[0], got[1]
	// The migrating tenant t3 is still served by cell-b, not its target.
	if a.Buckets != 1 || a.BucketShare != 1.0/16 || a.Pinned != 0 || a.Changed != 0 || a.Wall != 0 {
		t.Errorf("canary %+v", a)
	}
	if r.Buckets != 15 || r.Pinned != 3 || r.CumulativeBucketShare != 1 || r.CumulativePinnedShare != 1 ||
		r.Changed != 1 || r.Update != 2*time.Minute || r.Bake != 20*time.Minute || r.CumulativeWall != 22*time.Minute {
		t.Errorf("rest %+v", r)
	}
	if none := plan.Exposure(nil, Estimate{}); none[0].BucketShare != 0 || none[0].Wall != time.Hour+DefaultCellUpdate {
		t.Errorf("without a routing table %+v", none[0])
	}
}
