package router

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/internal/diag"
	"gopkg.in/yaml.v3"
)

// Capacity is data.
//
// A cell's capacity is the load it is tested to carry, in the fleet's load
// units (requests per minute, say — whatever the load figures count). The
// table may carry the load of each bucket; without one every bucket carries
// one unit (tenants spread uniformly over buckets). A cell's load is the
// load of its buckets plus the load of the tenants pinned to it (known only
// from a per-tenant load file, see FoldLoad).
//
// A cell without an explicit capacity is assumed to carry twice its
// weighted share of the fleet's load: ⌈2·L·w/W⌉ over the weights of all
// the table's cells, so a fleet of defaults absorbs the loss of half its
// capacity. Defaults move when cells are added or the load changes; set
// capacities once a cell has been load-tested.

// Limits of load and capacity figures. Sums over a million buckets stay
// far below 2^63, and capacities stay exact in JavaScript tools (jq).
const (
	MaxBucketLoad = 1 << 40
	MaxCapacity   = MaxVersion
	// DefaultBucketLoad is the load of a bucket the table says nothing about.
	DefaultBucketLoad = 1
)

// LoadSpec is the per-bucket load a table carries: "load": {"default": 1,
// "buckets": {"0-99": 5, "512": 40}}. Buckets not listed carry Default.
type LoadSpec struct {
	Default int64        `json:"default"`
	Buckets []BucketLoad `json:"buckets,omitempty"`
}

// BucketLoad is the load of each bucket of a range.
type BucketLoad struct {
	Range Range `json:"range"`
	Load  int64 `json:"load"`
}

// canonical is the one spelling of a load: ranges sorted, adjacent ranges
// of equal load merged, ranges equal to the default dropped, and nil for a
// uniform load of DefaultBucketLoad. It runs after validation (no overlaps).
func (l *LoadSpec) canonical() *LoadSpec {
	if l == nil {
		return nil
	}
	rs := append([]BucketLoad(nil), l.Buckets...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Range.First < rs[j].Range.First })
	out := &LoadSpec{Default: l.Default}
	for _, r := range rs {
		if r.Load == l.Default {
			continue
		}
		if n := len(out.Buckets); n > 0 && out.Buckets[n-1].Load == r.Load && out.Buckets[n-1].Range.Last+1 == r.Range.First {
			out.Buckets[n-1].Range.Last = r.Range.Last
			continue
		}
		out.Buckets = append(out.Buckets, r)
	}
	if out.Default == DefaultBucketLoad && len(out.Buckets) == 0 {
		return nil
	}
	return out
}

func (l *LoadSpec) clone() *LoadSpec {
	if l == nil {
		return nil
	}
	return &LoadSpec{Default: l.Default, Buckets: append([]BucketLoad(nil), l.Buckets...)}
}

func (l *LoadSpec) equal(o *LoadSpec) bool {
	if l == nil || o == nil {
		return l == o
	}
	if l.Default != o.Default || len(l.Buckets) != len(o.Buckets) {
		return false
	}
	for i := range l.Buckets {
		if l.Buckets[i] != o.Buckets[i] {
			return false
		}
	}
	return true
}

// LoadFigures is the load on the fleet at one moment: what each bucket carries,
// plus what each tenant with an override carries (such a tenant is served
// by its override's cell, not its bucket's).
type LoadFigures struct {
	// Source says where the figures come from, for reports: "uniform",
	// "routing table" or a file name.
	Source  string           `json:"source"`
	Buckets []int64          `json:"-"` // one per bucket of the table
	Pinned  map[string]int64 `json:"-"` // tenant → load, for tenants with an override
}

// Total is the load of all buckets and pinned tenants.
func (l *LoadFigures) Total() int64 {
	var n int64
	for _, v := range l.Buckets {
		n += v
	}
	for _, v := range l.Pinned {
		n += v
	}
	return n
}

