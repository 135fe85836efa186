package router

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
)

// Shuffle sharding inside a cell.
//
// A cell's fungible resources (worker pools, queues, sender slots) are cut
// into M lanes; each tenant uses r of them, its shard. Two tenants share a
// fate only when they drew the same r-combination, one of C(M, r). A lane
// never spans cells: lane 3 of cell-a and lane 3 of cell-b are different
// queues.
//
// The assignment truth:
//
//	h     = LaneHash(tenant)  = mix64(FNV-1a-64(tenant))
//	rank  = h mod C(M, r)
//	lanes = the r-combination of that rank in the combinatorial number
//	        system (colex order: c_r > … > c_1 ≥ 0 with
//	        rank = C(c_r, r) + … + C(c_1, 1)), listed ascending.
//
// Why mix64 (the splitmix64 finalizer) over the FNV hash: the edge and
// `cellctl route` compute the FNV hash anyway for the bucket, so the lane
// hash costs three multiplies, not a second pass over the id; and the
// finalizer is a bijection with full avalanche, so h mod C(M, r) carries no
// trace of FNV mod B. A second FNV with another offset basis would not do:
// FNV-1a's low bit is the parity of the bytes' low bits whatever the
// basis, so bucket and lanes would be correlated. The bucket is untouched:
// lanes are a function of the tenant and the cell's (M, r) only, so a
// tenant moved to another cell with the same M and r keeps its lane
// numbers.
//
// Exactness: C(256, 128) ≈ 5.8·10^75 has no 64-bit representation. The
// shard count is capped at MaxShards = 2^53−1 instead (r is capped
// through C(M, r)): every count, every binomial the unranking consults
// and every rank is then an exact integer in Go's uint64 and in a
// JavaScript double, so the edge needs no BigInt, and the modulo bias of
// h mod C(M, r) is below C/2^64 ≤ 2^-11 (each rank gets ⌊2^64/C⌋ or one
// more hashes). The cap costs nothing real: shuffle sharding wants small
// r, and C(M, r) beyond 2^53 shards already exceeds any tenant count by
// orders of magnitude. For M = 256 it allows r ≤ 8 and r ≥ 248; for M ≤ 55
// every r. NewLanes refuses the rest with the allowed range.

// Lane limits.
const (
	DefaultLanes         = 8
	DefaultLaneShardSize = 2
	MaxLanes             = 256
	// MaxShards is the largest C(M, r) a cell may have: 2^53−1, exact in
	// a JavaScript number.
	MaxShards = 1<<53 - 1
)

// binomSaturated stands for "more than MaxShards" in the binomial table;
// it is above every rank, so comparisons stay correct.
const binomSaturated = MaxShards + 1

// ShardCount is C(m, r) when it is at most MaxShards, and ok=false when
// it is larger (or m, r are out of range). It never overflows.
func ShardCount(m, r int) (count uint64, ok bool) {
	if m < 1 || r < 0 || r > m {
		return 0, false
	}
	k := r
	if m-r < k {
		k = m - r
	}
	// C(m-k+i, i) for i = 1..k grows with i; each step is exact:
	// c·(m-k+i) is divisible by i. The product is kept in 128 bits.
	c := uint64(1)
	for i := 1; i <= k; i++ {
		hi, lo := bits.Mul64(c, uint64(m-k+i))
		if hi >= uint64(i) {
			return 0, false // the quotient needs more than 64 bits
		}
		c, _ = bits.Div64(hi, lo, uint64(i))
		if c > MaxShards {
			return 0, false
		}
	}
	return c, true
}

// LaneShardRange is the range of shard sizes r a cell with m lanes
// allows: 1 ≤ r ≤ m with C(m, r) ≤ MaxShards. Because C(m, r) = C(m, m−r)
// grows towards r = m/2, the allowed r are [1, low] ∪ [high, m]; low = m
// (and high = m+1) when every r is allowed.
func LaneShardRange(m int) (low, high int) {
	low = 0
	for r := 1; r <= m; r++ {
		if _, ok := ShardCount(m, r); !ok {
			break
		}
		low = r
	}
	if low == m {
		return m, m + 1
	}
	return low, m - low
}

// CheckLanes says why (m, r) is not an allowed lane configuration, in
// words fit for a config error, or returns nil.
func CheckLanes(m, r int) error {
	switch {
	case m < 1 || m > MaxLanes:
		return fmt.Errorf("lanes must be an integer from 1 to %d, got %d", MaxLanes, m)
	case r < 1 || r > m:
		return fmt.Errorf("a shard of %d lanes does not fit in %d lanes: the shard size must be from 1 to the number of lanes", r, m)
	}
	if _, ok := ShardCount(m, r); !ok {
		low, high := LaneShardRange(m)
		return fmt.Errorf("shards of %d of %d lanes number C(%d, %d), more than the 2^53-1 a tenant's lanes are computed exactly with (here and at the edge); with %d lanes allowed shard sizes are 1-%d or %d-%d",
			r, m, m, r, m, low, high, m)
	}
	return nil
}

// Lanes is a cell's lane layout: M lanes, shards of R. It is immutable
// and safe for concurrent use.
type Lanes struct {
	m, r   int
	shards uint64
	// binom[k*(m+1)+n] = C(n, k) for k ≤ r, n ≤ m, saturated at
	// binomSaturated. Only entries ≤ the rank are ever subtracted.
	binom []uint64
}

