package router

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/internal/diag"
)

// What shuffle sharding buys a cell, in numbers: the closed-form
// expectations for a layout, and the exact figures for a list of tenants
// (what `cellctl lanes` prints).
//
// A tenant is "down" when every one of its lanes failed, "degraded" when
// at least one did. For a failure of f lanes chosen at random:
//
//	P(down)     = C(M−r, f−r) / C(M, f) = C(f, r) / C(M, r)   (0 when f < r)
//	P(degraded) = 1 − C(M−r, f) / C(M, f)
//
// The same for every tenant, so the mean over all C(M, f) failure sets of
// the share of a list's tenants that is down equals P(down) exactly for any
// list; what the list decides is the worst set, which the report gives
// exactly (every set of 1 and 2 lanes is tried).

// TenantLoad is one tenant of a tenant list, with its load (1 when the
// list has none).
type TenantLoad struct {
	Tenant string  `json:"tenant"`
	Load   float64 `json:"load"`
	Line   int     `json:"-"`
}

// ParseTenantLoads reads a tenant list: one tenant id a line, or CSV
// "tenant,load" (a first row whose second field is "load" is a header;
// fields may be quoted, so ids with commas work). CSV is recognised by a .csv file name or a comma in
// the first line. Blank lines are skipped. Every problem is reported with
// its line: invalid ids, a load that is not a finite number ≥ 0, a
// tenant listed twice.
func ParseTenantLoads(file string, data []byte) ([]TenantLoad, error) {
	var errs diag.List
	var out []TenantLoad
	seen := map[string]int{}
	add := func(line int, tenant string, load float64) {
		if err := ValidTenant(tenant); err != nil {
			errs.Add(file, line, "tenant", "%v", err)
			return
		}
		if prev, dup := seen[tenant]; dup {
			errs.Add(file, line, "tenant", "%q is already listed on line %d: list each tenant once (sum its load)", tenant, prev)
			return
		}
		seen[tenant] = line
		out = append(out, TenantLoad{Tenant: tenant, Load: load, Line: line})
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if strings.HasSuffix(strings.ToLower(file), ".csv") || bytes.ContainsRune(first, ',') {
		r := csv.NewReader(bytes.NewReader(data))
		r.FieldsPerRecord = -1
		r.ReuseRecord = true
		for row := 0; ; row++ {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					errs.Add(file, pe.Line, "", "not valid CSV: %v", pe.Err)
				} else {
					errs.Add(file, 0, "", "not valid CSV: %v", err)
				}
				break
			}
			line, _ := r.FieldPos(0)
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue
			}
			if len(rec) != 2 {
				errs.Add(file, line, "", "has %d fields; a CSV tenant list has two: tenant,load", len(rec))
				continue
			}
			if row == 0 && strings.EqualFold(strings.TrimSpace(rec[1]), "load") {
				continue // the header row "tenant,load"
			}
			load, err := strconv.ParseFloat(strings.TrimSpace(rec[1]), 64)
			if err != nil || math.IsNaN(load) || math.IsInf(load, 0) || load < 0 {
				errs.Add(file, line, "load", "must be a finite number ≥ 0, got %q", rec[1])
				continue
			}
			add(line, rec[0], load)
		}
	} else {
		for i, raw := range strings.Split(string(data), "\n") {
			id := strings.TrimSuffix(raw, "\r")
			if strings.TrimSpace(id) == "" {
				continue
			}
			add(i+1, id, 1)
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &diag.Error{File: file, Msg: "lists no tenants: give one tenant id a line, or CSV tenant,load"}
	}
	return out, nil
}

// Binomial is C(n, k) as a float64 (exact up to 2^53, then rounded),
// for the closed forms.
func Binomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	if n-k < k {
		k = n - k
	}
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return math.Round(c)
}

// FailureOdds are the closed-form shares for a failure of Failed lanes.
type FailureOdds struct {
	Failed   int     `json:"failedLanes"`
	Down     float64 `json:"down"`     // share of tenants with all their lanes failed
	Degraded float64 `json:"degraded"` // share with at least one lane failed
}

// Odds is the closed form for f failed lanes of (M, r).
func (l *Lanes) Odds(f int) FailureOdds {
	o := FailureOdds{Failed: f}
	if f > l.m {
		f = l.m
	}
	all := Binomial(l.m, f)
	if f >= l.r {
		o.Down = Binomial(l.m-l.r, f-l.r) / all
	}
	o.Degraded = 1 - Binomial(l.m-l.r, f)/all
	return o
}

// SharesWithAnother is the closed-form chance that another tenant has
// exactly the same shard (identical) and that it shares at least one lane.
func (l *Lanes) SharesWithAnother() (identical, anyLane float64) {
	all := float64(l.shards)
	return 1 / all, 1 - Binomial(l.m-l.r, l.r)/all
}

