package router

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/cellctl/cellctl/internal/cellid"
	"github.com/cellctl/cellctl/internal/diag"
)

// positions says where the parts of a Spec sit in their file, so semantic
// errors point at a line. A Spec built in code has no positions (line 0).
// Fields that already failed to parse are in bad and are not checked again.
type positions struct {
	file        string
	parsed      bool
	version     int
	generatedAt int
	buckets     int
	cells       int
	overrides   int
	cell        []cellPos     // parallel to Spec.Cells
	override    []overridePos // parallel to Spec.Overrides
	bad         map[string]bool
	// badRanges is set when a bucket range failed to parse: the coverage
	// check would then only repeat that problem as "unassigned".
	badRanges bool
	load      loadPos // see capacity.go
}

type cellPos struct {
	line, state, weight, buckets, capacity int
	ranges                                 []int
}

type overridePos struct {
	line, tenant, cell, state, target, writeMode int
}

func (p *positions) isBad(field string) bool { return p.bad[field] }

// top is the line of a top-level key: where it is, or line 1 of a parsed
// file when the key is missing, or unknown (0) for a Spec built in code.
func (p *positions) top(line int) int {
	if line > 0 || !p.parsed {
		return line
	}
	return 1
}

func (p *positions) markBad(field string) {
	if p.bad == nil {
		p.bad = map[string]bool{}
	}
	p.bad[field] = true
}

func (p *positions) cellAt(i int) cellPos {
	if i < len(p.cell) {
		return p.cell[i]
	}
	return cellPos{}
}

func (p *positions) rangeLine(i, j int) int {
	c := p.cellAt(i)
	if j < len(c.ranges) {
		return c.ranges[j]
	}
	return c.buckets
}

func (p *positions) overrideAt(i int) overridePos {
	if i < len(p.override) {
		return p.override[i]
	}
	return overridePos{}
}

// or returns the first non-zero line.
func or(lines ...int) int {
	for _, l := range lines {
		if l > 0 {
			return l
		}
	}
	return 0
}

var (
	cellStates     = []string{string(CellActive), string(CellDraining), string(CellDrained)}
	overrideStates = []string{string(OverrideActive), string(OverrideMigrating)}
	writeModes     = []string{string(WriteRejectWith503), string(WriteAllow)}
)

// cellIDRule is the cell-id rule (internal/cellid, shared with the fleet
// loader and the cell template).
const cellIDRule = cellid.Rule

// ValidCellID reports whether id can name a cell.
func ValidCellID(id string) bool { return cellid.Valid(id) }

func validate(s *Spec, p *positions) error {
	var errs diag.List
	f := p.file

	if !p.isBad("version") && (s.Version < 1 || s.Version > MaxVersion) {
		errs.Add(f, p.top(p.version), "version", "must be a positive integer (1 to %d) that goes up with every change; got %d", int64(MaxVersion), s.Version)
	}
	if s.GeneratedAt != "" && !p.isBad("generated_at") {
		if _, err := time.Parse(time.RFC3339Nano, s.GeneratedAt); err != nil {
			errs.Add(f, p.top(p.generatedAt), "generated_at", "must be an RFC 3339 time like \"2026-05-01T12:00:00Z\"; got %s", diag.Echo(s.GeneratedAt))
		}
	}
	bucketsOK := s.Buckets >= 1 && s.Buckets <= MaxBuckets
	if !p.isBad("buckets") && !bucketsOK {
		errs.Add(f, p.top(p.buckets), "buckets", "must be an integer from 1 to %d (default %d); got %d", MaxBuckets, DefaultBuckets, s.Buckets)
	}

	// Cells.
	cellIdx := map[string]int{}
	if len(s.Cells) == 0 && !p.isBad("cells") {
		errs.Add(f, p.top(p.cells), "cells", "needs at least one cell, e.g. \"cells\": {\"cell-a\": {\"state\": \"active\", \"weight\": 1, \"buckets\": [\"0-%d\"]}}", max(s.Buckets, 1)-1)
	}
	if len(s.Cells) > MaxCells {
		errs.Add(f, p.top(p.cells), "cells", "has %d cells; at most %d are allowed", len(s.Cells), MaxCells)
	}
	for i, c := range s.Cells {
		cp := p.cellAt(i)
		field := diag.Join("cells", c.ID)
		if !ValidCellID(c.ID) {
			errs.Add(f, cp.line, field, "%s is not a valid cell id; cell ids are %s", diag.Echo(c.ID), cellIDRule)
		}
		if first, dup := cellIdx[c.ID]; dup {
			errs.Add(f, cp.line, field, "cell %s is listed more than once (cells[%d] and cells[%d]); each cell appears once", diag.Echo(c.ID), first, i)
			continue
		}
		cellIdx[c.ID] = i
		switch {
		case p.isBad(field + ".state"):
		case c.State == "":
			errs.Add(f, or(cp.line), field+".state", "required: %s", diag.Quote(cellStates))
		case c.State != CellActive && c.State != CellDraining && c.State != CellDrained:
			errs.Add(f, or(cp.state, cp.line), field+".state", "must be %s; got %s", diag.Quote(cellStates), diag.Echo(string(c.State)))
		}
		if !p.isBad(field+".weight") && (c.Weight < 1 || c.Weight > MaxWeight) {
			errs.Add(f, or(cp.weight, cp.line), field+".weight", "must be an integer from 1 to %d (the cell's relative capacity); got %d", MaxWeight, c.Weight)
		}
	}

	if bucketsOK {
		validateCoverage(s, p, &errs)
	}
	validateCapacity(s, p, &errs)
	if len(s.Overrides) > MaxOverrides {
		errs.Add(f, p.top(p.overrides), "overrides", "has %d overrides; at most %d are allowed", len(s.Overrides), MaxOverrides)
	} else {
		validateOverrides(s, p, cellIdx, &errs)
	}
	return errs.Err()
}

