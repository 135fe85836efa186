package edge

import (
	"fmt"
	"math"
	"sort"

	"github.com/cellctl/cellctl/router"
)

// What a routing table costs the edge function, and what Lambda@Edge
// allows. The memory figures are measured by router/edge/measure.js (a
// fresh node process loading the package `cellctl router package` writes,
// as a cold start does) and recorded in docs/BENCHMARKS.md; a table is
// refused at load (so at `cellctl plan`) when it would not fit.
const (
	// DefaultMemoryMB is the function's memory unless the router stack
	// sets cells:edgeMemoryMb.
	DefaultMemoryMB = 128
	// MinMemoryMB and MaxMemoryMB bound a Lambda function's memory; for
	// origin-request triggers Lambda@Edge allows the Lambda range
	// ("Quotas on Lambda@Edge": function memory size, origin request and
	// response: same as Lambda quotas; viewer triggers: 128 MB).
	MinMemoryMB = 128
	MaxMemoryMB = 10240
	// MaxPackageBytes is Lambda@Edge's limit on the compressed size of an
	// origin-request function and its libraries ("Quotas on Lambda@Edge":
	// 50 MB; viewer triggers: 1 MB).
	MaxPackageBytes = 50 << 20
	// RuntimeMiB is what the function uses before the table: an empty
	// node 20 process measured 41 MiB RSS, plus the Lambda runtime client.
	RuntimeMiB = 50
	// Headroom multiplies the measured peak: request handling, GC timing
	// and node version differences.
	Headroom = 1.25
)

// measuredPeak is the peak RSS (MiB above an empty node process) while
// index.js loads a package whose routing image has that many overrides
// (36-byte tenant ids, the demo fleet's 4 cells; docs/BENCHMARKS.md), the
// larger of two runs. The image is read into one buffer and viewed in
// place, so the peak is the image's size and little more. Between points
// the estimate is linear; past the last point it grows at the last
// segment's rate.
var measuredPeak = []struct {
	overrides int
	mib       float64
}{
	{0, 0.8}, {1_000, 4.6}, {100_000, 8.1}, {1_000_000, 25.2},
}

// TablePeakMiB estimates the peak memory, above the runtime, of loading a
// table with n overrides.
func TablePeakMiB(n int) float64 {
	pts := measuredPeak
	i := sort.Search(len(pts), func(i int) bool { return pts[i].overrides >= n })
	switch {
	case i < len(pts) && pts[i].overrides == n:
		return pts[i].mib
	case i == len(pts):
		i = len(pts) - 1 // extrapolate along the last segment
	}
	a, b := pts[i-1], pts[i]
	return a.mib + (b.mib-a.mib)*float64(n-a.overrides)/float64(b.overrides-a.overrides)
}

// NeededMemoryMB is the function memory a table with n overrides needs.
func NeededMemoryMB(n int) int {
	return int(math.Ceil(RuntimeMiB + Headroom*TablePeakMiB(n)))
}

// MaxOverridesFor is the largest override count that fits memoryMB.
func MaxOverridesFor(memoryMB int) int {
	return sort.Search(router.MaxOverrides+1, func(n int) bool { return NeededMemoryMB(n) > memoryMB }) - 1
}

// CheckFits says why the table cannot be served by an edge function with
// memoryMB of memory, or nil: the memory its load needs (measured, with
// headroom) and the size of its package.
func CheckFits(table *router.Table, memoryMB int) error {
	if memoryMB == 0 {
		memoryMB = DefaultMemoryMB
	}
	n := len(table.Overrides())
	if need := NeededMemoryMB(n); need > memoryMB {
		advice := fmt.Sprintf("set cells:edgeMemoryMb to at least %d in the router stack file", need)
		if need > MaxMemoryMB {
			advice = fmt.Sprintf("that is more than Lambda's %d MB: remove overrides (pinned tenants that no longer need a pin)", MaxMemoryMB)
		}
		return fmt.Errorf("%d overrides need about %d MB of edge function memory (%d MiB runtime + %.0f MiB measured for the table × %.2f headroom; docs/BENCHMARKS.md), the function has %d MB, which fits at most %d overrides: %s",
			n, need, RuntimeMiB, TablePeakMiB(n), Headroom, memoryMB, MaxOverridesFor(memoryMB), advice)
	}
	if size := packageBound(table); size > MaxPackageBytes {
		return fmt.Errorf("the edge function package would be %.1f MB (%d overrides), over Lambda@Edge's %d MB limit for origin-request functions: remove overrides",
			float64(size)/(1<<20), n, MaxPackageBytes>>20)
	}
	return nil
}

// packageBound bounds the size of the function package: the code, the
// routing image and config.json with origins as long as a DNS name can
// be. Lambda counts the compressed size, which is smaller.
func packageBound(table *router.Table) int {
	cells := len(table.CellIDs())
	return CodeBytes() + ImageBytes(table, 253*cells) + 1024 + 300*cells
}

// PackageFilesBytes is the uncompressed size of a function package.
func PackageFilesBytes(files map[string]string) int {
	n := 0
	for _, f := range files {
		n += len(f)
	}
	return n
}
