// Package router is the routing table of the cell fleet: which cell serves
// which tenant.
//
// A tenant's bucket is FNV-1a-64(tenant id) mod B; the table assigns every
// bucket to exactly one cell, and tenant overrides pin single tenants to a
// cell (or mark them as migrating between two cells). The table lives in
// stacks/routing.json, is reviewed in pull requests, carries a version that
// only goes up, and is baked into the Lambda@Edge function by the router
// stack (see package router/edge), so no control plane is on the request
// path.
//
// The package is pure Go (no Pulumi or AWS imports) so the CLI, the router
// program and the tests share one implementation of hashing and lookup.
package router

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"sync"
)

// Limits of a routing table.
const (
	DefaultBuckets = 1024
	MaxBuckets     = 1 << 20
	MaxCells       = 4096
	MaxWeight      = 1000
	// MaxOverrides: a million overrides are a 16 MB routing image that
	// the edge function loads in milliseconds within its default 128 MB
	// (measured, docs/BENCHMARKS.md; edge.CheckFits holds each table to
	// the function's memory).
	MaxOverrides = 1_000_000
	// MaxVersion keeps versions exact in JavaScript (2^53-1), which reads
	// them from the edge config.
	MaxVersion = 1<<53 - 1
)

// CellState is where a cell is in its life: active cells take new buckets,
// draining cells keep serving what they still own but take nothing new,
// drained cells serve nothing.
type CellState string

const (
	CellActive   CellState = "active"
	CellDraining CellState = "draining"
	CellDrained  CellState = "drained"
)

// OverrideState says whether a pinned tenant is settled or being moved.
type OverrideState string

const (
	OverrideActive    OverrideState = "active"
	OverrideMigrating OverrideState = "migrating"
)

// WriteMode says what the edge does with writes of a migrating tenant.
type WriteMode string

const (
	// WriteRejectWith503 answers POST/PUT/PATCH/DELETE with 503 and
	// Retry-After while the tenant's data is copied; reads still go to the
	// current cell.
	WriteRejectWith503 WriteMode = "reject_with_503"
	// WriteAllow forwards writes to the current cell as usual.
	WriteAllow WriteMode = "allow"
)

// Spec is the plain content of a routing table: what routing.json holds.
// Build a Table from it with New, which validates it.
type Spec struct {
	Version int64 `json:"version"`
	// GeneratedAt is when the table was written (RFC 3339, UTC), "" when
	// it does not say: SaveTable stamps every table a cellctl command
	// publishes, and the edge function carries it beside the table's
	// checksum so an operator can tell which table an edge serves.
	GeneratedAt string     `json:"generated_at,omitempty"`
	Buckets     int        `json:"buckets"`
	Cells       []CellSpec `json:"cells"`
	Overrides   []Override `json:"overrides"`
	// Load is the load each bucket carries, nil for uniform (one unit per
	// bucket): see capacity.go.
	Load *LoadSpec `json:"load,omitempty"`
}

// CellSpec is one cell of the table.
type CellSpec struct {
	ID      string    `json:"id"`
	State   CellState `json:"state"`
	Weight  int       `json:"weight"`
	Buckets Ranges    `json:"buckets"`
	// Capacity is the load the cell is tested to carry; 0 means derived
	// from its weight (see capacity.go).
	Capacity int64 `json:"capacity,omitempty"`
}

// Override pins one tenant to a cell regardless of its bucket. A migrating
// tenant is still served by Cell; Target is where it is going.
type Override struct {
	Tenant    string        `json:"tenant"`
	Cell      string        `json:"cell"`
	State     OverrideState `json:"state"`
	Target    string        `json:"target,omitempty"`
	WriteMode WriteMode     `json:"write_mode,omitempty"`
}

// Route is where one tenant's requests go.
type Route struct {
	Valid      bool   `json:"valid"` // the tenant id is valid; nothing else is set when false
	Hash       uint64 `json:"hash,string"`
	Bucket     int    `json:"bucket"`     // -1 when the tenant id is invalid
	Cell       string `json:"cell"`       // the cell that serves the tenant now (a migrating tenant's current cell)
	BucketCell string `json:"bucketCell"` // the cell of the tenant's bucket (differs from Cell when overridden)
	// Override is the tenant's override, nil when it has none. It points
	// into the table: read it, do not modify it.
	Override *Override `json:"override,omitempty"`
}

// RejectsWrites reports whether the edge answers this tenant's writes with
// 503 (a migrating tenant with write_mode reject_with_503).
func (r Route) RejectsWrites() bool {
	return r.Override != nil && r.Override.State == OverrideMigrating && r.Override.WriteMode == WriteRejectWith503
}

