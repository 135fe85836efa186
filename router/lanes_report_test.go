package router

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func randomTenants(n int, seed uint64, load func(i int) float64) []TenantLoad {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	out := make([]TenantLoad, n)
	for i := range out {
		out[i] = TenantLoad{Tenant: fmt.Sprintf("org-%016x", rng.Uint64()), Load: load(i)}
	}
	return out
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6f, want %.6f ± %.6f", what, got, want, tol)
	}
}

// The numbers: M = 8, r = 2 gives 28 shards and a 3.6 % chance
// that a 2-lane failure takes a tenant down; M = 64, r = 2 gives 2,016
// and 0.05 %.
func TestLaneOddsClosedForm(t *testing.T) {
	for _, c := range []struct {
		m, r   int
		shards uint64
		down2  float64
		pct    string
	}{{8, 2, 28, 1.0 / 28, "3.6%"}, {64, 2, 2016, 1.0 / 2016, "0.05%"}} {
		l := MustLanes(c.m, c.r)
		rep := l.Report(nil, 0)
		if rep.Shards != c.shards || rep.Expected[1].Down != c.down2 || rep.IdenticalShare != c.down2 {
			t.Errorf("M=%d r=%d: %+v", c.m, c.r, rep)
		}
		digits := 1
		if c.down2 < 0.01 {
			digits = 2
		}
		if got := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.*f", digits, c.down2*100), "0"), ".") + "%"; got != c.pct {
			t.Errorf("M=%d r=%d: %s, the issue says %s", c.m, c.r, got, c.pct)
		}
		if rep.Expected[0].Down != 0 || rep.Expected[0].Degraded != float64(c.r)/float64(c.m) {
			t.Errorf("one lane down: %+v", rep.Expected[0])
		}
	}
	// r = 1: a failed lane takes down exactly its tenants.
	if o := MustLanes(8, 1).Odds(1); o.Down != 1.0/8 || o.Degraded != 1.0/8 {
		t.Errorf("r=1: %+v", o)
	}
	if o := MustLanes(8, 3).Odds(2); o.Down != 0 || math.Abs(o.Degraded-(1-Binomial(5, 2)/Binomial(8, 2))) > 1e-15 {
		t.Errorf("r=3 two lanes: %+v", o)
	}
}

// On a large random tenant list the exact figures agree with the closed
// form: the means over all failure sets exactly, the worst set and the
// noisiest tenants' overlap within sampling error, every shard used.
func TestLaneReportMatchesClosedFormOnARandomList(t *testing.T) {
	const n = 200_000
	for _, mr := range [][2]int{{8, 2}, {16, 3}, {64, 2}, {10, 1}} {
		l := MustLanes(mr[0], mr[1])
		tenants := randomTenants(n, uint64(mr[0]*1000+mr[1]), func(i int) float64 { return float64(1 + i%7) })
		tenants[12345].Load = 1e6 // one very noisy tenant
		rep := l.Report(tenants, 3)
		st := rep.Tenants
		if st == nil || st.Count != n {
			t.Fatalf("M=%d r=%d: stats %+v", mr[0], mr[1], st)
		}
		label := fmt.Sprintf("M=%d r=%d", mr[0], mr[1])
		c := float64(l.Shards())
		// Distinct shards used vs C·(1−(1−1/C)^N).
		near(t, label+" distinct shards", float64(st.DistinctShards), st.ExpectedDistinctShards, 4*math.Sqrt(c)+1)
		// The largest identical group is about N/C (a maximum over C bins).
		if mean := float64(n) / c; float64(st.LargestGroup.Size) < mean || float64(st.LargestGroup.Size) > mean+6*math.Sqrt(mean)+2 {
			t.Errorf("%s: largest group %d, mean group %.1f", label, st.LargestGroup.Size, mean)
		}
		for _, f := range st.Failures {
			what := fmt.Sprintf("%s, %d lane(s) failed", label, f.Failed)
			near(t, what+": mean down", f.MeanDown, f.Expected.Down, 1e-12)
			near(t, what+": mean degraded", f.MeanDegraded, f.Expected.Degraded, 1e-12)
			// Worst set: the largest of Sets binomial shares; allow the
			// usual max-of-binomials spread.
			sd := func(p float64) float64 { return math.Sqrt(p * (1 - p) / n) }
			k := math.Sqrt(2 * math.Log(float64(f.Sets)))
			if f.WorstDown < f.Expected.Down-1e-12 || f.WorstDown > f.Expected.Down+(k+3)*sd(f.Expected.Down) {
				t.Errorf("%s: worst down %.5f, expected %.5f", what, f.WorstDown, f.Expected.Down)
			}
			if f.WorstDegraded < f.Expected.Degraded-1e-12 || f.WorstDegraded > f.Expected.Degraded+(k+3)*sd(f.Expected.Degraded) {
				t.Errorf("%s: worst degraded %.5f, expected %.5f", what, f.WorstDegraded, f.Expected.Degraded)
			}
			if len(f.WorstLanes) != f.Failed {
				t.Errorf("%s: worst lanes %v", what, f.WorstLanes)
			}
		}
		if len(st.Noisiest) != 3 || st.Noisiest[0].Tenant != tenants[12345].Tenant {
			t.Fatalf("%s: noisiest %+v", label, st.Noisiest)
		}
		for _, nt := range st.Noisiest {
			what := label + " noisy " + nt.Tenant
			near(t, what+" identical", nt.IdenticalShare, nt.ExpectedIdentical, 5*math.Sqrt(nt.ExpectedIdentical/n)+1e-9)
			near(t, what+" any lane", nt.AnyLaneShare, nt.ExpectedAnyLane, 5*math.Sqrt(nt.ExpectedAnyLane*(1-nt.ExpectedAnyLane)/n)+1e-9)
		}
	}
}

