package router

import (
	"math/bits"
	"strings"
)

// ovIndex finds a tenant's override from the tenant's FNV-1a hash, which
// Route computes anyway for the bucket.
//
// A Bloom filter comes first: one 64-bit word per lookup, 4 bits set per
// override, 16 to 32 bits per override (false positive rate about 0.5% at
// 16). At 2 to 4 bytes per override against the slots' 64 it stays in
// cache and within the TLB's reach where the slots do not, so a tenant
// without an override, the common case, is turned away after one load that
// rarely misses. The filter is keyed by filterKey, not by the FNV hash:
// filterKey reads the id eight bytes at a time with independent
// multiplies, so Route issues the filter's load before the FNV chain (a
// multiply per byte, one after the other) is done, and the load's latency
// — an L2 or TLB miss once a million overrides make the filter 2 MiB —
// hides behind the hashing instead of adding to it.
//
// Past the filter, the slots are an open-addressing table (load ≤ 1/2,
// linear probing) whose 32-byte slot (two to a cache line) holds all a hit
// needs: the serving cell, the override's index and the tenant id itself
// when it is at most 16 bytes long (else its first and last 8 bytes and a
// hash tag, the middle being in the arena), so a hit reads one more cache
// line, or two for a long id. Tenants whose 64-bit hashes collide probe on
// like any others: a slot only matches when the tenant id is equal.
type ovIndex struct {
	bloom      []uint64 // a power of two long
	bloomShift uint     // 64 - log2(len(bloom)), at most 63: the filter has at least two words
	slots      []ovSlot // empty when there is no override
	arena      string   // the middle bytes ([8:n-8]) of tenant ids longer than 16, back to back
}

const (
	ovBloomBitsPerOv = 16 // at least; up to twice that after rounding up to a power of two

	// Multipliers spreading the FNV hash: FNV-1a mixes its high bits well
	// and its low bits (which also pick the bucket) poorly.
	ovSlotMul  = 0x9E3779B97F4A7C15
	ovBloomMul = 0xC2B2AE3D27D4EB4F
)

type ovSlot struct {
	key  ovKey
	tag  uint32 // low 32 bits of the tenant's hash
	idx  uint32 // 1 + index in the overrides; 0 marks an empty slot
	off  uint32 // where the middle of a tenant id longer than 16 bytes is in the arena
	cell cellIndex
	n    uint8 // tenant id length
	_    uint8
}

// ovKey is a tenant id of up to 16 bytes, or the first and last 8 bytes of
// a longer one, packed into two words: two ids of the same length up to 16
// are equal exactly when their keys are.
type ovKey struct{ lo, hi uint64 }

