package diag

import (
	"strings"
	"testing"
)

func TestEcho(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"cell-a", `"cell-a"`},
		{"a\xffb", `"a\xffb"`}, // the byte, not U+FFFD
		{strings.Repeat("x", 131072), `"` + strings.Repeat("x", 64) + `"… (131072 bytes in all)`},
		// Cut at a character boundary: 63 x then a 2-byte é straddling 64.
		{strings.Repeat("x", 63) + strings.Repeat("é", 10), `"` + strings.Repeat("x", 63) + `"… (83 bytes in all)`},
	} {
		if got := Echo(c.in); got != c.want {
			t.Errorf("Echo(%.20q…) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestListCapsPerFile(t *testing.T) {
	var l List
	for i := 0; i < 1000; i++ {
		l.Add("a.yaml", i+1, "k", "bad %d", i)
	}
	l.Add("b.yaml", 1, "", "one problem")
	if l.Len() != 1001 {
		t.Fatalf("Len = %d, want every problem counted", l.Len())
	}
	errs := Errors(l.Err())
	if len(errs) != MaxPerFile+2 {
		t.Fatalf("%d errors kept", len(errs))
	}
	if got := errs[MaxPerFile].Error(); got != "a.yaml: and 950 more problems in this file (only the first 50 are shown): fix these and run again" {
		t.Fatalf("summary = %q", got)
	}
	if got := errs[MaxPerFile+1].Error(); got != "b.yaml:1: one problem" {
		t.Fatalf("other file = %q", got)
	}
	if !strings.HasPrefix(l.Err().Error(), "1001 problems (51 shown):\n") {
		t.Fatalf("header: %.40q", l.Err().Error())
	}
	// Merging a capped list into another keeps the count.
	var m List
	m.Merge("a.yaml", l.Err())
	if m.Len() != 1001 || Omitted(m.Err()) != 950 {
		t.Fatalf("merged Len %d, omitted %d", m.Len(), Omitted(m.Err()))
	}
}