// LaneReport is what `cellctl lanes` says about one cell.
type LaneReport struct {
	Lanes     int           `json:"lanes"`
	ShardSize int           `json:"shardSize"`
	Shards    uint64        `json:"shards"`
	Expected  []FailureOdds `json:"expected"` // 1 and 2 failed lanes
	// IdenticalShare and AnyLaneShare are the closed-form chances that a
	// tenant's shard equals another's, or shares a lane with it.
	IdenticalShare float64 `json:"identicalShare"`
	AnyLaneShare   float64 `json:"anyLaneShare"`
	// Tenants is the analysis of a tenant list; nil without one.
	Tenants *TenantLaneStats `json:"tenants,omitempty"`
}

// TenantLaneStats are exact figures for a tenant list.
type TenantLaneStats struct {
	Count int     `json:"count"`
	Load  float64 `json:"load"`
	// DistinctShards is how many different shards the tenants use, next
	// to the expectation C·(1−(1−1/C)^N) for N random tenants.
	DistinctShards         int     `json:"distinctShards"`
	ExpectedDistinctShards float64 `json:"expectedDistinctShards"`
	// LargestGroup is the largest set of tenants with one identical shard.
	LargestGroup ShardGroup `json:"largestGroup"`
	// Failures are the exact shares over every set of 1 and of 2 lanes.
	Failures []FailureStats `json:"failures"`
	// Noisiest are the highest-load tenants and their overlap with all
	// the others.
	Noisiest []NoisyTenant `json:"noisiest,omitempty"`
}

// ShardGroup is tenants sharing one identical shard.
type ShardGroup struct {
	Lanes   []int    `json:"lanes"`
	Size    int      `json:"size"`
	Load    float64  `json:"load"`
	Tenants []string `json:"tenants"` // the first few
}

// FailureStats are the exact figures for every failure of Failed lanes.
type FailureStats struct {
	Failed int `json:"failedLanes"`
	Sets   int `json:"sets"` // C(M, Failed), all of them tried
	// Mean* are averages over all sets (equal to the closed form for any
	// list); Worst* the largest share any one set causes, and WorstLanes
	// that set (by tenants down, then degraded).
	MeanDown          float64     `json:"meanDown"`
	WorstDown         float64     `json:"worstDown"`
	WorstDownLoad     float64     `json:"worstDownLoad"`
	MeanDegraded      float64     `json:"meanDegraded"`
	WorstDegraded     float64     `json:"worstDegraded"`
	WorstDegradedLoad float64     `json:"worstDegradedLoad"`
	WorstLanes        []int       `json:"worstLanes"`
	Expected          FailureOdds `json:"expected"`

	pickDown, pickDeg float64 // the shares of WorstLanes
}

// NoisyTenant is one heavy tenant and who shares its fate.
type NoisyTenant struct {
	Tenant string  `json:"tenant"`
	Load   float64 `json:"load"`
	Lanes  []int   `json:"lanes"`
	// Identical: other tenants with exactly its shard (they suffer all it
	// does); AnyLane: others with at least one of its lanes.
	Identical         int     `json:"identical"`
	IdenticalShare    float64 `json:"identicalShare"`
	AnyLane           int     `json:"anyLane"`
	AnyLaneShare      float64 `json:"anyLaneShare"`
	AnyLaneLoadShare  float64 `json:"anyLaneLoadShare"`
	ExpectedIdentical float64 `json:"expectedIdenticalShare"`
	ExpectedAnyLane   float64 `json:"expectedAnyLaneShare"`
}

// Report is the closed form for the layout, and the exact figures for
// tenants when given (noisiest: how many top-load tenants to detail).
func (l *Lanes) Report(tenants []TenantLoad, noisiest int) LaneReport {
	identical, anyLane := l.SharesWithAnother()
	rep := LaneReport{
		Lanes: l.m, ShardSize: l.r, Shards: l.shards,
		Expected:       []FailureOdds{l.Odds(1), l.Odds(2)},
		IdenticalShare: identical, AnyLaneShare: anyLane,
	}
	if len(tenants) > 0 {
		rep.Tenants = l.tenantStats(tenants, noisiest)
	}
	return rep
}

