// Command testtimes keeps the time every test takes.
//
// In a pipe after `go test -json`, it prints the test output exactly as
// plain `go test` would (so a CI log reads the same, closing lines
// included) and, at the end of the stream, writes one line per test and
// per package to a TSV file:
//
//	go test -json ./... | testtimes -o times.tsv
//
// With -top it reads such files and prints the slowest tests with their
// share of their package's wall time, and each package's wall time:
//
//	testtimes -top 15 unit.tsv e2e.tsv
//
// It needs nothing but the standard library, so `make` builds it in
// seconds on a cold machine.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// timing is one finished test (Test set) or package (Test empty).
type timing struct {
	Package, Test, Result string
	Seconds               float64
}

func main() {
	out := flag.String("o", "", "stream mode: write each test's and package's time to this TSV file")
	top := flag.Int("top", 0, "report mode: print the N slowest tests of the TSV files given as arguments")
	flag.Parse()
	var err error
	switch {
	case *out != "" && *top == 0:
		err = stream(os.Stdin, os.Stdout, *out)
	case *top > 0 && *out == "" && flag.NArg() > 0:
		err = report(os.Stdout, *top, flag.Args())
	default:
		err = fmt.Errorf("usage: go test -json ... | testtimes -o FILE, or testtimes -top N FILE...")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(1)
	}
}

// stream prints a `go test -json` stream as plain (non-verbose) `go test`
// prints it — a passing test's logs are dropped, a failing test's are
// printed with its subtests', every package's result line is kept — and
// writes the times of what finished in it to path. A line that is not a
// test event (a build error go printed before the stream) is echoed as it
// is.
func stream(in io.Reader, w io.Writer, path string) error {
	var times []timing
	held := map[string]*strings.Builder{} // package + "\x00" + test: its output so far
	dropping := map[string]bool{}         // package: in the middle of a line -v adds
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	bw := bufio.NewWriter(w)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			bw.Write(line)
			bw.WriteByte('\n')
			bw.Flush()
			continue
		}
		key := ev.Package + "\x00" + ev.Test
		switch ev.Action {
		case "build-output":
			bw.WriteString(ev.Output)
		case "output":
			if ev.Test == "" {
				// The package's own lines: its result ("ok", "FAIL",
				// coverage), a panic outside any test. The lone "PASS"
				// and "coverage:" lines are what -v adds (the result
				// line carries the coverage).
				// test2json cuts a long line into several events:
				// the rest of a dropped line is dropped too.
				drop := dropping[ev.Package] || ev.Output == "PASS\n" || strings.HasPrefix(ev.Output, "coverage: ")
				dropping[ev.Package] = drop && !strings.HasSuffix(ev.Output, "\n")
				if !drop {
					bw.WriteString(ev.Output)
				}
				continue
			}
			if verbose(ev.Output) {
				continue
			}
			b := held[key]
			if b == nil {
				b = &strings.Builder{}
				held[key] = b
			}
			b.WriteString(ev.Output)
		case "pass", "skip":
			times = append(times, timing{Package: ev.Package, Test: ev.Test, Result: ev.Action, Seconds: ev.Elapsed})
			delete(held, key)
		case "fail":
			times = append(times, timing{Package: ev.Package, Test: ev.Test, Result: ev.Action, Seconds: ev.Elapsed})
			if ev.Test == "" {
				// A binary that died (a panic, the -timeout) leaves
				// tests that never finished: their output explains it.
				for k, b := range held {
					if strings.HasPrefix(k, ev.Package+"\x00") {
						bw.WriteString(b.String())
						delete(held, k)
					}
				}
				break
			}
			// A failed subtest's lines go with its parent's, in the
			// order go test prints them; a top-level test prints.
			out := held[key]
			delete(held, key)
			if out == nil {
				continue
			}
			if i := strings.LastIndex(ev.Test, "/"); i >= 0 {
				parent := ev.Package + "\x00" + ev.Test[:i]
				if held[parent] == nil {
					held[parent] = &strings.Builder{}
				}
				held[parent].WriteString(out.String())
				continue
			}
			bw.WriteString(out.String())
		}
		if ev.Test == "" {
			bw.Flush() // each package's result as it finishes
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return writeTimes(path, times)
}

// verbose is a line only -v prints: a test's start, pause and resume.
func verbose(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

func writeTimes(path string, times []timing) error {
	var b strings.Builder
	for _, t := range times {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%.2f\n", t.Package, t.Test, t.Result, t.Seconds)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func readTimes(path string) ([]timing, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []timing
	for n, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 tab-separated fields, got %d", path, n+1, len(f))
		}
		s, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: seconds: %v", path, n+1, err)
		}
		out = append(out, timing{Package: f[0], Test: f[1], Result: f[2], Seconds: s})
	}
	return out, nil
}

// report prints the n slowest top-level tests (a subtest's time is part of
// its parent's) with their share of their package's wall time, then the
// packages from the slowest.
func report(w io.Writer, n int, paths []string) error {
	var all []timing
	for _, p := range paths {
		t, err := readTimes(p)
		if err != nil {
			return err
		}
		all = append(all, t...)
	}
	pkgWall := map[string]float64{}
	var tests, pkgs []timing
	for _, t := range all {
		switch {
		case t.Test == "":
			pkgWall[t.Package] = t.Seconds
			pkgs = append(pkgs, t)
		case !strings.Contains(t.Test, "/"):
			tests = append(tests, t)
		}
	}
	sort.SliceStable(tests, func(i, j int) bool { return tests[i].Seconds > tests[j].Seconds })
	sort.SliceStable(pkgs, func(i, j int) bool { return pkgs[i].Seconds > pkgs[j].Seconds })
	if len(tests) > n {
		tests = tests[:n]
	}
	fmt.Fprintf(w, "the %d slowest tests (share: of their package's wall time)\n", len(tests))
	fmt.Fprintf(w, "%8s  %6s  %s\n", "SECONDS", "SHARE", "TEST")
	for _, t := range tests {
		share := "-"
		if wall := pkgWall[t.Package]; wall > 0 {
			share = fmt.Sprintf("%.1f%%", 100*t.Seconds/wall)
		}
		fmt.Fprintf(w, "%8.1f  %6s  %s.%s\n", t.Seconds, share, short(t.Package), t.Test)
	}
	var sum float64
	for _, p := range pkgs {
		sum += p.Seconds
	}
	fmt.Fprintf(w, "packages: %d, %.0f s of package wall time in all; the slowest:\n", len(pkgs), sum)
	fmt.Fprintf(w, "%8s  %6s  %s\n", "SECONDS", "RESULT", "PACKAGE")
	for i, p := range pkgs {
		if i == n {
			break
		}
		fmt.Fprintf(w, "%8.1f  %6s  %s\n", p.Seconds, p.Result, short(p.Package))
	}
	return nil
}

// short drops the module path, which every package shares.
func short(pkg string) string {
	const module = "github.com/cellctl/cellctl/"
	if s := strings.TrimPrefix(pkg, module); s != pkg {
		return s
	}
	if pkg == strings.TrimSuffix(module, "/") {
		return "."
	}
	return pkg
}
