package render

import "testing"

// One escaper for every markdown view: a value stays in its cell, and
// escaping twice (a code span inside a table) changes nothing.
func TestMarkdownEscapeKeepsAValueInItsCell(t *testing.T) {
	for in, want := range map[string]string{
		"a | b":      `a \| b`,
		`a \| b`:     `a \| b`,
		"two\nlines": "two lines",
		"":           "",
	} {
		if got := MarkdownEscape(in); got != want || MarkdownEscape(got) != want {
			t.Errorf("MarkdownEscape(%q) = %q, want %q (and the same again)", in, got, want)
		}
	}
	if got := MarkdownCode("a`b|c"); got != "`a'b\\|c`" {
		t.Errorf("MarkdownCode: %q", got)
	}
}

// The one markdown table: lipgloss's markdown border, a header rule, and
// cells escaped once.
func TestMarkdownTable(t *testing.T) {
	got := MarkdownTable([]string{"stack", "why"}, [][]string{{"cell-a", "x | y"}, {"router", MarkdownCode("p|q")}})
	want := "|stack |why   |\n|------|------|\n|cell-a|x \\| y|\n|router|`p\\|q`|\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