// TableLoad is the table's own per-bucket load: its "load" section, or one unit
// per bucket.
func (t *Table) TableLoad() *LoadFigures {
	l := &LoadFigures{Source: "uniform", Buckets: make([]int64, t.spec.Buckets)}
	def := int64(DefaultBucketLoad)
	if ls := t.spec.Load; ls != nil {
		l.Source = "routing table"
		def = ls.Default
	}
	for b := range l.Buckets {
		l.Buckets[b] = def
	}
	if ls := t.spec.Load; ls != nil {
		for _, r := range ls.Buckets {
			for b := r.Range.First; b <= r.Range.Last; b++ {
				l.Buckets[b] = r.Load
			}
		}
	}
	return l
}

// checkLoad says whether load fits t.
func checkLoad(t *Table, load *LoadFigures) error {
	if len(load.Buckets) != t.Buckets() {
		return fmt.Errorf("the load (%s) has %d buckets but the routing table has %d", load.Source, len(load.Buckets), t.Buckets())
	}
	for tenant := range load.Pinned {
		if _, ok := t.Override(tenant); !ok {
			return fmt.Errorf("the load (%s) counts tenant %q as pinned, but the routing table has no override for it", load.Source, tenant)
		}
	}
	return nil
}

// capacities returns every cell's capacity (canonical order) under load,
// and which of them are defaults.
func capacities(s *Spec, total int64) (caps []int64, def []bool) {
	var weights uint64
	for _, c := range s.Cells {
		weights += uint64(c.Weight)
	}
	caps = make([]int64, len(s.Cells))
	def = make([]bool, len(s.Cells))
	for i, c := range s.Cells {
		if c.Capacity > 0 {
			caps[i] = c.Capacity
			continue
		}
		def[i] = true
		caps[i] = max(1, int64(mulDivCeil(2*uint64(total), uint64(c.Weight), weights)))
	}
	return caps, def
}

// mulDivCeil is ⌈a·b/c⌉ without overflow (c > 0, result < 2^64).
func mulDivCeil(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, r := bits.Div64(hi, lo, c)
	if r > 0 {
		q++
	}
	return q
}

// mulDivFloor is ⌊a·b/c⌋ without overflow (c > 0, result < 2^64).
func mulDivFloor(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, _ := bits.Div64(hi, lo, c)
	return q
}

// CapacityReport is `cellctl capacity`: how loaded each cell is.
type CapacityReport struct {
	Version    int64          `json:"version"`
	Buckets    int            `json:"buckets"`
	LoadSource string         `json:"loadSource"`
	TotalLoad  int64          `json:"totalLoad"`
	Cells      []CellCapacity `json:"cells"` // worst (highest share used) first
	// Over lists the cells whose load is above their capacity.
	Over []string `json:"over"`
}

// CellCapacity is one cell's load against its capacity.
type CellCapacity struct {
	Cell   string    `json:"cell"`
	State  CellState `json:"state"`
	Weight int       `json:"weight"`
	// Buckets and TenantShare: the buckets it owns and the share of
	// tenants (routed by hash) they hold; Pinned counts the tenants an
	// override sends to it (including migrating tenants it still serves).
	Buckets         int     `json:"buckets"`
	TenantShare     float64 `json:"tenantShare"`
	Pinned          int     `json:"pinned"`
	Load            int64   `json:"load"`
	Capacity        int64   `json:"capacity"`
	CapacityDefault bool    `json:"capacityDefault"` // derived from the weight
	Used            float64 `json:"used"`            // load / capacity
	Over            bool    `json:"over"`
}

// Capacity reports each cell's load and capacity under load (nil: the
// table's own load).
func Capacity(t *Table, load *LoadFigures) (CapacityReport, error) {
	if load == nil {
		load = t.TableLoad()
	}
	st, err := newFleetState(t, load)
	if err != nil {
		return CapacityReport{}, err
	}
	r := CapacityReport{Version: t.Version(), Buckets: t.Buckets(), LoadSource: load.Source, TotalLoad: st.total, Over: []string{}}
	for i, c := range st.spec.Cells {
		cc := CellCapacity{
			Cell: c.ID, State: c.State, Weight: c.Weight,
			Buckets: st.count[i], TenantShare: float64(st.count[i]) / float64(t.Buckets()), Pinned: len(st.pins[i]),
			Load: st.load[i], Capacity: st.caps[i], CapacityDefault: st.capDefault[i],
			Used: float64(st.load[i]) / float64(st.caps[i]),
		}
		cc.Over = cc.Load > cc.Capacity
		r.Cells = append(r.Cells, cc)
	}
	sort.SliceStable(r.Cells, func(i, j int) bool {
		a, b := r.Cells[i], r.Cells[j]
		// Compare load/capacity exactly: a.Load·b.Cap vs b.Load·a.Cap.
		ah, al := bits.Mul64(uint64(a.Load), uint64(b.Capacity))
		bh, bl := bits.Mul64(uint64(b.Load), uint64(a.Capacity))
		if ah != bh || al != bl {
			return ah > bh || ah == bh && al > bl
		}
		return a.Cell < b.Cell
	})
	for _, c := range r.Cells {
		if c.Over {
			r.Over = append(r.Over, c.Cell)
		}
	}
	return r, nil
}

