package router

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/diag"
)

// Every malformed table in testdata/routing/bad and the exact problems
// cellctl reports for it, one line per problem.
var badTables = map[string][]string{
	"empty.json": {
		`empty.json:1: the file is empty; expected a JSON object with "version", "buckets", "cells" and "overrides"`,
	},
	"not_json.json": {
		`not_json.json:4: malformed JSON at column 3: expected a key in double quotes, found 'c'; keys need double quotes`,
	},
	"trailing_comma.json": {
		`trailing_comma.json:5: malformed JSON at column 3: expected a key in double quotes, found '}'; remove the trailing comma`,
	},
	"yaml.json": {
		`yaml.json:1: malformed JSON at column 1: unexpected 'v' where a value should start; the file must be JSON, with strings in double quotes`,
	},
	"two_documents.json": {
		`two_documents.json:2: malformed JSON at column 1: unexpected '{' after the end of the JSON document`,
	},
	"unknown_keys.json": {
		`unknown_keys.json:4: comment: unknown key; allowed keys: "version", "generated_at", "buckets", "cells", "overrides" or "load"`,
		`unknown_keys.json:6: cells.cell-a.zone: unknown key; allowed keys: "state", "weight", "buckets" or "capacity"`,
		`unknown_keys.json:9: overrides[0].reason: unknown key; allowed keys: "tenant", "cell", "state", "target" or "write_mode"`,
	},
	"version.json": {
		`version.json:2: version: must be a positive integer (1 to 9007199254740991) that goes up with every change; got 0`,
		`version.json:3: buckets: must be an integer from 1 to 1048576 (default 1024); got 2000000`,
	},
	"wrong_types.json": {
		`wrong_types.json:2: version: must be a positive integer; got the string "7"`,
		`wrong_types.json:3: buckets: must be an integer from 1 to 1048576; got a number (1024.5)`,
		`wrong_types.json:5: cells.cell-a.state: must be "active", "draining" or "drained"; got an integer (1)`,
		`wrong_types.json:5: cells.cell-a.weight: must be an integer from 1 to 1000 (the cell's relative capacity); got the string "heavy"`,
		`wrong_types.json:5: cells.cell-a.buckets: must be an array of bucket ranges like ["0-255", "512"]; got the string "0-1023"`,
		`wrong_types.json:6: cells.cell-b: must be an object with "state", "weight" and "buckets"; got an array`,
		`wrong_types.json:8: overrides: must be an array of {"tenant", "cell", "state"[, "target", "write_mode"]} objects; got an object`,
	},
	"missing_required.json": {
		`missing_required.json:1: version: required: a positive integer that goes up with every change to the table`,
		`missing_required.json:4: cells.cell-a.state: required: "active", "draining" or "drained"`,
		`missing_required.json:4: cells.cell-a.weight: required: the cell's relative capacity, an integer from 1 to 1000`,
		`missing_required.json:7: overrides[0].tenant: required: the tenant id this override pins`,
		`missing_required.json:8: overrides[1]: must be an object with "tenant", "cell", "state", "target" or "write_mode"; got the string "globex"`,
	},
	"no_cells.json": {
		`no_cells.json:4: cells: needs at least one cell, e.g. "cells": {"cell-a": {"state": "active", "weight": 1, "buckets": ["0-1023"]}}`,
	},
	"duplicate_keys.json": {
		`duplicate_keys.json:3: version: duplicate key (first set on line 2)`,
		`duplicate_keys.json:7: cells.cell-a: duplicate key (first set on line 6)`,
	},
	"unassigned.json": {
		`unassigned.json:4: cells: buckets 300-310, 1022-1023 are not assigned to any cell; every bucket 0-1023 needs exactly one cell`,
	},
	"overlap.json": {
		`overlap.json:6: cells.cell-b.buckets[0]: buckets 250-260 are already assigned to cell-a at line 5; every bucket belongs to exactly one cell`,
		`overlap.json:6: cells.cell-b.buckets[2]: bucket 700 is listed twice for this cell`,
		`overlap.json:7: cells.cell-c.buckets[0]: "1000-1100" is outside the table; buckets are 0-1023 (buckets: 1024)`,
	},
	"range_syntax.json": {
		`range_syntax.json:5: cells.cell-a.buckets[0]: "0..255" is not a bucket range; use "N" or "N-M"`,
		`range_syntax.json:5: cells.cell-a.buckets[1]: "600-512" runs backwards; write the lower bucket first ("512-600")`,
		`range_syntax.json:5: cells.cell-a.buckets[2]: "07" is not a bucket range; use "N" or "N-M"`,
		`range_syntax.json:5: cells.cell-a.buckets[3]: must be a string like "0-255" or "512"; got an integer (300)`,
		`range_syntax.json:5: cells.cell-a.buckets[4]: " 1-2" is not a bucket range; use "N" or "N-M"`,
	},
	"cells.json": {
		`cells.json:5: cells.Cell_A: "Cell_A" is not a valid cell id; cell ids are "cell-" followed by 1–15 lowercase letters, digits or single inner hyphens (e.g. "cell-a", "cell-eu-1")`,
		`cells.json:6: cells.cell-b.state: must be "active", "draining" or "drained"; got "retired"`,
		`cells.json:6: cells.cell-b.weight: must be an integer from 1 to 1000 (the cell's relative capacity); got 0`,
		`cells.json:7: cells.cell-c.weight: must be an integer from 1 to 1000 (the cell's relative capacity); got 1001`,
		`cells.json:8: cells.cell-d.buckets: a drained cell must own no buckets, but owns 768-1023; move them to other cells first (cellctl drain) or use state "draining" while it still serves them`,
	},
	"lookalike_tenants.json": {
		`lookalike_tenants.json:10: overrides[1].tenant: tenant "cafe\u0301" is the same text as "caf\u00e9" (overrides[0] at line 9) in another Unicode normalization form; clients cannot tell them apart, so one table must not route them separately: keep one override and write tenant ids in NFC`,
		`lookalike_tenants.json:12: overrides[3].tenant: tenant "\u212aelvin" is the same text as "Kelvin" (overrides[2] at line 11) in another Unicode normalization form; clients cannot tell them apart, so one table must not route them separately: keep one override and write tenant ids in NFC`,
		`lookalike_tenants.json:14: overrides[5].tenant: tenant "\u00c5ngstro\u0308m" is the same text as "\u212bngstr\u00f6m" (overrides[4] at line 13) in another Unicode normalization form; clients cannot tell them apart, so one table must not route them separately: keep one override and write tenant ids in NFC`,
	},
	"invalid_utf8.json": {
		`invalid_utf8.json:7: malformed JSON at column 19: invalid UTF-8: byte 0xff at byte offset 141 of the file; JSON text must be UTF-8`,
	},
	"overrides.json": {
		`overrides.json:10: overrides[0].cell: unknown cell "cell-x"; known cells: "cell-a", "cell-b" or "cell-c"`,
		`overrides.json:11: overrides[1].tenant: tenant "acme" already has an override (overrides[0] at line 10); one override per tenant`,
		`overrides.json:12: overrides[2].cell: cell "cell-c" is drained; an override's cell must be an active or draining cell`,
		`overrides.json:13: overrides[3].target: required when state is "migrating": the cell the tenant moves to`,
		`overrides.json:13: overrides[3].write_mode: required when state is "migrating": "reject_with_503" or "allow"`,
		`overrides.json:14: overrides[4].target: must differ from cell ("cell-a"): a migration moves the tenant to another cell`,
		`overrides.json:14: overrides[4].write_mode: must be "reject_with_503" or "allow"; got "block"`,
		`overrides.json:15: overrides[5].target: cell "cell-c" is drained; a migration target must be an active or draining cell`,
		`overrides.json:16: overrides[6].target: only allowed when state is "migrating"; remove it for a pinned tenant`,
		`overrides.json:16: overrides[6].write_mode: only allowed when state is "migrating"; remove it for a pinned tenant`,
		`overrides.json:17: overrides[7].state: must be "active" or "migrating"; got "frozen"`,
		`overrides.json:18: overrides[8].tenant: tenant id "two words" contains U+0020 (space) at byte 3; allowed: 1-128 bytes of UTF-8 without whitespace, control or invisible formatting characters`,
		`overrides.json:19: overrides[9].tenant: tenant id is empty; allowed: 1-128 bytes of UTF-8 without whitespace, control or invisible formatting characters`,
		`overrides.json:20: overrides[10].tenant: tenant id "zero\u200bwidth" contains U+200B (zero-width space) at byte 4; allowed: 1-128 bytes of UTF-8 without whitespace, control or invisible formatting characters`,
	},
}

