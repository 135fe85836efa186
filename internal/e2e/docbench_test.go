package e2e

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestBenchmarksDocNamesItsBenchmarks holds docs/BENCHMARKS.md to what it
// promises: every figure was produced by something a reader can run. Each
// section with figures (a table row of numbers, or a time in its prose)
// names the benchmark or script that produced them; each benchmark it
// names exists in a package the section names; and a section that shows a
// "before" next to a figure names the commit it was measured at, so the
// before can be measured again.
func TestBenchmarksDocNamesItsBenchmarks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range benchSections(string(data)) {
		checkBenchSection(t, s)
	}
}

// benchSection is a heading of BENCHMARKS.md and its text up to the next
// heading of the same or a higher level (a ### section is also read as
// part of its ## section, whose packages it may rely on).
type benchSection struct {
	title string
	line  int
	text  string
	outer string // the enclosing ## section's text ("" for a ## section)
}

var benchHeading = regexp.MustCompile(`^(#{2,3})\s+(.*)$`)

func benchSections(doc string) []benchSection {
	lines := strings.Split(doc, "\n")
	type head struct {
		level, line int
		title       string
	}
	var heads []head
	inFence := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
		}
		if m := benchHeading.FindStringSubmatch(l); m != nil && !inFence {
			heads = append(heads, head{level: len(m[1]), line: i, title: m[2]})
		}
	}
	end := func(k int) int { // the line after section k's text
		for j := k + 1; j < len(heads); j++ {
			if heads[j].level <= heads[k].level {
				return heads[j].line
			}
		}
		return len(lines)
	}
	var out []benchSection
	for k, h := range heads {
		s := benchSection{title: h.title, line: h.line + 1, text: strings.Join(lines[h.line:end(k)], "\n")}
		if h.level == 3 {
			for j := k - 1; j >= 0; j-- {
				if heads[j].level == 2 {
					s.outer = strings.Join(lines[heads[j].line:end(j)], "\n")
					break
				}
			}
		}
		out = append(out, s)
	}
	return out
}

var (
	benchName = regexp.MustCompile(`\bBenchmark[A-Z][A-Za-z0-9_]*`)
	// A script that measures: node router/edge/bench.js, measure.js.
	benchScript = regexp.MustCompile(`\brouter/edge/[a-z_]+\.js\b`)
	// A package the section names: `internal/plan`, `router`, ./waves/executor.
	benchPkg = regexp.MustCompile("(?:`|\\./)((?:internal|waves|router|cmd|cellmodule|stacks)(?:/[a-z0-9_]+)*)")
	// A figure: a table row with a number in a cell, or a time in prose.
	benchTableRow = regexp.MustCompile(`^\|.*\d.*\|\s*$`)
	benchTime     = regexp.MustCompile(`\d(?:[.,]\d+)?\s?(?:ns|µs|ms|s)\b`)
	// A "before" figure: a table whose header or first column says before.
	benchBeforeRow = regexp.MustCompile(`(?i)^\|\s*(?:[^|]*\|)*?\s*before\b`)
	benchCommit    = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
	// A command that reproduces figures, in backticks (it may wrap).
	benchCommand = regexp.MustCompile("`[^`]*go test [^`]*-bench[^`]*`")
)

func checkBenchSection(t *testing.T, s benchSection) {
	t.Helper()
	where := "docs/BENCHMARKS.md:" + strconv.Itoa(s.line) + " (" + s.title + ")"
	figures := false
	before := false
	for _, l := range strings.Split(s.text, "\n") {
		if benchTableRow.MatchString(l) && !strings.Contains(l, "--") {
			figures = true
		}
		if !strings.HasPrefix(l, "|") && benchTime.MatchString(l) {
			figures = true
		}
		if strings.HasPrefix(l, "|") && benchBeforeRow.MatchString(l) {
			before = true
		}
	}
	names := benchName.FindAllString(s.text, -1)
	if figures && len(names) == 0 && !benchScript.MatchString(s.text) && !benchScript.MatchString(s.outer) {
		t.Errorf("%s shows figures but names no benchmark (BenchmarkX and its package) or script that produced them", where)
	}
	pkgs := map[string]bool{}
	for _, text := range []string{s.text, s.outer} {
		for _, m := range benchPkg.FindAllStringSubmatch(text, -1) {
			pkgs[m[1]] = true
		}
	}
	for _, n := range uniqueStrings(names) {
		found := false
		for p := range pkgs {
			if benchDefined(t, p, n) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s names %s, which no package it names defines (packages named: %v)", where, n, slices.Sorted(maps.Keys(pkgs)))
		}
	}
	for _, cmd := range benchCommand.FindAllString(s.text, -1) {
		checkBenchCommand(t, where, cmd)
	}
	if before && !benchCommit.MatchString(s.text) {
		t.Errorf("%s shows a \"before\" figure but names no commit it was measured at", where)
	}
}

// checkBenchCommand: a `go test … -bench PATTERN ./pkg…` the section
// gives to reproduce its figures runs at least one benchmark in each
// package it names (a wrong package runs nothing and reports nothing).
func checkBenchCommand(t *testing.T, where, cmd string) {
	t.Helper()
	fields := strings.Fields(strings.Trim(cmd, "`"))
	var pattern string
	var dirs []string
	for i, f := range fields {
		switch {
		case f == "-bench" && i+1 < len(fields):
			pattern = strings.Trim(fields[i+1], `'"`)
		case strings.HasPrefix(f, "./"):
			dirs = append(dirs, strings.TrimSuffix(strings.TrimPrefix(f, "./"), "/..."))
		}
	}
	if pattern == "" || len(dirs) == 0 {
		return
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Errorf("%s: %s: -bench %q does not compile: %v", where, cmd, pattern, err)
		return
	}
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(repoRoot, d, "*_test.go"))
		matched := false
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range benchFunc.FindAllStringSubmatch(string(data), -1) {
				if re.MatchString(m[1]) {
					matched = true
				}
			}
		}
		if !matched {
			t.Errorf("%s: %s runs no benchmark in ./%s (-bench %q matches none of its benchmarks)", where, cmd, d, pattern)
		}
	}
}

var benchFunc = regexp.MustCompile(`(?m)^func (Benchmark[A-Za-z0-9_]*)\(`)

// benchDefined reports whether package dir (relative to the repository)
// defines the benchmark in one of its test files.
func benchDefined(t *testing.T, dir, name string) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*_test.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "func "+name+"(") {
			return true
		}
	}
	return false
}

func uniqueStrings(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