// OverCapacityError says which cells carry more than their capacity.
func (r CapacityReport) OverCapacityError() error {
	if len(r.Over) == 0 {
		return nil
	}
	var parts []string
	for _, c := range r.Cells {
		if c.Over {
			parts = append(parts, fmt.Sprintf("%s carries %d of %d (%.1f%%)", c.Cell, c.Load, c.Capacity, c.Used*100))
		}
	}
	return fmt.Errorf("%d cell(s) over capacity: %s", len(r.Over), strings.Join(parts, "; "))
}

// fleetState is a table with its load folded onto cells: the working copy
// the lifecycle transitions edit.
type fleetState struct {
	t          *Table
	spec       Spec    // a deep copy of t's canonical spec
	bload      []int64 // load per bucket
	pload      map[string]int64
	owner      []int32 // bucket → cell index
	count      []int   // buckets per cell
	load       []int64 // load per cell
	caps       []int64
	capDefault []bool
	pins       [][]int // per cell: indices of the overrides it serves
	total      int64

	// What a transition started from, and what it did.
	source  string
	count0  []int
	load0   []int64
	states0 []CellState
	lower   int // the lower bound of an undrain or add
}

func newFleetState(t *Table, load *LoadFigures) (*fleetState, error) {
	if err := checkLoad(t, load); err != nil {
		return nil, err
	}
	st := &fleetState{t: t, spec: t.Spec(), bload: load.Buckets, pload: load.Pinned}
	n := len(st.spec.Cells)
	st.owner = make([]int32, len(t.bucketCell))
	st.count = make([]int, n)
	st.load = make([]int64, n)
	st.pins = make([][]int, n)
	for b, c := range t.bucketCell {
		st.owner[b] = int32(c)
		st.count[c]++
		st.load[c] += st.bload[b]
	}
	for i, o := range st.spec.Overrides {
		ci := t.cellByID[o.Cell]
		st.pins[ci] = append(st.pins[ci], i)
		st.load[ci] += st.pload[o.Tenant]
	}
	st.total = load.Total()
	st.caps, st.capDefault = capacities(&st.spec, st.total)
	return st, nil
}

// Parsing and validation of the capacity and load fields of routing.json;
// parse.go and validate.go call these.

type loadPos struct {
	line, deflt int
	entries     []int // line of each Buckets entry
}

const capacityRule = "an integer from 1 to %d: the load units the cell is tested to carry (omit it to derive it from the weight)"

func capacityFromNode(file, field string, n *yaml.Node, errs *diag.List) (int64, bool) {
	v, ok := intNode(file, field, fmt.Sprintf(capacityRule, int64(MaxCapacity)), n, errs)
	if ok && v < 1 {
		errs.Add(file, n.Line, field, "must be "+capacityRule+"; got %d", int64(MaxCapacity), v)
		return 0, false
	}
	return v, ok
}

const loadRule = "an integer from 0 to %d (load units per bucket)"

