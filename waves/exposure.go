package waves

import (
	"time"

	"github.com/cellctl/cellctl/router"
)

// DefaultCellUpdate is the update time a dry run assumes per cell when the
// caller has no measurement (an image change: ECS replaces the tasks and
// waits for the new ones to pass the ALB health check).
const DefaultCellUpdate = 5 * time.Minute

// Estimate is what a dry run knows about the cells' updates.
type Estimate struct {
	// CellUpdate is the expected time of one cell's update (0: DefaultCellUpdate).
	CellUpdate time.Duration
	// Unchanged lists cells whose desired state already matches what they
	// run (from a preview): they are not updated and do not bake.
	Unchanged map[string]bool
}

// Exposure is the share of the routing table a wave's cells serve (the
// shares of WaveExposure, as the rollout's dry run shows them).
type Exposure struct {
	// Buckets is the fraction (0–1) of hash buckets mapped to the wave's cells.
	Buckets float64 `json:"buckets"`
	// Pinned is the fraction (0–1) of pinned tenants on the wave's cells.
	Pinned float64 `json:"pinned"`
}

// Share is the wave's own share of buckets and pinned tenants.
func (e WaveExposure) Share() Exposure {
	return Exposure{Buckets: e.BucketShare, Pinned: e.PinnedShare}
}

// WaveExposure is what one wave puts at risk and how long it takes.
type WaveExposure struct {
	Wave  string   `json:"wave"`
	Cells []string `json:"cells"`
	// Changed is how many of the wave's cells are updated.
	Changed int `json:"changed"`
	// Buckets are the routing buckets the wave's cells serve, of Total.
	Buckets      int     `json:"buckets"`
	TotalBuckets int     `json:"totalBuckets"`
	BucketShare  float64 `json:"bucketShare"`
	// Pinned are the pinned (overridden) tenants the wave's cells serve,
	// of TotalPinned.
	Pinned      int     `json:"pinnedTenants"`
	TotalPinned int     `json:"totalPinnedTenants"`
	PinnedShare float64 `json:"pinnedShare"`
	// Cumulative* are the same after this wave: everything the rollout
	// has exposed once this wave has updated.
	CumulativeBuckets     int     `json:"cumulativeBuckets"`
	CumulativeBucketShare float64 `json:"cumulativeBucketShare"`
	CumulativePinned      int     `json:"cumulativePinnedTenants"`
	CumulativePinnedShare float64 `json:"cumulativePinnedShare"`
	// Update is the expected update time (batches of max_parallel cells),
	// Bake the bake (0 when nothing changes), Wall their sum and
	// CumulativeWall the rollout's expected time up to this wave's end.
	Update         time.Duration `json:"updateNs"`
	Bake           time.Duration `json:"bakeNs"`
	Wall           time.Duration `json:"wallNs"`
	CumulativeWall time.Duration `json:"cumulativeWallNs"`
}

// Exposure computes, per wave, the share of routing buckets and of pinned
// tenants the wave exposes to the new version, the cumulative exposure, and
// the expected wall time. A bucket is exposed when the table maps it to a
// cell of the wave; a pinned tenant when its override's cell — the cell
// serving it now, for a migrating tenant too — is in the wave. With no
// routing table (a fleet without a router yet) every share is 0.
func (p *Plan) Exposure(t *router.Table, est Estimate) []WaveExposure {
	perUpdate := est.CellUpdate
	if perUpdate <= 0 {
		perUpdate = DefaultCellUpdate
	}
	buckets := map[string]int{}
	pinned := map[string]int{}
	totalBuckets, totalPinned := 0, 0
	if t != nil {
		totalBuckets = t.Buckets()
		for _, c := range t.Cells() {
			buckets[c.ID] = c.Buckets.Count()
		}
		overrides := t.Overrides()
		totalPinned = len(overrides)
		for _, o := range overrides {
			pinned[o.Cell]++
		}
	}
	share := func(n, of int) float64 {
		if of == 0 {
			return 0
		}
		return float64(n) / float64(of)
	}
	var out []WaveExposure
	var cumB, cumP int
	var cumWall time.Duration
	for _, w := range p.Waves {
		e := WaveExposure{Wave: w.Name, Cells: append([]string(nil), w.Cells...), TotalBuckets: totalBuckets, TotalPinned: totalPinned}
		for _, c := range w.Cells {
			e.Buckets += buckets[c]
			e.Pinned += pinned[c]
			if !est.Unchanged[c] {
				e.Changed++
			}
		}
		cumB += e.Buckets
		cumP += e.Pinned
		e.BucketShare, e.PinnedShare = share(e.Buckets, totalBuckets), share(e.Pinned, totalPinned)
		e.CumulativeBuckets, e.CumulativePinned = cumB, cumP
		e.CumulativeBucketShare, e.CumulativePinnedShare = share(cumB, totalBuckets), share(cumP, totalPinned)
		if e.Changed > 0 {
			batch := w.Parallel
			if batch <= 0 || batch > e.Changed {
				batch = e.Changed
			}
			batches := (e.Changed + batch - 1) / batch
			e.Update = time.Duration(batches) * perUpdate
			e.Bake = w.Bake
		}
		e.Wall = e.Update + e.Bake
		cumWall += e.Wall
		e.CumulativeWall = cumWall
		out = append(out, e)
	}
	return out
}