// Table is a validated, immutable routing table with a precomputed lookup,
// safe for concurrent use. Change one by editing its Spec and calling New.
type Table struct {
	spec Spec // canonical: cells sorted by id, ranges merged, overrides sorted by tenant

	cellIDs    []string
	cellByID   map[string]cellIndex
	bucketCell []cellIndex
	bucketMask uint64 // B-1 when B is a power of two
	pow2       bool

	// Overrides are found by their FNV hash, which Route computes anyway
	// for the bucket: see ovIndex. A table without overrides skips it.
	ov          ovIndex
	noOverrides bool

	checksumOnce sync.Once
	checksum     string
}

type cellIndex uint16

// New validates s and builds its table. Errors are diag errors naming the
// field and what is allowed, attributed to "routing table".
func New(s Spec) (*Table, error) { return build("routing table", s, nil) }

func build(file string, s Spec, p *positions) (*Table, error) {
	if p == nil {
		p = &positions{}
	}
	p.file = file
	if err := validate(&s, p); err != nil {
		return nil, err
	}
	return compile(canonical(s)), nil
}

// canonical copies s into its one spelling.
func canonical(s Spec) Spec {
	out := Spec{Version: s.Version, GeneratedAt: canonicalTime(s.GeneratedAt), Buckets: s.Buckets}
	out.Cells = make([]CellSpec, len(s.Cells))
	for i, c := range s.Cells {
		c.Buckets = c.Buckets.Normalize()
		out.Cells[i] = c
	}
	sort.Slice(out.Cells, func(i, j int) bool { return out.Cells[i].ID < out.Cells[j].ID })
	out.Overrides = append([]Override(nil), s.Overrides...)
	sort.Slice(out.Overrides, func(i, j int) bool { return out.Overrides[i].Tenant < out.Overrides[j].Tenant })
	out.Load = s.Load.canonical()
	return out
}

func compile(s Spec) *Table {
	t := &Table{spec: s}
	t.cellIDs = make([]string, len(s.Cells))
	t.cellByID = make(map[string]cellIndex, len(s.Cells))
	t.bucketCell = make([]cellIndex, s.Buckets)
	for i, c := range s.Cells {
		t.cellIDs[i] = c.ID
		t.cellByID[c.ID] = cellIndex(i)
		for _, r := range c.Buckets {
			for b := r.First; b <= r.Last; b++ {
				t.bucketCell[b] = cellIndex(i)
			}
		}
	}
	if s.Buckets&(s.Buckets-1) == 0 {
		t.pow2, t.bucketMask = true, uint64(s.Buckets-1)
	}

	t.noOverrides = len(s.Overrides) == 0
	t.ov = newOvIndex(s.Overrides,
		func(i int) uint64 { return Hash(s.Overrides[i].Tenant) },
		func(i int) cellIndex { return t.cellByID[s.Overrides[i].Cell] })
	return t
}

// Route says where tenant's requests go. It does not allocate. Overrides
// cost a tenant without one a load in a small filter, and a tenant with one
// a cache line more, however many there are: see ovIndex.
func (t *Table) Route(tenant string) (r Route) {
	// Fields are set one by one: building a Route literal makes the
	// compiler copy it through the stack in 16-byte moves that miss store
	// forwarding, which costs more than the lookup itself.
	h, b, cell, ov := t.lookup(tenant)
	if b < 0 {
		r.Bucket = -1
		return r
	}
	r.Valid = true
	r.Hash = h
	r.Bucket = b
	r.Cell = t.cellIDs[cell]
	r.BucketCell = t.cellIDs[t.bucketCell[b]]
	if ov >= 0 {
		r.Override = &t.spec.Overrides[ov]
	}
	return r
}

// lookup returns the tenant's hash, bucket (-1 for an invalid id), serving
// cell and override index (-1 for none).
func (t *Table) lookup(tenant string) (h uint64, bucket int, cell cellIndex, override int) {
	// The filter's word is loaded first (filterKey, inline): its latency
	// overlaps the hash.
	// Without overrides the filter is skipped: word&mask != mask.
	word, mask := uint64(0), uint64(1)
	if !t.noOverrides {
		var k uint64
		if n := len(tenant); n > 16 {
			m := n/2 - 4
			k = le64(tenant[:8])*filterMul0 ^ le64(tenant[m:m+8])*filterMul1 ^ le64(tenant[n-8:])*filterMul2 ^ uint64(n)
		} else if n >= 8 {
			k = le64(tenant[:8])*filterMul0 ^ le64(tenant[n-8:])*filterMul2 ^ uint64(n)
		} else {
			k = shortFilterKey(tenant)
		}
		w, bits := t.ov.bloomAt(k)
		word, mask = t.ov.bloom[w], bits
	}
	// hashTenant, with fnvScan inline: a call would spill the filter's
	// word.
	if len(tenant) == 0 || len(tenant) > MaxTenantBytes {
		return 0, -1, 0, -1
	}
	h, unusual := fnvScan(tenant)
	if unusual&0x100 != 0 && !validRunes(tenant) {
		return 0, -1, 0, -1
	}
	if t.pow2 {
		bucket = int(h & t.bucketMask)
	} else {
		bucket = int(h % uint64(len(t.bucketCell)))
	}
	cell = t.bucketCell[bucket]
	if word&mask != mask {
		return h, bucket, cell, -1
	}
	if c, i := t.ov.find(h, tenant); i >= 0 {
		return h, bucket, c, i
	}
	return h, bucket, cell, -1
}

