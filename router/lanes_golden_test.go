package router

import (
	"fmt"
	"path/filepath"
	"testing"
)

// GoldenLanes is one vector of golden_lanes.json: a tenant's lanes in one
// layout, with the intermediate values the edge handler must agree on.
type GoldenLanes struct {
	Tenant   string `json:"tenant"`
	M        int    `json:"m"`
	R        int    `json:"r"`
	Shards   uint64 `json:"shards"`    // C(M, r), ≤ 2^53-1: exact in JSON and JS
	Hash     string `json:"hash"`      // FNV-1a-64, hex
	LaneHash string `json:"lane_hash"` // mix64(hash), hex
	Rank     uint64 `json:"rank"`
	Lanes    string `json:"lanes"` // the X-Cell-Lanes value
}

// GoldenMix is one mix64 vector over edge words (carries, all-ones).
type GoldenMix struct {
	In  string `json:"in"`
	Out string `json:"out"`
}

// goldenLayouts cover M = 1, r = M, M = 256, the default, the issue's
// M = 64, and shard counts on both sides of the handler's 2^21 fast path
// up to the 2^53-1 cap.
var goldenLayouts = [][2]int{
	{1, 1}, {2, 1}, {2, 2}, {8, 2}, {8, 8}, {10, 3}, {16, 4}, {64, 2}, {64, 4}, {64, 19}, {64, 45},
	{55, 27}, {100, 5}, {256, 1}, {256, 2}, {256, 3}, {256, 8}, {256, 248}, {256, 255}, {256, 256},
}

func goldenLaneVectors(tb *Table) []GoldenLanes {
	var ids []string
	for i, id := range goldenTenantIDs(tb) {
		// Every handcrafted id (unicode, 1 and 128 bytes, JS keys) and
		// every 20th generated one.
		if i >= 2500 || i%20 == 0 {
			if ValidTenant(id) == nil {
				ids = append(ids, id)
			}
		}
	}
	var out []GoldenLanes
	for _, mr := range goldenLayouts {
		l := MustLanes(mr[0], mr[1])
		for i, id := range ids {
			if l.R() > 16 && i%5 != 0 {
				continue // long lane lists: fewer tenants keep the file small
			}
			h := Hash(id)
			lh := LaneHashOf(h)
			out = append(out, GoldenLanes{
				Tenant: id, M: l.M(), R: l.R(), Shards: l.Shards(),
				Hash: fmt.Sprintf("%016x", h), LaneHash: fmt.Sprintf("%016x", lh),
				Rank: l.RankOf(lh), Lanes: FormatLanes(l.OfHash(h, nil)),
			})
		}
	}
	return out
}

func goldenMixVectors() []GoldenMix {
	ins := []uint64{0, 1, 0xffffffff, 0x100000000, 0x80a3c5eb, 0x7fffffffffffffff, 0x8000000000000000, 0xffffffffffffffff,
		0x61c8864680b583eb, 0x9e3779b97f4a7c15, 0xcbf29ce484222325}
	seed := uint64(11)
	for i := 0; i < 200; i++ {
		ins = append(ins, splitmix64(&seed))
	}
	out := make([]GoldenMix, len(ins))
	for i, x := range ins {
		out[i] = GoldenMix{In: fmt.Sprintf("%016x", x), Out: fmt.Sprintf("%016x", mix64(x))}
	}
	return out
}

// TestGoldenLanes pins the lane vectors that router/edge/lanes.test.js
// checks the handler against.
func TestGoldenLanes(t *testing.T) {
	tb := goldenSpec(t)
	vs := goldenLaneVectors(tb)
	for _, v := range vs {
		l := MustLanes(v.M, v.R)
		shard, ok := l.Of(v.Tenant, nil)
		if !ok || FormatLanes(shard) != v.Lanes {
			t.Fatalf("%q M=%d r=%d: Of = %v, vector %s", v.Tenant, v.M, v.R, shard, v.Lanes)
		}
	}
	checkGolden(t, filepath.Join(goldenDir, "golden_lanes.json"), marshalLines(vs))
	checkGolden(t, filepath.Join(goldenDir, "golden_mix64.json"), marshalLines(goldenMixVectors()))
}
