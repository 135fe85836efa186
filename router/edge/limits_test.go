package edge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/router"
)

func tableOf(t testing.TB, n int) *router.Table {
	t.Helper()
	s := router.Spec{Version: 1, Buckets: 16, Cells: []router.CellSpec{
		{ID: "cell-a", State: router.CellActive, Weight: 1, Buckets: router.Ranges{{First: 0, Last: 7}}},
		{ID: "cell-b", State: router.CellActive, Weight: 1, Buckets: router.Ranges{{First: 8, Last: 15}}},
	}}
	s.Overrides = make([]router.Override, n)
	for i := range s.Overrides {
		s.Overrides[i] = router.Override{Tenant: fmt.Sprintf("0c9f0000-7d1e-4b2a-9f3c-%012x", i), Cell: "cell-b", State: router.OverrideActive}
	}
	tb, err := router.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestEstimateFollowsTheMeasurements(t *testing.T) {
	if TablePeakMiB(100_000) != 8.1 || TablePeakMiB(550_000) <= 8.1 || TablePeakMiB(550_000) >= 25.2 {
		t.Fatalf("interpolation: %v %v", TablePeakMiB(100_000), TablePeakMiB(550_000))
	}
	if TablePeakMiB(2_000_000) <= TablePeakMiB(1_000_000) {
		t.Fatal("no extrapolation past the last point")
	}
	// The default 128 MB holds the cap: a million pinned tenants.
	if n := MaxOverridesFor(DefaultMemoryMB); n != router.MaxOverrides {
		t.Fatalf("128 MB fits %d overrides, want the cap %d", n, router.MaxOverrides)
	}
	if need := NeededMemoryMB(router.MaxOverrides); need > DefaultMemoryMB {
		t.Fatalf("a million overrides need %d MB", need)
	}
}

// A table the function cannot load is refused with the numbers (no valid
// table is over 128 MB now; a smaller memory shows the check still holds).
func TestCheckFitsRefusesWhatTheFunctionCannotLoad(t *testing.T) {
	tb := tableOf(t, 100_000)
	need := NeededMemoryMB(100_000)
	if err := CheckFits(tb, need); err != nil {
		t.Fatalf("%d MB must fit: %v", need, err)
	}
	err := CheckFits(tb, need-1)
	want := fmt.Sprintf("100000 overrides need about %d MB of edge function memory (50 MiB runtime + 8 MiB measured for the table × 1.25 headroom; docs/BENCHMARKS.md), the function has %d MB, which fits at most %d overrides: set cells:edgeMemoryMb to at least %d in the router stack file",
		need, need-1, MaxOverridesFor(need-1), need)
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	if err := CheckFits(tableOf(t, router.MaxOverrides), DefaultMemoryMB); err != nil {
		t.Fatalf("a million overrides at 128 MB: %v", err)
	}
	if err := CheckFits(tableOf(t, 0), 0); err != nil {
		t.Fatalf("an empty table: %v", err)
	}
}

// The package bound holds the package the router stack ships, with the
// longest origins, and is not far above it.
func TestPackageSizeIsBounded(t *testing.T) {
	tb := tableOf(t, 1000)
	long := map[string]string{}
	for _, id := range tb.CellIDs() {
		long[id] = strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61) // 253 bytes
	}
	files, err := Package(tb, long, "")
	if err != nil {
		t.Fatal(err)
	}
	got, bound := PackageFilesBytes(files), packageBound(tb)
	if bound < got || bound > got+4096 {
		t.Fatalf("package bound %d for a %d-byte package", bound, got)
	}
	if !strings.Contains(fmt.Sprint(MaxPackageBytes), "52428800") {
		t.Fatal("Lambda@Edge origin-request package limit is 50 MB")
	}
}

// BenchmarkPackage: building the function package at package time (the
// routing image written, checked as the edge checks it, and read back
// against every bucket and override of the table).
func BenchmarkPackage(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		tb := tableOf(b, n)
		origins := map[string]string{"cell-a": "cell-a.cells.example.com", "cell-b": "cell-b.cells.example.com"}
		b.Run(fmt.Sprintf("overrides=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Package(tb, origins, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