// Exact figures on a list small enough to count by hand.
func TestLaneReportExactSmallList(t *testing.T) {
	l := MustLanes(4, 2) // 6 shards
	// Find tenants for chosen shards so the expected numbers are known.
	want := map[string][]int{}
	var tenants []TenantLoad
	need := map[string]int{"0,1": 3, "2,3": 1}
	for i := 0; len(tenants) < 4; i++ {
		id := fmt.Sprintf("t-%d", i)
		s, _ := l.Of(id, nil)
		key := FormatLanes(s)
		if need[key] > 0 {
			need[key]--
			want[id] = s
			load := 1.0
			if key == "2,3" {
				load = 9
			}
			tenants = append(tenants, TenantLoad{Tenant: id, Load: load})
		}
	}
	st := l.Report(tenants, 1).Tenants
	if st.DistinctShards != 2 || st.LargestGroup.Size != 3 || FormatLanes(st.LargestGroup.Lanes) != "0,1" || st.Load != 12 {
		t.Errorf("stats %+v", st)
	}
	two := st.Failures[1]
	// Lanes {0,1} down: 3 of 4 tenants, 3 of 12 load; {2,3}: 1 tenant, 9 load.
	if two.WorstDown != 0.75 || two.WorstDownLoad != 0.75 || FormatLanes(two.WorstLanes) != "0,1" || two.Sets != 6 {
		t.Errorf("two lanes: %+v", two)
	}
	// Mean down over the 6 pairs: (3 + 1) / 4 / 6.
	if math.Abs(two.MeanDown-4.0/4/6) > 1e-15 {
		t.Errorf("mean down %v", two.MeanDown)
	}
	one := st.Failures[0]
	if one.WorstDown != 0 || one.WorstDegraded != 0.75 || one.WorstDegradedLoad != 0.75 {
		t.Errorf("one lane: %+v", one)
	}
	// The noisiest (load 9) shares no lane with anyone.
	nt := st.Noisiest[0]
	if nt.Load != 9 || nt.Identical != 0 || nt.AnyLane != 0 || FormatLanes(nt.Lanes) != "2,3" {
		t.Errorf("noisiest %+v", nt)
	}
}

func TestParseTenantLoads(t *testing.T) {
	// The format is decided by the first line: a comma later in a plain
	// list is part of an id (commas are valid in tenant ids).
	got, err := ParseTenantLoads("t.txt", []byte("acme\n\nglobex\r\nmüller,gmbh\n"))
	if err != nil || len(got) != 3 || got[2].Tenant != "müller,gmbh" {
		t.Errorf("plain list with a comma in an id: %+v, %v", got, err)
	}
	got, err = ParseTenantLoads("t.txt", []byte("acme\n\nglobex\r\n東京\n"))
	if err != nil || len(got) != 3 || got[2].Tenant != "東京" || got[1].Line != 3 || got[0].Load != 1 {
		t.Fatalf("plain list: %+v, %v", got, err)
	}
	got, err = ParseTenantLoads("t.csv", []byte("tenant,load\nacme,12.5\n\"a,b\",3\nglobex,0\n"))
	if err != nil || len(got) != 3 || got[1].Tenant != "a,b" || got[0].Load != 12.5 || got[0].Line != 2 {
		t.Fatalf("csv: %+v, %v", got, err)
	}
	_, err = ParseTenantLoads("t.csv", []byte("acme,1\nbad id,2\nacme,3\nx,-1\ny,NaN\nz\n"))
	msg := fmt.Sprint(err)
	for _, want := range []string{
		"t.csv:2: tenant: tenant id \"bad id\" contains U+0020 (space)",
		"t.csv:3: tenant: \"acme\" is already listed on line 1",
		"t.csv:4: load: must be a finite number ≥ 0, got \"-1\"",
		"t.csv:5: load: must be a finite number ≥ 0, got \"NaN\"",
		"t.csv:6: has 1 fields",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors %q lack %q", msg, want)
		}
	}
	// A first row that is not the header is data, and a bad load there is
	// an error, not a silently skipped header.
	if _, err := ParseTenantLoads("t.csv", []byte("acme,lots\nglobex,1\n")); err == nil || !strings.Contains(err.Error(), "t.csv:1: load:") {
		t.Errorf("bad first row: %v", err)
	}
	if _, err := ParseTenantLoads("t.txt", []byte("\n\n")); err == nil || !strings.Contains(err.Error(), "lists no tenants") {
		t.Errorf("empty list: %v", err)
	}
}

func FuzzParseTenantLoads(f *testing.F) {
	f.Add("t.txt", []byte("acme\nglobex\n"))
	f.Add("t.csv", []byte("tenant,load\nacme,1\n\"a,b\",2\n"))
	f.Add("t.csv", []byte("\"unterminated\n"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		got, err := ParseTenantLoads(name, data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, tl := range got {
			if ValidTenant(tl.Tenant) != nil || seen[tl.Tenant] || tl.Load < 0 || math.IsNaN(tl.Load) || math.IsInf(tl.Load, 0) {
				t.Fatalf("accepted %+v", tl)
			}
			seen[tl.Tenant] = true
		}
	})
}
