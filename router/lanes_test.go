package router

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// ShardCount agrees with exact big-integer binomials for every M ≤ 256
// and r ≤ M: the value where it fits MaxShards, ok=false where not.
func TestShardCountIsExactEverywhere(t *testing.T) {
	limit := new(big.Int).SetUint64(MaxShards)
	for m := 1; m <= MaxLanes; m++ {
		for r := 0; r <= m; r++ {
			want := new(big.Int).Binomial(int64(m), int64(r))
			got, ok := ShardCount(m, r)
			if fits := want.Cmp(limit) <= 0; ok != fits || (ok && got != want.Uint64()) {
				t.Fatalf("ShardCount(%d, %d) = %d, %v; C = %s (fits 2^53-1: %v)", m, r, got, ok, want, fits)
			}
		}
	}
	for _, bad := range [][2]int{{0, 0}, {-1, 1}, {4, 5}, {4, -1}} {
		if _, ok := ShardCount(bad[0], bad[1]); ok {
			t.Errorf("ShardCount(%d, %d) is ok", bad[0], bad[1])
		}
	}
}

func TestLaneShardRange(t *testing.T) {
	cases := []struct{ m, low, high int }{
		{1, 1, 2}, {8, 8, 9}, {55, 55, 56}, {64, 19, 45}, {256, 8, 248},
	}
	for _, c := range cases {
		low, high := LaneShardRange(c.m)
		if low != c.low || high != c.high {
			t.Errorf("LaneShardRange(%d) = %d, %d; want %d, %d", c.m, low, high, c.low, c.high)
		}
	}
	// The edges of the cap, both sides.
	for _, c := range []struct {
		m, r int
		ok   bool
	}{
		{256, 8, true}, {256, 9, false}, {256, 128, false}, {256, 247, false}, {256, 248, true}, {256, 256, true},
		{64, 19, true}, {64, 20, false}, {64, 45, true}, {64, 44, false}, {1, 1, true}, {8, 2, true},
		{0, 1, false}, {257, 2, false}, {8, 0, false}, {8, 9, false},
	} {
		err := CheckLanes(c.m, c.r)
		if (err == nil) != c.ok {
			t.Errorf("CheckLanes(%d, %d) = %v, want ok=%v", c.m, c.r, err, c.ok)
		}
	}
	err := CheckLanes(256, 128)
	if err == nil || !strings.Contains(err.Error(), "allowed shard sizes are 1-8 or 248-256") {
		t.Errorf("CheckLanes(256, 128) = %v; want the allowed ranges named", err)
	}
}

func checkShard(t *testing.T, l *Lanes, shard []int, what string) {
	t.Helper()
	if len(shard) != l.R() {
		t.Fatalf("%s: %d lanes %v, want %d", what, len(shard), shard, l.R())
	}
	for i, c := range shard {
		if c < 0 || c >= l.M() || (i > 0 && c <= shard[i-1]) {
			t.Fatalf("%s: lanes %v are not distinct, ascending and in [0, %d)", what, shard, l.M())
		}
	}
}

// unrank(rank(x)) = x and rank(unrank(n)) = n: exhaustively for small
// layouts, at the extremes and at random ranks for large ones.
func TestRankUnrankRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, mr := range [][2]int{{1, 1}, {2, 1}, {5, 5}, {8, 2}, {10, 3}, {12, 6}, {16, 4}, {20, 10}, {64, 2}, {64, 19}, {64, 45}, {200, 3}, {256, 1}, {256, 8}, {256, 248}, {256, 255}, {256, 256}} {
		l := MustLanes(mr[0], mr[1])
		var ranks []uint64
		if l.Shards() <= 5000 {
			for n := uint64(0); n < l.Shards(); n++ {
				ranks = append(ranks, n)
			}
		} else {
			ranks = append(ranks, 0, 1, l.Shards()/2, l.Shards()-2, l.Shards()-1)
			for i := 0; i < 2000; i++ {
				ranks = append(ranks, rng.Uint64N(l.Shards()))
			}
		}
		seen := map[string]bool{}
		for _, n := range ranks {
			shard := l.Unrank(n, nil)
			checkShard(t, l, shard, fmt.Sprintf("M=%d r=%d rank %d", l.M(), l.R(), n))
			back, err := l.Rank(shard)
			if err != nil || back != n {
				t.Fatalf("M=%d r=%d: Rank(Unrank(%d) = %v) = %d, %v", l.M(), l.R(), n, shard, back, err)
			}
			seen[fmt.Sprint(shard)] = true
		}
		if len(seen) != len(ranks) && l.Shards() <= 5000 {
			t.Errorf("M=%d r=%d: %d ranks gave only %d distinct shards", l.M(), l.R(), len(ranks), len(seen))
		}
		// The extremes of colex order: rank 0 is the lowest lanes, the
		// last rank the highest.
		first, last := l.Unrank(0, nil), l.Unrank(l.Shards()-1, nil)
		for i := 0; i < l.R(); i++ {
			if first[i] != i || last[i] != l.M()-l.R()+i {
				t.Fatalf("M=%d r=%d: rank 0 = %v, last rank = %v", l.M(), l.R(), first, last)
			}
		}
	}
	// Random combinations of a large layout rank and unrank to themselves.
	l := MustLanes(256, 8)
	for i := 0; i < 2000; i++ {
		shard := rng.Perm(256)[:8]
		slices.Sort(shard)
		n, err := l.Rank(shard)
		if err != nil || n >= l.Shards() || !slices.Equal(l.Unrank(n, nil), shard) {
			t.Fatalf("unrank(rank(%v)) = unrank(%d, %v) = %v", shard, n, err, l.Unrank(n, nil))
		}
	}
}