func (l *Lanes) tenantStats(tenants []TenantLoad, noisiest int) *TenantLaneStats {
	m, r := l.m, l.r
	n := len(tenants)
	st := &TenantLaneStats{Count: n}
	shards := make([][]int, n)
	ranks := make([]uint64, n)
	// Per lane and per lane pair: tenants (and load) using it; per rank:
	// tenants with that exact shard.
	lane := make([]float64, m)
	laneLoad := make([]float64, m)
	pair := make([]float64, m*m)
	pairLoad := make([]float64, m*m)
	type group struct {
		size  int
		load  float64
		first int
	}
	groups := map[uint64]*group{}
	buf := make([]int, 0, r*n)
	for i, t := range tenants {
		st.Load += t.Load
		start := len(buf)
		buf, _ = l.Of(t.Tenant, buf)
		s := buf[start:len(buf):len(buf)]
		shards[i] = s
		ranks[i], _ = l.Rank(s)
		g := groups[ranks[i]]
		if g == nil {
			g = &group{first: i}
			groups[ranks[i]] = g
		}
		g.size++
		g.load += t.Load
		for a, x := range s {
			lane[x]++
			laneLoad[x] += t.Load
			for _, y := range s[a+1:] {
				pair[x*m+y]++
				pairLoad[x*m+y] += t.Load
			}
		}
	}
	st.DistinctShards = len(groups)
	c := float64(l.shards)
	st.ExpectedDistinctShards = c * -math.Expm1(float64(n)*math.Log1p(-1/c))

	var best *group
	var bestRank uint64
	for rank, g := range groups {
		if best == nil || g.size > best.size || (g.size == best.size && rank < bestRank) {
			best, bestRank = g, rank
		}
	}
	st.LargestGroup = ShardGroup{Lanes: l.Unrank(bestRank, nil), Size: best.size, Load: best.load}
	for i := best.first; i < n && len(st.LargestGroup.Tenants) < 5; i++ {
		if ranks[i] == bestRank {
			st.LargestGroup.Tenants = append(st.LargestGroup.Tenants, tenants[i].Tenant)
		}
	}

	N, L := float64(n), st.Load
	share := func(x, total float64) float64 {
		if total == 0 {
			return 0
		}
		return x / total
	}
	// One lane fails: down iff r = 1 and it is the tenant's lane.
	one := FailureStats{Failed: 1, Sets: m, Expected: l.Odds(1)}
	for a := 0; a < m; a++ {
		var down, downLoad float64
		if r == 1 {
			down, downLoad = lane[a], laneLoad[a]
		}
		one.observe([]int{a}, down/N, share(downLoad, L), lane[a]/N, share(laneLoad[a], L))
	}
	one.finish()
	st.Failures = append(st.Failures, one)
	if m >= 2 {
		two := FailureStats{Failed: 2, Sets: m * (m - 1) / 2, Expected: l.Odds(2)}
		for a := 0; a < m; a++ {
			for b := a + 1; b < m; b++ {
				var down, downLoad float64
				switch r {
				case 1:
					down, downLoad = lane[a]+lane[b], laneLoad[a]+laneLoad[b]
				case 2:
					down, downLoad = pair[a*m+b], pairLoad[a*m+b]
				}
				deg := lane[a] + lane[b] - pair[a*m+b]
				degLoad := laneLoad[a] + laneLoad[b] - pairLoad[a*m+b]
				two.observe([]int{a, b}, down/N, share(downLoad, L), deg/N, share(degLoad, L))
			}
		}
		two.finish()
		st.Failures = append(st.Failures, two)
	}

	// The noisiest tenants: by load, then by list order.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return tenants[order[a]].Load > tenants[order[b]].Load })
	if noisiest > n {
		noisiest = n
	}
	identical, anyLane := l.SharesWithAnother()
	for _, i := range order[:noisiest] {
		nt := NoisyTenant{Tenant: tenants[i].Tenant, Load: tenants[i].Load, Lanes: shards[i],
			ExpectedIdentical: identical, ExpectedAnyLane: anyLane}
		var mask [MaxLanes]bool
		for _, x := range shards[i] {
			mask[x] = true
		}
		var otherLoad, anyLoad float64
		for j, s := range shards {
			if j == i {
				continue
			}
			otherLoad += tenants[j].Load
			if ranks[j] == ranks[i] {
				nt.Identical++
			}
			for _, x := range s {
				if mask[x] {
					nt.AnyLane++
					anyLoad += tenants[j].Load
					break
				}
			}
		}
		others := float64(n - 1)
		nt.IdenticalShare = share(float64(nt.Identical), others)
		nt.AnyLaneShare = share(float64(nt.AnyLane), others)
		nt.AnyLaneLoadShare = share(anyLoad, otherLoad)
		st.Noisiest = append(st.Noisiest, nt)
	}
	return st
}

func (f *FailureStats) observe(set []int, down, downLoad, deg, degLoad float64) {
	f.MeanDown += down
	f.MeanDegraded += deg
	if f.WorstLanes == nil || down > f.pickDown || (down == f.pickDown && deg > f.pickDeg) {
		f.WorstLanes = append([]int(nil), set...)
		f.pickDown, f.pickDeg = down, deg
	}
	f.WorstDown = math.Max(f.WorstDown, down)
	f.WorstDownLoad = math.Max(f.WorstDownLoad, downLoad)
	f.WorstDegraded = math.Max(f.WorstDegraded, deg)
	f.WorstDegradedLoad = math.Max(f.WorstDegradedLoad, degLoad)
}

func (f *FailureStats) finish() {
	f.MeanDown /= float64(f.Sets)
	f.MeanDegraded /= float64(f.Sets)
}
