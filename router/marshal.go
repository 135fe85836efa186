package router

import (
	"bytes"
	"github.com/cellctl/cellctl/internal/safefile"
	"strconv"
	"strings"
)

// maxCellLine is the width up to which a cell is written on one line; a
// cell with more ranges gets one range per line so bucket moves show as
// line changes in a PR diff.
const maxCellLine = 100

// Marshal writes the table in its canonical form: fixed key order, cells
// sorted by id, ranges merged and sorted, overrides sorted by tenant, one
// cell and one override per line. Parse(Marshal(t)) equals t and
// re-marshals to the same bytes.
func (t *Table) Marshal() []byte { return t.marshal(true) }

// marshal is Marshal, without generated_at when stamp is false (what the
// checksum covers).
func (t *Table) marshal(stamp bool) []byte {
	s := &t.spec
	var b bytes.Buffer
	b.Grow(256 + 80*len(s.Cells) + 100*len(s.Overrides))
	b.WriteString("{\n")
	b.WriteString(`  "version": ` + strconv.FormatInt(s.Version, 10) + ",\n")
	if stamp && s.GeneratedAt != "" {
		b.WriteString(`  "generated_at": ` + quote(s.GeneratedAt) + ",\n")
	}
	b.WriteString(`  "buckets": ` + strconv.Itoa(s.Buckets) + ",\n")
	b.WriteString("  \"cells\": {\n")
	for i, c := range s.Cells {
		head := "    " + quote(c.ID) + `: {"state": ` + quote(string(c.State)) + `, "weight": ` + strconv.Itoa(c.Weight)
		if c.Capacity > 0 {
			head += `, "capacity": ` + strconv.FormatInt(c.Capacity, 10)
		}
		head += `, "buckets": [`
		ranges := c.Buckets.Strings()
		for j := range ranges {
			ranges[j] = quote(ranges[j])
		}
		oneLine := head + strings.Join(ranges, ", ") + "]}"
		if len(oneLine) <= maxCellLine || len(ranges) <= 1 {
			b.WriteString(oneLine)
		} else {
			b.WriteString(head + "\n")
			for j, r := range ranges {
				b.WriteString("      " + r)
				if j < len(ranges)-1 {
					b.WriteByte(',')
				}
				b.WriteByte('\n')
			}
			b.WriteString("    ]}")
		}
		if i < len(s.Cells)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("  },\n")
	b.WriteString(marshalLoad(s.Load))
	if len(s.Overrides) == 0 {
		b.WriteString("  \"overrides\": []\n}\n")
		return b.Bytes()
	}
	b.WriteString("  \"overrides\": [\n")
	for i, o := range s.Overrides {
		b.WriteString(`    {"tenant": ` + quote(o.Tenant) + `, "cell": ` + quote(o.Cell) + `, "state": ` + quote(string(o.State)))
		if o.Target != "" {
			b.WriteString(`, "target": ` + quote(o.Target))
		}
		if o.WriteMode != "" {
			b.WriteString(`, "write_mode": ` + quote(string(o.WriteMode)))
		}
		b.WriteByte('}')
		if i < len(s.Overrides)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("  ]\n}\n")
	return b.Bytes()
}

// WriteFile writes the canonical form of t to path atomically: readers
// (and a crash) see the old file or the new one, never half of one.
func (t *Table) WriteFile(path string) error {
	return safefile.Write(path, t.Marshal(), 0o644)
}

// quote writes a JSON string. Validated tables hold no control or
// invisible characters (tenant ids and cell ids forbid them), so only the
// quote and the backslash need escaping and Unicode stays readable.
func quote(s string) string {
	if !strings.ContainsAny(s, `"\`) {
		return `"` + s + `"`
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