// validateCoverage checks that every bucket belongs to exactly one cell and
// that no drained cell owns any.
func validateCoverage(s *Spec, p *positions, errs *diag.List) {
	f := p.file
	owner := make([]int32, s.Buckets)
	for i := range owner {
		owner[i] = -1
	}
	anyBad := p.badRanges
	seen := map[string]bool{}
	// Overlapping ranges cost their length again; a file of many copies of
	// a huge range would otherwise take (ranges × buckets) steps.
	budget := 4 * s.Buckets
cells:
	for i, c := range s.Cells {
		if seen[c.ID] {
			continue // listed twice: already reported
		}
		seen[c.ID] = true
		field := diag.Join("cells", c.ID) + ".buckets"
		var owned Ranges
		for j, r := range c.Buckets {
			line := or(p.rangeLine(i, j), p.cellAt(i).line)
			rf := fmt.Sprintf("%s[%d]", field, j)
			if r.First < 0 || r.Last >= s.Buckets || r.First > r.Last {
				errs.Add(f, line, rf, "%q is outside the table; buckets are 0-%d (buckets: %d)", r.String(), s.Buckets-1, s.Buckets)
				anyBad = true
				continue
			}
			if budget -= r.Len(); budget < 0 {
				errs.Add(f, line, rf, "too many overlapping bucket ranges; fix the ranges reported above and check again")
				anyBad = true
				break cells
			}
			// Buckets of this range already owned, grouped by owner.
			dups := map[int32][]int{}
			for b := r.First; b <= r.Last; b++ {
				if o := owner[b]; o >= 0 {
					dups[o] = append(dups[o], b)
					continue
				}
				owner[b] = int32(i)
			}
			others := make([]int32, 0, len(dups))
			for o := range dups {
				others = append(others, o)
			}
			sort.Slice(others, func(a, b int) bool { return others[a] < others[b] })
			for _, o := range others {
				rs := RangesOf(dups[o])
				if int(o) == i {
					errs.Add(f, line, rf, "%s listed twice for this cell", bucketsAre(rs))
				} else {
					errs.Add(f, line, rf, "%s already assigned to %s%s; every bucket belongs to exactly one cell",
						bucketsAre(rs), s.Cells[o].ID, atLine(p.cellAt(int(o)).line))
				}
			}
			owned = append(owned, r)
		}
		if c.State == CellDrained && len(owned) > 0 {
			errs.Add(f, or(p.cellAt(i).buckets, p.cellAt(i).line), field,
				"a drained cell must own no buckets, but owns %s; move them to other cells first (cellctl drain) or use state %q while it still serves them",
				owned.Normalize(), CellDraining)
		}
	}
	if anyBad || len(s.Cells) == 0 {
		return
	}
	var free []int
	for b, o := range owner {
		if o < 0 {
			free = append(free, b)
		}
	}
	if len(free) > 0 {
		rs := RangesOf(free)
		errs.Add(f, p.top(p.cells), "cells", "%s not assigned to any cell; every bucket 0-%d needs exactly one cell",
			bucketsAre(rs), s.Buckets-1)
	}
}

// bucketsAre renders "bucket 7 is" or "buckets 5-9, 12 are".
func bucketsAre(rs Ranges) string {
	if rs.Count() == 1 {
		return "bucket " + rs.String() + " is"
	}
	return "buckets " + rs.String() + " are"
}