func TestRankRefusesNonShards(t *testing.T) {
	l := MustLanes(8, 2)
	for _, bad := range [][]int{{1}, {1, 2, 3}, {2, 1}, {3, 3}, {-1, 2}, {2, 8}} {
		if _, err := l.Rank(bad); err == nil {
			t.Errorf("Rank(%v) accepted", bad)
		}
	}
}

// chiSquareLimit is the 99.9% quantile of chi-square with df degrees of
// freedom (Wilson–Hilferty). The tests use fixed tenant ids, so they are
// deterministic: a failure means a real non-uniformity, not bad luck.
func chiSquareLimit(df int) float64 {
	const z = 3.0902 // 99.9%
	d := float64(df)
	x := 1 - 2/(9*d) + z*math.Sqrt(2/(9*d))
	return d * x * x * x
}

func chiSquare(counts map[uint64]int, cells uint64, total int) float64 {
	exp := float64(total) / float64(cells)
	var chi float64
	for n := uint64(0); n < cells; n++ {
		d := float64(counts[n]) - exp
		chi += d * d / exp
	}
	return chi
}

// Every shard is reachable and hit uniformly by tenant ids, for several
// (M, r); each tenant's lanes are distinct, ascending and in range.
func TestLanesUniformOverShards(t *testing.T) {
	for _, mr := range [][2]int{{1, 1}, {4, 4}, {6, 1}, {8, 2}, {10, 3}, {16, 4}, {12, 6}} {
		l := MustLanes(mr[0], mr[1])
		perShard := 60
		total := int(l.Shards()) * perShard
		counts := map[uint64]int{}
		var buf []int
		for i := 0; i < total; i++ {
			tenant := fmt.Sprintf("tenant-%d", i)
			var ok bool
			buf, ok = l.Of(tenant, buf[:0])
			if !ok {
				t.Fatal(tenant)
			}
			checkShard(t, l, buf, tenant)
			n, _ := l.Rank(buf)
			counts[n]++
		}
		if uint64(len(counts)) != l.Shards() {
			t.Errorf("M=%d r=%d: %d tenants reached %d of %d shards", l.M(), l.R(), total, len(counts), l.Shards())
		}
		if l.Shards() > 1 {
			chi, limit := chiSquare(counts, l.Shards(), total), chiSquareLimit(int(l.Shards())-1)
			if chi > limit {
				t.Errorf("M=%d r=%d: chi-square %.1f over %d shards exceeds %.1f (99.9%%): shards are not hit uniformly", l.M(), l.R(), chi, l.Shards(), limit)
			}
		}
	}
}

