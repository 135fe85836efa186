// Package diag reports problems in the fleet's configuration files the way
// an operator needs them: the file, the line, the field, and what is allowed.
//
// Every loader in cellctl (fleet, waves, routing table) collects all the
// problems of a file before failing, so a reviewer fixes a file in one pass
// instead of one error per run.
package diag

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/go-multierror"
)

// Error is one problem at one place in one file.
type Error struct {
	File  string // path as the user would type it (relative to the fleet dir)
	Line  int    // 1-based; 0 when the position is unknown
	Field string // dotted path of the offending field, e.g. "waves[1].cells[0]"
	Msg   string // what is wrong and what is allowed

	// omitted > 0 marks the "and N more" line that stands for the
	// problems of File past MaxPerFile.
	omitted int
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		// Fields hold the file's own keys; a 1 MB key must not become a
		// 1 MB line.
		f := e.Field
		if len(f) > maxField {
			f = Echo(f)
		}
		b.WriteString(f)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// MaxPerFile is how many problems of one file are kept and shown; the rest
// are counted and summarised ("and N more"). A file of a million unknown
// keys must cost a screenful of errors, not gigabytes of memory and stderr.
const MaxPerFile = 50

const maxField = 160

// List collects the problems found in one or more files.
type List struct {
	errs    []*Error
	perFile map[string]int // problems seen per file, kept or not
	dropped int
}

// Add records a problem.
func (l *List) Add(file string, line int, field, format string, args ...any) {
	if l.full(file) {
		return // not even formatted: past the cap, only the count matters
	}
	l.errs = append(l.errs, &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// AddErr records an already-built problem (nil is ignored).
func (l *List) AddErr(e *Error) {
	if e != nil && !l.full(e.File) {
		l.errs = append(l.errs, e)
	}
}

// full counts a problem of file and reports whether the file is already
// at its cap (the problem is then only counted).
func (l *List) full(file string) bool {
	if l.perFile == nil {
		l.perFile = map[string]int{}
	}
	l.perFile[file]++
	if l.perFile[file] > MaxPerFile {
		l.dropped++
		return true
	}
	return false
}

// Merge appends every problem of err when it came from a diag loader, or
// err itself, attributed to file, when it did not.
func (l *List) Merge(file string, err error) {
	if err == nil {
		return
	}
	if m, ok := err.(*multierror.Error); ok {
		for _, e := range m.Errors {
			l.Merge(file, e)
		}
		return
	}
	if e, ok := err.(*Error); ok {
		if e.omitted > 0 {
			// Another list's "and N more": count them here as well.
			if l.perFile == nil {
				l.perFile = map[string]int{}
			}
			l.perFile[e.File] += e.omitted
			l.dropped += e.omitted
			return
		}
		l.AddErr(e)
		return
	}
	l.AddErr(&Error{File: file, Msg: err.Error()})
}

// Len is the number of problems recorded, including those past the cap.
func (l *List) Len() int { return len(l.errs) + l.dropped }

// Err returns nil when nothing was recorded, otherwise every problem sorted
// by file and line as one go-multierror error.
func (l *List) Err() error {
	if len(l.errs) == 0 {
		return nil
	}
	errs := append([]*Error(nil), l.errs...)
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].File != errs[j].File {
			return errs[i].File < errs[j].File
		}
		return errs[i].Line < errs[j].Line
	})
	m := &multierror.Error{ErrorFormat: Format}
	for i, e := range errs {
		m.Errors = append(m.Errors, e)
		if last := i+1 == len(errs) || errs[i+1].File != e.File; last && l.perFile[e.File] > MaxPerFile {
			n := l.perFile[e.File] - MaxPerFile
			m.Errors = append(m.Errors, &Error{File: e.File, omitted: n,
				Msg: fmt.Sprintf("and %d more problems in this file (only the first %d are shown): fix these and run again", n, MaxPerFile)})
		}
	}
	return m
}

// Omitted is how many problems err stands for beyond those it lists (the
// "and N more" of each capped file).
func Omitted(err error) int {
	n := 0
	for _, e := range Errors(err) {
		if de, ok := e.(*Error); ok {
			n += de.omitted
		}
	}
	return n
}

// MaxEcho is how many bytes of a user's value an error message repeats.
const MaxEcho = 64

// Echo quotes a value for an error message: Go-quoted (an invalid byte
// shows as \xff, a control character as an escape, never as U+FFFD) and cut
// after MaxEcho bytes, at a character boundary, with the full length said.
// A 1 MB value in a file must not become a 1 MB error line.
func Echo(s string) string { return echo(s, strconv.Quote) }

// EchoASCII is Echo with every non-ASCII character escaped (\u00e9), for
// messages about values that differ only in how their text is encoded.
func EchoASCII(s string) string { return echo(s, strconv.QuoteToASCII) }

func echo(s string, quote func(string) string) string {
	if len(s) <= MaxEcho {
		return quote(s)
	}
	cut := MaxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return quote(s[:cut]) + fmt.Sprintf("… (%d bytes in all)", len(s))
}

// Format renders a list of problems one per line, the shape compilers use,
// so editors and CI annotations can jump to the line.
func Format(errs []error) string {
	lines := make([]string, len(errs))
	total, omitted := 0, 0
	for i, e := range errs {
		lines[i] = e.Error()
		if de, ok := e.(*Error); ok && de.omitted > 0 {
			omitted += de.omitted
			total += de.omitted
			continue
		}
		total++
	}
	if len(lines) == 1 {
		return lines[0]
	}
	if omitted > 0 {
		return fmt.Sprintf("%d problems (%d shown):\n  %s", total, total-omitted, strings.Join(lines, "\n  "))
	}
	return fmt.Sprintf("%d problems:\n  %s", len(lines), strings.Join(lines, "\n  "))
}

// Errors flattens err into its individual problems (for tests and JSON output).
func Errors(err error) []error {
	if err == nil {
		return nil
	}
	if m, ok := err.(*multierror.Error); ok {
		return m.Errors
	}
	return []error{err}
}

// Quote lists allowed values for a message: "a", "b" or "c".
func Quote(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	default:
		return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
	}
}