func validateOverrides(s *Spec, p *positions, cellIdx map[string]int, errs *diag.List) {
	f := p.file
	seen := make(map[string]int, len(s.Overrides))
	nfc := map[string]int{} // NFC form of each non-ASCII tenant → its override
	known := make([]string, 0, len(cellIdx))
	for id := range cellIdx {
		known = append(known, id)
	}
	sort.Strings(known)

	checkCell := func(line int, field, id, role string) {
		ci, ok := cellIdx[id]
		switch {
		case !ok && len(known) == 0:
			errs.Add(f, line, field, "unknown cell %s; the table has no cells", diag.Echo(id))
		case !ok:
			errs.Add(f, line, field, "unknown cell %s; known cells: %s", diag.Echo(id), diag.Quote(known))
		case s.Cells[ci].State == CellDrained:
			errs.Add(f, line, field, "cell %s is drained; %s must be an active or draining cell", diag.Echo(id), role)
		}
	}

	for i, o := range s.Overrides {
		op := p.overrideAt(i)
		// Field names are built only for messages: tables may hold a
		// million overrides.
		field := func(key string) string { return "overrides[" + strconv.Itoa(i) + "]." + key }
		bad := func(key string) bool { return len(p.bad) > 0 && p.bad[field(key)] }
		if !bad("tenant") {
			if err := ValidTenant(o.Tenant); err != nil {
				errs.Add(f, or(op.tenant, op.line), field("tenant"), "%v", err)
			} else if first, dup := seen[o.Tenant]; dup {
				errs.Add(f, or(op.tenant, op.line), field("tenant"), "tenant %s already has an override (overrides[%d]%s); one override per tenant",
					diag.Echo(o.Tenant), first, atLine(p.overrideAt(first).line))
			} else {
				seen[o.Tenant] = i
				if j, dup := lookalike(o.Tenant, i, seen, nfc); dup {
					errs.Add(f, or(op.tenant, op.line), field("tenant"), "tenant %s is the same text as %s (overrides[%d]%s) in another Unicode normalization form; "+
						"clients cannot tell them apart, so one table must not route them separately: keep one override and write tenant ids in NFC",
						diag.EchoASCII(o.Tenant), diag.EchoASCII(s.Overrides[j].Tenant), j, atLine(p.overrideAt(j).line))
				}
			}
		}
		if !bad("cell") {
			if o.Cell == "" {
				errs.Add(f, op.line, field("cell"), "required: the cell that serves the tenant; known cells: %s", diag.Quote(known))
			} else {
				checkCell(or(op.cell, op.line), field("cell"), o.Cell, "an override's cell")
			}
		}
		migrating := o.State == OverrideMigrating
		switch {
		case bad("state"):
		case o.State == "":
			errs.Add(f, op.line, field("state"), "required: %s", quotedOverrideStates)
		case o.State != OverrideActive && !migrating:
			errs.Add(f, or(op.state, op.line), field("state"), "must be %s; got %s", quotedOverrideStates, diag.Echo(string(o.State)))
		}
		if !bad("target") {
			switch {
			case migrating && o.Target == "":
				errs.Add(f, op.line, field("target"), "required when state is %q: the cell the tenant moves to", OverrideMigrating)
			case !migrating && o.Target != "" && o.State == OverrideActive:
				errs.Add(f, or(op.target, op.line), field("target"), "only allowed when state is %q; remove it for a pinned tenant", OverrideMigrating)
			case migrating && o.Target == o.Cell:
				errs.Add(f, or(op.target, op.line), field("target"), "must differ from cell (%s): a migration moves the tenant to another cell", diag.Echo(o.Cell))
			case migrating:
				checkCell(or(op.target, op.line), field("target"), o.Target, "a migration target")
			}
		}
		if !bad("write_mode") {
			switch {
			case migrating && o.WriteMode == "":
				errs.Add(f, op.line, field("write_mode"), "required when state is %q: %s", OverrideMigrating, quotedWriteModes)
			case o.WriteMode != "" && o.WriteMode != WriteRejectWith503 && o.WriteMode != WriteAllow:
				errs.Add(f, or(op.writeMode, op.line), field("write_mode"), "must be %s; got %s", quotedWriteModes, diag.Echo(string(o.WriteMode)))
			case !migrating && o.WriteMode != "" && o.State == OverrideActive:
				errs.Add(f, or(op.writeMode, op.line), field("write_mode"), "only allowed when state is %q; remove it for a pinned tenant", OverrideMigrating)
			}
		}
	}
}

// lookalike reports the earlier override whose tenant id is canonically
// equivalent to tenant (equal in NFC) without being byte-equal: "café" as
// U+00E9 and as "e" + U+0301, or "K" and the Kelvin sign U+212A. Tenant ids
// stay byte strings (the hash is over their bytes, and the edge does not
// normalise), so such pairs are refused rather than merged. ASCII ids are
// their own NFC form and cost one map lookup only once a non-ASCII id was
// seen. The edge handler's compile() applies the same rule (routing.js).
func lookalike(tenant string, i int, seen, nfc map[string]int) (int, bool) {
	ascii := true
	for k := 0; k < len(tenant); k++ {
		if tenant[k] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		j, ok := nfc[tenant]
		return j, ok && len(nfc) > 0
	}
	key := norm.NFC.String(tenant)
	if j, ok := nfc[key]; ok {
		return j, true
	}
	nfc[key] = i
	if key != tenant {
		if j, ok := seen[key]; ok {
			return j, true
		}
	}
	return 0, false
}

// atLine renders " at line N" when the line is known.
func atLine(line int) string {
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf(" at line %d", line)
}

// canonicalTime is an RFC 3339 time in UTC with the fewest digits, or s as
// it is when it does not parse (validate has refused it then).
func canonicalTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format(time.RFC3339Nano)
}
