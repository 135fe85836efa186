package router

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/routing (and stacks/routing.json with -demo)")
var writeDemo = flag.Bool("demo", false, "with -update: regenerate stacks/routing.json from Place")

const goldenDir = "../testdata/routing"

// goldenSpec is the table the golden vectors route through: weighted cells,
// a drained cell whose buckets were spread by Drain (so ranges are
// fragmented), a draining cell that still owns buckets, and overrides of
// every kind, including tenant ids that are Object.prototype keys in JS.
func goldenSpec(t testing.TB) *Table {
	cells := []CellWeight{{"cell-a", 1}, {"cell-b", 2}, {"cell-c", 1}, {"cell-d", 3}, {"cell-e", 1}}
	a := Place(cells, DefaultBuckets)
	s := Spec{Version: 41, Buckets: DefaultBuckets}
	for _, c := range cells {
		s.Cells = append(s.Cells, CellSpec{ID: c.Cell, State: CellActive, Weight: c.Weight, Buckets: a.Ranges(c.Cell)})
	}
	tb, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	tb, err = Drain(tb, "cell-c")
	if err != nil {
		t.Fatal(err)
	}
	s = tb.Spec()
	for i := range s.Cells {
		if s.Cells[i].ID == "cell-e" {
			s.Cells[i].State = CellDraining
		}
	}
	pin := func(tenant, cell string) {
		s.Overrides = append(s.Overrides, Override{Tenant: tenant, Cell: cell, State: OverrideActive})
	}
	migrate := func(tenant, cell, target string, mode WriteMode) {
		s.Overrides = append(s.Overrides, Override{Tenant: tenant, Cell: cell, State: OverrideMigrating, Target: target, WriteMode: mode})
	}
	pin("acme", "cell-b")
	pin("initech", "cell-e") // pinned to a draining cell
	pin("__proto__", "cell-d")
	pin("東京", "cell-a")
	pin("müller-gmbh", "cell-d")
	pin("😀", "cell-b")
	pin(`quote"and\backslash`, "cell-a")
	pin(strings.Repeat("p", MaxTenantBytes), "cell-e")
	migrate("globex", "cell-a", "cell-d", WriteRejectWith503)
	migrate("umbrella", "cell-d", "cell-b", WriteAllow)
	migrate("hooli", "cell-e", "cell-a", WriteRejectWith503) // leaving the draining cell
	migrate("Ωmega", "cell-b", "cell-a", WriteRejectWith503)
	for i := 0; i < 40; i++ {
		tenant := fmt.Sprintf("tenant-%04d", i*37)
		cell := s.Cells[i%len(s.Cells)].ID
		if cell == "cell-c" {
			cell = "cell-a"
		}
		if i%5 == 0 {
			target := "cell-b"
			if cell == target {
				target = "cell-d"
			}
			migrate(tenant, cell, target, WriteRejectWith503)
		} else {
			pin(tenant, cell)
		}
	}
	tb, err = New(s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// GoldenTenant is one vector of golden_tenants.json.
type GoldenTenant struct {
	Tenant    string        `json:"tenant"`
	Valid     bool          `json:"valid"`
	Hash      string        `json:"hash,omitempty"`  // 16 hex digits
	Hash2     string        `json:"hash2,omitempty"` // Hash2, 16 hex digits (the routing image's second key)
	Bucket    int           `json:"bucket"`
	Cell      string        `json:"cell,omitempty"`
	Override  bool          `json:"override,omitempty"`
	State     OverrideState `json:"state,omitempty"`
	Target    string        `json:"target,omitempty"`
	WriteMode WriteMode     `json:"write_mode,omitempty"`
}

// goldenTenantIDs covers plain ids, unicode in every UTF-8 length, the
// length limits, every boundary of the forbidden ranges, and JS traps.
func goldenTenantIDs(tb *Table) []string {
	var ids []string
	for i := 0; i < 2000; i++ {
		ids = append(ids, fmt.Sprintf("tenant-%04d", i))
	}
	seed := uint64(7)
	for i := 0; i < 500; i++ {
		ids = append(ids, fmt.Sprintf("t%x", splitmix64(&seed)))
	}
	ids = append(ids,
		// 1 byte and the 128-byte limit in 1-, 2-, 3- and 4-byte characters.
		"a", "0", "~", "!", "Z",
		strings.Repeat("x", 128), strings.Repeat("x", 129), strings.Repeat("x", 127)+"é",
		strings.Repeat("é", 64), strings.Repeat("é", 63)+"xx", strings.Repeat("€", 42)+"ab", strings.Repeat("€", 43),
		strings.Repeat("😀", 32), strings.Repeat("😀", 31)+"abcde", strings.Repeat("😀", 33),
		"",
		// Unicode.
		"müller", "mu\u0308ller", "東京", "日本語テナント", "😀", "😀😀", "🇩🇪", "Ωmega", "ω", "Ω",
		"مرحبا", "שלום", "नमस्ते", "สวัสดี", "안녕하세요", "Привет", "Ελλάδα", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "\U0010FFFF", "\U00010000",
		"\u00ff", "\u0100", "\u07ff", "\u0800", "\uffef", "e\u0301", "👨\u200d👩\u200d👧",
		// JS object keys and escapes.
		"__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype",
		`quote"and\backslash`, `back\slash`, "<script>", "a/b?c=d&e#f", "tenant.with.dots", "UPPER", "upper",
	)
	for _, r := range forbiddenRanges {
		for _, cp := range []rune{r[0] - 1, r[0], r[1], r[1] + 1} {
			if cp < 0 || (cp >= 0xD800 && cp <= 0xDFFF) {
				continue // surrogates are not UTF-8: checked in the JS unit tests
			}
			ids = append(ids, "a"+string(cp)+"b", string(cp))
		}
	}
	for _, o := range tb.Overrides() {
		ids = append(ids, o.Tenant)
	}
	// Drop duplicates, keep order.
	seen := map[string]bool{}
	out := ids[:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func goldenTenants(tb *Table) []GoldenTenant {
	var out []GoldenTenant
	for _, id := range goldenTenantIDs(tb) {
		r := tb.Route(id)
		g := GoldenTenant{Tenant: id, Valid: r.Valid, Bucket: r.Bucket}
		if r.Valid {
			g.Hash = fmt.Sprintf("%016x", r.Hash)
			g.Hash2 = fmt.Sprintf("%016x", Hash2(id))
			g.Cell = r.Cell
			if o := r.Override; o != nil {
				g.Override, g.State, g.Target, g.WriteMode = true, o.State, o.Target, o.WriteMode
			}
		}
		out = append(out, g)
	}
	return out
}

// marshalLines writes a JSON array with one element per line, so a change
// to one vector is one line of diff.
func marshalLines[T any](items []T) []byte {
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, it := range items {
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(it); err != nil {
			panic(err)
		}
		b.Write(bytes.TrimRight(line.Bytes(), "\n"))
		if i < len(items)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes()
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./router -update` to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs from what Go computes now at line %d:\n  file: %s\n  now:  %s\nif the change is intended run `go test ./router -update` (and then `go test ./router/edge -update`) and review the diff",
					path, i+1, wl[i], gl[i])
			}
		}
		t.Fatalf("%s differs from what Go computes now (%d vs %d lines); run `go test ./router -update` if intended", path, len(wl), len(gl))
	}
}

// TestGoldenVectors pins the hashing and routing truth that the edge
// handler (router/edge, JavaScript) is tested against.
func TestGoldenVectors(t *testing.T) {
	tb := goldenSpec(t)
	checkGolden(t, filepath.Join(goldenDir, "golden_table.json"), tb.Marshal())
	vectors := goldenTenants(tb)
	valid, invalid, unicode, overridden := 0, 0, 0, 0
	for _, v := range vectors {
		if v.Valid {
			valid++
		} else {
			invalid++
		}
		if strings.ContainsFunc(v.Tenant, func(r rune) bool { return r > 0x7f }) {
			unicode++
		}
		if v.Override {
			overridden++
		}
	}
	if valid < 2000 || invalid < 30 || unicode < 40 || overridden < 50 {
		t.Fatalf("golden vectors lost coverage: %d valid, %d invalid, %d unicode, %d overridden", valid, invalid, unicode, overridden)
	}
	checkGolden(t, filepath.Join(goldenDir, "golden_tenants.json"), marshalLines(vectors))

	// The committed table must also load from disk to the same table.
	loaded, err := Load(filepath.Join(goldenDir, "golden_table.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Equal(tb) {
		t.Fatal("golden_table.json does not load back to the golden table")
	}
}

func demoTable(t testing.TB) *Table {
	ids := []string{"cell-a", "cell-b", "cell-c", "cell-d"}
	var cw []CellWeight
	for _, id := range ids {
		cw = append(cw, CellWeight{Cell: id, Weight: 1})
	}
	a := Place(cw, DefaultBuckets)
	s := Spec{Version: 1, Buckets: DefaultBuckets}
	for _, id := range ids {
		s.Cells = append(s.Cells, CellSpec{ID: id, State: CellActive, Weight: 1, Buckets: a.Ranges(id)})
	}
	s.Overrides = []Override{
		{Tenant: "acme", Cell: "cell-b", State: OverrideActive},
		{Tenant: "globex", Cell: "cell-a", State: OverrideMigrating, Target: "cell-c", WriteMode: WriteRejectWith503},
	}
	tb, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestDemoTable keeps the demo fleet's routing table valid and canonical.
// It is the fleet's source of truth, so the test does not pin its content
// (drain and migrate change it); `-update -demo` rebuilds it from Place.
func TestDemoTable(t *testing.T) {
	path := "../stacks/routing.json"
	if *update && *writeDemo {
		if err := demoTable(t).WriteFile(path); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Parse("stacks/routing.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tb.Marshal(), data) {
		t.Errorf("stacks/routing.json is not in canonical form; rewrite it with (*router.Table).WriteFile")
	}
}