func keyOf(s string) ovKey {
	switch n := len(s); {
	case n >= 8:
		return ovKey{le64(s[:8]), le64(s[n-8:])}
	case n >= 4:
		return ovKey{uint64(le32(s[:4])) | uint64(le32(s[n-4:]))<<32, 0}
	case n > 0:
		return ovKey{uint64(s[0]) | uint64(s[n/2])<<8 | uint64(s[n-1])<<16, 0}
	}
	return ovKey{}
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// newOvIndex indexes ovs; hash is the hash of ovs[i].Tenant (a parameter so
// tests can force collisions) and cell its serving cell.
func newOvIndex(ovs []Override, hash func(i int) uint64, cell func(i int) cellIndex) ovIndex {
	n := len(ovs)
	if n == 0 {
		return ovIndex{bloom: make([]uint64, 2), bloomShift: 63}
	}
	words := 2
	for words*64 < n*ovBloomBitsPerOv {
		words <<= 1
	}
	x := ovIndex{
		bloom:      make([]uint64, words),
		bloomShift: uint(64 - bits.TrailingZeros(uint(words))),
		slots:      make([]ovSlot, 2*n),
	}
	var arena strings.Builder
	for i, o := range ovs {
		h := hash(i)
		w, mask := x.bloomAt(filterKey(o.Tenant))
		x.bloom[w] |= mask
		e := ovSlot{key: keyOf(o.Tenant), tag: uint32(h), idx: uint32(i + 1), cell: cell(i), n: uint8(len(o.Tenant))}
		if len(o.Tenant) > 16 {
			e.off = uint32(arena.Len())
			arena.WriteString(o.Tenant[8 : len(o.Tenant)-8])
		}
		j := x.home(h)
		for x.slots[j].idx != 0 {
			if j++; j == uint64(len(x.slots)) {
				j = 0
			}
		}
		x.slots[j] = e
	}
	x.arena = arena.String()
	return x
}

// filterKey is the key of tenant in the filter: its length and its
// first, middle (past 16 bytes) and last eight bytes (every byte of an id up to 24 bytes
// long; longer ids that differ only elsewhere share a key, which costs
// them a slot probe, never a wrong answer), each word multiplied by its
// own constant — loads and multiplies that do not wait for each other or
// for the FNV chain. Table.lookup spells the same computation inline.
func filterKey(s string) uint64 {
	n := len(s)
	if n < 8 {
		return shortFilterKey(s)
	}
	if n <= 16 {
		return le64(s[:8])*filterMul0 ^ le64(s[n-8:])*filterMul2 ^ uint64(n)
	}
	m := n/2 - 4
	return le64(s[:8])*filterMul0 ^ le64(s[m:m+8])*filterMul1 ^ le64(s[n-8:])*filterMul2 ^ uint64(n)
}

// shortFilterKey is filterKey of an id shorter than 8 bytes: every byte,
// packed.
func shortFilterKey(s string) uint64 { return keyOf(s).lo ^ uint64(len(s))<<56 }

const (
	filterMul0 = 0x9E3779B97F4A7C15
	filterMul1 = 0xC2B2AE3D27D4EB4F
	filterMul2 = 0x165667B19E3779F9
)

// bloomAt returns the filter word of key (filterKey) and the bits of it
// that key sets: one of bloomPatterns, four bits each, so the mask is a
// load from an 8 KB table that stays in L1 rather than four shifts.
func (x *ovIndex) bloomAt(key uint64) (word uint64, mask uint64) {
	// Fold the high half in first: a multiply carries differences only
	// upwards, and ids that differ in their last byte differ in the key's
	// top bits.
	m := (key ^ key>>32) * ovBloomMul
	// The top bits pick the word (at most 22 of them: MaxOverrides*32/64
	// words), bits 20 to 29 the pattern.
	return m >> (x.bloomShift & 63), bloomPatterns[m>>20&1023]
}

// bloomPatterns are 1024 masks of four distinct bits, drawn once.
var bloomPatterns = func() (p [1024]uint64) {
	seed := uint64(0x5eed)
	for i := range p {
		for bits.OnesCount64(p[i]) < 4 {
			seed += 0x9E3779B97F4A7C15
			z := (seed ^ seed>>30) * 0xBF58476D1CE4E5B9
			z = (z ^ z>>27) * 0x94D049BB133111EB
			p[i] |= 1 << ((z ^ z>>31) & 63)
		}
	}
	return p
}()

// probe loads tenant's filter word and the bits it must have: the caller
// checks them (word&mask == mask) once it needs the answer, so the load
// runs while it hashes the id. Never a miss for a tenant with an
// override; no override, no pass (the filter is then one zero word).
func (x *ovIndex) probe(tenant string) (word, mask uint64) {
	w, mask := x.bloomAt(filterKey(tenant))
	return x.bloom[w], mask
}

// mayHave reports whether the filter lets tenant through: always when it
// has an override, rarely otherwise, never when there is no override.
func (x *ovIndex) mayHave(tenant string) bool {
	w, mask := x.probe(tenant)
	return w&mask == mask
}

// home is h's first slot.
func (x *ovIndex) home(h uint64) uint64 {
	j, _ := bits.Mul64(h*ovSlotMul, uint64(len(x.slots)))
	return j
}

// find returns the serving cell and index of the override of tenant (whose
// hash is h), or -1. Call it when mayHave(h).
func (x *ovIndex) find(h uint64, tenant string) (cellIndex, int) {
	k, n, tag := keyOf(tenant), len(tenant), uint32(h)
	for j := x.home(h); ; {
		e := &x.slots[j]
		if e.idx == 0 {
			return 0, -1
		}
		if e.key == k && int(e.n) == n && (n <= 16 || e.tag == tag && x.arena[e.off:e.off+uint32(n-16)] == tenant[8:n-8]) {
			return e.cell, int(e.idx - 1)
		}
		if j++; j == uint64(len(x.slots)) {
			j = 0
		}
	}
}