func loadFromNode(file string, n *yaml.Node, p *positions, errs *diag.List) *LoadSpec {
	ls := &LoadSpec{Default: DefaultBucketLoad}
	for _, kv := range pairs(file, "load", `with "default" and "buckets"`, n, errs) {
		field := "load." + kv.Key.Value
		switch kv.Key.Value {
		case "default":
			p.load.deflt = kv.Key.Line
			v, ok := intNode(file, field, fmt.Sprintf(loadRule, int64(MaxBucketLoad)), kv.Value, errs)
			if !ok {
				p.markBad(field)
			}
			ls.Default = v
		case "buckets":
			for _, e := range pairs(file, field, `of bucket range → load, like {"0-99": 5, "512": 40}`, kv.Value, errs) {
				ef := field + "." + e.Key.Value
				r, err := ParseRange(e.Key.Value)
				if err != nil {
					errs.Add(file, e.Key.Line, ef, "%v", err)
					continue
				}
				v, ok := intNode(file, ef, fmt.Sprintf(loadRule, int64(MaxBucketLoad)), e.Value, errs)
				if !ok {
					continue
				}
				ls.Buckets = append(ls.Buckets, BucketLoad{Range: r, Load: v})
				p.load.entries = append(p.load.entries, e.Key.Line)
			}
		default:
			errs.Add(file, kv.Key.Line, field, "unknown key; allowed keys: \"default\" or \"buckets\"")
		}
	}
	return ls
}

// validateCapacity checks the cells' capacities and the table's load.
func validateCapacity(s *Spec, p *positions, errs *diag.List) {
	f := p.file
	for i, c := range s.Cells {
		field := diag.Join("cells", c.ID) + ".capacity"
		if !p.isBad(field) && (c.Capacity < 0 || c.Capacity > MaxCapacity) {
			cp := p.cellAt(i)
			errs.Add(f, or(cp.capacity, cp.line), field, "must be "+capacityRule+"; got %d", int64(MaxCapacity), c.Capacity)
		}
	}
	ls := s.Load
	if ls == nil {
		return
	}
	line := p.top(p.load.line)
	if !p.isBad("load.default") && (ls.Default < 0 || ls.Default > MaxBucketLoad) {
		errs.Add(f, or(p.load.deflt, line), "load.default", "must be "+loadRule+"; got %d", int64(MaxBucketLoad), ls.Default)
	}
	if s.Buckets < 1 || s.Buckets > MaxBuckets {
		return
	}
	set := make([]int32, s.Buckets) // entry index + 1 that set the bucket
	budget := 4 * s.Buckets
	for j, e := range ls.Buckets {
		el := line
		if j < len(p.load.entries) {
			el = p.load.entries[j]
		}
		field := "load.buckets." + e.Range.String()
		if e.Load < 0 || e.Load > MaxBucketLoad {
			errs.Add(f, el, field, "must be "+loadRule+"; got %d", int64(MaxBucketLoad), e.Load)
		}
		if e.Range.First < 0 || e.Range.Last >= s.Buckets || e.Range.First > e.Range.Last {
			errs.Add(f, el, field, "%q is outside the table; buckets are 0-%d (buckets: %d)", e.Range.String(), s.Buckets-1, s.Buckets)
			continue
		}
		if budget -= e.Range.Len(); budget < 0 {
			errs.Add(f, el, field, "too many overlapping bucket ranges; fix the ranges reported above and check again")
			return
		}
		for b := e.Range.First; b <= e.Range.Last; b++ {
			if prev := set[b]; prev > 0 {
				errs.Add(f, el, field, "bucket %d already has a load (load.buckets.%s); give each bucket one load", b, ls.Buckets[prev-1].Range.String())
				break
			}
			set[b] = int32(j + 1)
		}
	}
}

// marshalLoad writes the "load" line of routing.json ("" for none).
func marshalLoad(ls *LoadSpec) string {
	if ls == nil {
		return ""
	}
	head := `  "load": {"default": ` + strconv.FormatInt(ls.Default, 10)
	if len(ls.Buckets) == 0 {
		return head + "},\n"
	}
	entries := make([]string, len(ls.Buckets))
	for i, e := range ls.Buckets {
		entries[i] = quote(e.Range.String()) + ": " + strconv.FormatInt(e.Load, 10)
	}
	if one := head + `, "buckets": {` + strings.Join(entries, ", ") + "}},\n"; len(one) <= maxCellLine {
		return one
	}
	return head + ", \"buckets\": {\n    " + strings.Join(entries, ",\n    ") + "\n  }},\n"
}