// BucketOf is the bucket of tenant in a table of the given size; it does not
// check the tenant id.
func BucketOf(tenant string, buckets int) int {
	return int(Hash(tenant) % uint64(buckets))
}

// Version is the table's version.
func (t *Table) Version() int64 { return t.spec.Version }

// GeneratedAt is when the table was written (RFC 3339, UTC), "" when it
// does not say.
func (t *Table) GeneratedAt() string { return t.spec.GeneratedAt }

// Checksum identifies the table's routing content: "sha256:" and the hex
// SHA-256 of its canonical form (Marshal) without generated_at, whatever
// the shape or formatting of the file it was read from — equal tables
// (Equal) have equal checksums. The edge function carries it, so the
// checksum a distribution serves can be compared with a local table's.
func (t *Table) Checksum() string {
	t.checksumOnce.Do(func() {
		sum := sha256.Sum256(t.marshal(false))
		t.checksum = "sha256:" + hex.EncodeToString(sum[:])
	})
	return t.checksum
}

// Buckets is B, the number of buckets.
func (t *Table) Buckets() int { return t.spec.Buckets }

// CellIDs lists the cells in canonical (sorted) order.
func (t *Table) CellIDs() []string { return append([]string(nil), t.cellIDs...) }

// Cells returns a copy of the cells in canonical order.
func (t *Table) Cells() []CellSpec { return t.Spec().Cells }

// Cell returns the cell named id.
func (t *Table) Cell(id string) (CellSpec, bool) {
	i, ok := t.cellByID[id]
	if !ok {
		return CellSpec{}, false
	}
	c := t.spec.Cells[i]
	c.Buckets = append(Ranges(nil), c.Buckets...)
	return c, true
}

// Overrides returns a copy of the overrides sorted by tenant.
func (t *Table) Overrides() []Override { return append([]Override(nil), t.spec.Overrides...) }

// Override returns tenant's override, if it has one.
func (t *Table) Override(tenant string) (Override, bool) {
	i := sort.Search(len(t.spec.Overrides), func(i int) bool { return t.spec.Overrides[i].Tenant >= tenant })
	if i < len(t.spec.Overrides) && t.spec.Overrides[i].Tenant == tenant {
		return t.spec.Overrides[i], true
	}
	return Override{}, false
}

// CellOf is the cell bucket b is assigned to.
func (t *Table) CellOf(bucket int) string { return t.cellIDs[t.bucketCell[bucket]] }

// Assignment is the bucket → cell map of the table.
func (t *Table) Assignment() Assignment {
	a := make(Assignment, len(t.bucketCell))
	for b, c := range t.bucketCell {
		a[b] = t.cellIDs[c]
	}
	return a
}

// Spec returns a deep copy of the table's canonical content, ready to edit
// and pass to New.
func (t *Table) Spec() Spec {
	s := Spec{Version: t.spec.Version, GeneratedAt: t.spec.GeneratedAt, Buckets: t.spec.Buckets}
	s.Cells = make([]CellSpec, len(t.spec.Cells))
	for i, c := range t.spec.Cells {
		c.Buckets = append(Ranges(nil), c.Buckets...)
		s.Cells[i] = c
	}
	s.Overrides = t.Overrides()
	s.Load = t.spec.Load.clone()
	return s
}

// Equal reports whether t and o have the same content (generated_at, when
// the table was written, is not content).
func (t *Table) Equal(o *Table) bool {
	if t == nil || o == nil {
		return t == o
	}
	a, b := &t.spec, &o.spec
	if a.Version != b.Version || a.Buckets != b.Buckets || len(a.Cells) != len(b.Cells) || len(a.Overrides) != len(b.Overrides) {
		return false
	}
	for i := range a.Cells {
		x, y := a.Cells[i], b.Cells[i]
		if x.ID != y.ID || x.State != y.State || x.Weight != y.Weight || x.Capacity != y.Capacity || len(x.Buckets) != len(y.Buckets) {
			return false
		}
		for j := range x.Buckets {
			if x.Buckets[j] != y.Buckets[j] {
				return false
			}
		}
	}
	for i := range a.Overrides {
		if a.Overrides[i] != b.Overrides[i] {
			return false
		}
	}
	return a.Load.equal(b.Load)
}