func TestParseRejectsMalformedTables(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "bad", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(badTables) {
		t.Errorf("%d files in testdata/routing/bad but %d expectations: every fixture needs its messages here", len(files), len(badTables))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			want, ok := badTables[name]
			if !ok {
				t.Fatalf("no expected messages for %s", name)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := Parse(name, data)
			if err == nil {
				t.Fatalf("accepted:\n%s", tb.Marshal())
			}
			var got []string
			for _, e := range diag.Errors(err) {
				if _, ok := e.(*diag.Error); !ok {
					t.Errorf("problem %q is a %T, want *diag.Error", e, e)
				}
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	_, err := Load("no/such/routing.json")
	if err == nil || !strings.HasPrefix(err.Error(), "no/such/routing.json: ") {
		t.Fatalf("Load of a missing file = %v, want an error naming the file", err)
	}
}

func TestNewReportsFieldsWithoutLines(t *testing.T) {
	_, err := New(Spec{Version: 1, Buckets: 4, Cells: []CellSpec{
		{ID: "cell-a", State: CellActive, Weight: 1, Buckets: Ranges{{0, 1}}},
	}})
	want := "routing table: cells: buckets 2-3 are not assigned to any cell; every bucket 0-3 needs exactly one cell"
	if err == nil || err.Error() != want {
		t.Fatalf("New = %v, want %q", err, want)
	}
}

func TestMarshalRoundTripsByteForByte(t *testing.T) {
	for _, path := range []string{filepath.Join(goldenDir, "golden_table.json"), "../stacks/routing.json"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := Parse(path, data)
		if err != nil {
			t.Fatal(err)
		}
		if got := tb.Marshal(); !bytes.Equal(got, data) {
			t.Errorf("%s does not round-trip:\n%s", path, got)
		}
	}
}

func TestParseCanonicalizesEquivalentSpellings(t *testing.T) {
	// Unsorted and adjacent ranges, "N-N", missing "buckets" and
	// "overrides", other whitespace: all accepted, written canonically.
	in := `{"cells": {"cell-b": {"buckets": ["1000-1023", "512-999"], "weight": 2, "state": "active"},
		"cell-a": {"state": "active", "weight": 1, "buckets": ["7-7", "0-6", "8-511"]}}, "version": 3}`
	tb, err := Parse("in.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 3,
  "buckets": 1024,
  "cells": {
    "cell-a": {"state": "active", "weight": 1, "buckets": ["0-511"]},
    "cell-b": {"state": "active", "weight": 2, "buckets": ["512-1023"]}
  },
  "overrides": []
}
`
	if got := string(tb.Marshal()); got != want {
		t.Errorf("Marshal:\n%s\nwant:\n%s", got, want)
	}
}

func TestMarshalWrapsLongBucketLists(t *testing.T) {
	s := Spec{Version: 1, Buckets: 64}
	var a, b Ranges
	for i := 0; i < 64; i += 4 {
		a = append(a, Range{i, i + 1})
		b = append(b, Range{i + 2, i + 3})
	}
	s.Cells = []CellSpec{{ID: "cell-a", State: CellActive, Weight: 1, Buckets: a}, {ID: "cell-b", State: CellActive, Weight: 1, Buckets: b}}
	tb, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	out := tb.Marshal()
	if !bytes.Contains(out, []byte("\"cell-a\": {\"state\": \"active\", \"weight\": 1, \"buckets\": [\n      \"0-1\",\n      \"4-5\",\n")) {
		t.Errorf("long bucket list not one range per line:\n%s", out)
	}
	back, err := Parse("wrapped.json", out)
	if err != nil || !back.Equal(tb) || !bytes.Equal(back.Marshal(), out) {
		t.Fatalf("wrapped form does not round-trip: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(goldenDir, "bad", "*.json"))
	seeds = append(seeds, filepath.Join(goldenDir, "golden_table.json"), "../stacks/routing.json")
	for _, p := range seeds {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"version":1,"buckets":3,"cells":{"c":{"state":"active","weight":1,"buckets":["0-2"]}},"overrides":[{"tenant":"\u00e9","cell":"c","state":"active"}]}`))
	f.Add([]byte(`{"version":1,"buckets":2,"cells":{"a":{"state":"active","weight":1,"buckets":["0"]},"b":{"state":"draining","weight":9,"buckets":["1"]}},"overrides":[{"tenant":"x\"y","cell":"a","state":"migrating","target":"b","write_mode":"allow"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := Parse("fuzz.json", data)
		if err != nil {
			for _, e := range diag.Errors(err) {
				if _, ok := e.(*diag.Error); !ok {
					t.Fatalf("problem %q is a %T, want *diag.Error", e, e)
				}
			}
			return
		}
		out := tb.Marshal()
		back, err := Parse("fuzz.json", out)
		if err != nil {
			t.Fatalf("accepted input re-marshals to a table that does not parse: %v\n%s", err, out)
		}
		if !back.Equal(tb) {
			t.Fatalf("re-parsed table differs:\n%s\nvs\n%s", out, back.Marshal())
		}
		if !bytes.Equal(back.Marshal(), out) {
			t.Fatalf("canonical form is not stable")
		}
		// Every tenant routes to a non-drained cell without panicking.
		for _, o := range tb.Overrides() {
			if r := tb.Route(o.Tenant); !r.Valid || r.Cell != o.Cell || r.Override == nil || *r.Override != o {
				t.Fatalf("override %q routes to %+v", o.Tenant, r)
			}
		}
	})
}