// Lanes are independent of the bucket: the tenants of any one cell (a
// quarter of the buckets, or a single bucket) still spread uniformly over
// the shards — a contingency test of bucket group × shard.
func TestLanesIndependentOfBucket(t *testing.T) {
	l := MustLanes(8, 2)
	const groups, B = 4, 1024
	counts := make([]map[uint64]int, groups)
	for g := range counts {
		counts[g] = map[uint64]int{}
	}
	single := map[uint64]int{}
	singleTotal := 0
	totals := make([]int, groups)
	for i := 0; i < 400_000; i++ {
		tenant := fmt.Sprintf("t%x", i*7919)
		h := Hash(tenant)
		bucket := int(h % B)
		n := l.RankOf(LaneHashOf(h))
		g := bucket * groups / B // contiguous ranges, as cells own them
		counts[g][n]++
		totals[g]++
		if bucket == 513 {
			single[n]++
			singleTotal++
		}
	}
	for g := 0; g < groups; g++ {
		chi, limit := chiSquare(counts[g], l.Shards(), totals[g]), chiSquareLimit(int(l.Shards())-1)
		if chi > limit {
			t.Errorf("buckets %d-%d: chi-square %.1f > %.1f: the lanes of one cell's tenants are not uniform", g*B/groups, (g+1)*B/groups-1, chi, limit)
		}
	}
	if chi, limit := chiSquare(single, l.Shards(), singleTotal), chiSquareLimit(int(l.Shards())-1); chi > limit {
		t.Errorf("bucket 513 (%d tenants): chi-square %.1f > %.1f", singleTotal, chi, limit)
	}
}

// Computing lanes leaves routing alone: the route's bucket and cell are
// what the table says, the lanes from the route's hash equal the lanes
// from the id, and the same tenant gets the same lanes in every cell with
// the same (M, r).
func TestLanesLeaveTheBucketAlone(t *testing.T) {
	tb := demoTable(t)
	l := MustLanes(8, 2)
	for i := 0; i < 5000; i++ {
		tenant := fmt.Sprintf("tenant-%d", i)
		before := tb.Route(tenant)
		fromID, _ := l.Of(tenant, nil)
		fromRoute := l.OfHash(before.Hash, nil)
		after := tb.Route(tenant)
		if before != after || before.Bucket != int(Hash(tenant)%uint64(tb.Buckets())) {
			t.Fatalf("%s: route %+v then %+v", tenant, before, after)
		}
		if !slices.Equal(fromID, fromRoute) {
			t.Fatalf("%s: lanes %v from the id, %v from the route's hash", tenant, fromID, fromRoute)
		}
	}
}

func TestLanesOfInvalidTenant(t *testing.T) {
	l := MustLanes(8, 2)
	for _, bad := range []string{"", "a b", "bad\xff", strings.Repeat("x", 129)} {
		if got, ok := l.Of(bad, []int{7}); ok || !slices.Equal(got, []int{7}) {
			t.Errorf("Of(%q) = %v, %v", bad, got, ok)
		}
	}
}

func TestLanesEdges(t *testing.T) {
	if got, _ := MustLanes(1, 1).Of("acme", nil); !slices.Equal(got, []int{0}) {
		t.Errorf("M=1: %v", got)
	}
	all, _ := MustLanes(256, 256).Of("東京", nil)
	for i, c := range all {
		if c != i {
			t.Fatalf("r = M = 256: %v", all)
		}
	}
	if len(all) != 256 {
		t.Fatalf("r = M = 256: %d lanes", len(all))
	}
	if got := FormatLanes([]int{3, 17}); got != "3,17" {
		t.Errorf("FormatLanes = %q", got)
	}
	if got := FormatLanes([]int{0}); got != "0" {
		t.Errorf("FormatLanes = %q", got)
	}
}

func TestLanesDoNotAllocate(t *testing.T) {
	l := MustLanes(64, 2)
	buf := make([]int, 0, 2)
	if n := testing.AllocsPerRun(100, func() { buf, _ = l.Of("tenant-42", buf[:0]) }); n != 0 {
		t.Errorf("Of allocates %.0f times", n)
	}
}

func BenchmarkLanes(b *testing.B) {
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = fmt.Sprintf("tenant-%d", i*7919)
	}
	for _, mr := range [][2]int{{8, 2}, {64, 2}, {64, 4}, {256, 8}} {
		l := MustLanes(mr[0], mr[1])
		hashes := make([]uint64, len(ids))
		for i, id := range ids {
			hashes[i] = Hash(id)
		}
		// What lanes add to a route: the route already has the FNV hash.
		b.Run(fmt.Sprintf("added-to-route/M=%d,r=%d", mr[0], mr[1]), func(b *testing.B) {
			buf := make([]int, 0, mr[1])
			for i := 0; i < b.N; i++ {
				buf = l.OfHash(hashes[i&1023], buf[:0])
			}
		})
		b.Run(fmt.Sprintf("from-id/M=%d,r=%d", mr[0], mr[1]), func(b *testing.B) {
			buf := make([]int, 0, mr[1])
			for i := 0; i < b.N; i++ {
				buf, _ = l.Of(ids[i&1023], buf[:0])
			}
		})
	}
}