// NewLanes builds the layout of M lanes with shards of r, or says why
// the pair is not allowed (see CheckLanes).
func NewLanes(m, r int) (*Lanes, error) {
	if err := CheckLanes(m, r); err != nil {
		return nil, err
	}
	shards, _ := ShardCount(m, r)
	l := &Lanes{m: m, r: r, shards: shards, binom: make([]uint64, (r+1)*(m+1))}
	w := m + 1
	for n := 0; n <= m; n++ {
		l.binom[n] = 1 // C(n, 0)
	}
	for k := 1; k <= r; k++ {
		// C(n, k) = C(n-1, k-1) + C(n-1, k), saturating.
		for n := k; n <= m; n++ {
			v := l.binom[(k-1)*w+n-1] + l.binom[k*w+n-1]
			if v > binomSaturated {
				v = binomSaturated
			}
			l.binom[k*w+n] = v
		}
	}
	return l, nil
}

// MustLanes is NewLanes for constants known to be valid; it panics
// otherwise.
func MustLanes(m, r int) *Lanes {
	l, err := NewLanes(m, r)
	if err != nil {
		panic(err)
	}
	return l
}

// M is the number of lanes.
func (l *Lanes) M() int { return l.m }

// R is the shard size: lanes per tenant.
func (l *Lanes) R() int { return l.r }

// Shards is C(M, R), the number of distinct shards.
func (l *Lanes) Shards() uint64 { return l.shards }

func (l *Lanes) c(n, k int) uint64 { return l.binom[k*(l.m+1)+n] }

// mix64 is the splitmix64 finalizer (Steele, Lea, Flood 2014): a
// bijection on 64-bit words with full avalanche.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// LaneHash is the 64-bit hash a tenant's lanes are drawn from:
// mix64 of the tenant's FNV-1a-64 hash (see the package comment on
// lanes for why).
func LaneHash(tenant string) uint64 { return mix64(Hash(tenant)) }

// LaneHashOf is LaneHash from an FNV-1a-64 hash already computed (a
// Route's Hash).
func LaneHashOf(fnv uint64) uint64 { return mix64(fnv) }

// RankOf is the tenant's shard rank for a lane hash: h mod C(M, R).
func (l *Lanes) RankOf(laneHash uint64) uint64 { return laneHash % l.shards }

// Unrank appends to dst the R lanes of the shard of rank rank (mod
// C(M, R)), ascending, and returns it. With a dst of capacity R it does
// not allocate.
func (l *Lanes) Unrank(rank uint64, dst []int) []int {
	rank %= l.shards
	start := len(dst)
	for i := 0; i < l.r; i++ {
		dst = append(dst, 0)
	}
	w := l.m + 1
	hi := l.m // the next element is below hi
	for k := l.r; k >= 1; k-- {
		// The largest c in [k-1, hi) with C(c, k) ≤ rank; C(k-1, k) = 0.
		// A halving search without early exit compiles to conditional
		// moves: no branch to mispredict.
		col := l.binom[k*w : k*w+w]
		base, n := k-1, hi-(k-1)
		for n > 1 {
			half := n >> 1
			if col[base+half] <= rank {
				base += half
			}
			n -= half
		}
		rank -= col[base]
		dst[start+k-1] = base
		hi = base
	}
	return dst
}

// Rank is the combinatorial-number-system rank of a shard: the inverse
// of Unrank. lanes must be R distinct lanes in [0, M), ascending.
func (l *Lanes) Rank(lanes []int) (uint64, error) {
	if len(lanes) != l.r {
		return 0, fmt.Errorf("a shard of this layout has %d lanes, got %d", l.r, len(lanes))
	}
	var rank uint64
	for i, c := range lanes {
		if c < 0 || c >= l.m {
			return 0, fmt.Errorf("lane %d is out of range [0, %d)", c, l.m)
		}
		if i > 0 && c <= lanes[i-1] {
			return 0, errors.New("lanes must be distinct and ascending")
		}
		rank += l.c(c, i+1)
	}
	return rank, nil
}

// OfHash appends the lanes of the tenant whose FNV-1a-64 hash is fnv.
func (l *Lanes) OfHash(fnv uint64, dst []int) []int {
	return l.Unrank(mix64(fnv)%l.shards, dst)
}

// Of appends the tenant's lanes to dst; ok is false (and nothing is
// appended) for an invalid tenant id.
func (l *Lanes) Of(tenant string, dst []int) (lanes []int, ok bool) {
	h, ok := hashTenant(tenant)
	if !ok {
		return dst, false
	}
	return l.OfHash(h, dst), true
}

// Contains reports whether lane is in the ascending shard.
func Contains(shard []int, lane int) bool {
	for _, c := range shard {
		if c == lane {
			return true
		}
		if c > lane {
			return false
		}
	}
	return false
}

// LanesHeader is the X-Cell-Lanes header name the edge sends with
// X-Cell-Id.
const LanesHeader = "X-Cell-Lanes"

// FormatLanes renders a shard as the X-Cell-Lanes value: "3,17".
func FormatLanes(shard []int) string {
	b := make([]byte, 0, 4*len(shard))
	for i, c := range shard {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(c), 10)
	}
	return string(b)
}
