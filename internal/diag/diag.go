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
	"strings"

	"github.com/hashicorp/go-multierror"
)

// Error is one problem at one place in one file.
type Error struct {
	File  string // path as the user would type it (relative to the fleet dir)
	Line  int    // 1-based; 0 when the position is unknown
	Field string // dotted path of the offending field, e.g. "waves[1].cells[0]"
	Msg   string // what is wrong and what is allowed
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// List collects the problems found in one or more files.
type List struct {
	errs []*Error
}

// Add records a problem.
func (l *List) Add(file string, line int, field, format string, args ...any) {
	l.errs = append(l.errs, &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// AddErr records an already-built problem (nil is ignored).
func (l *List) AddErr(e *Error) {
	if e != nil {
		l.errs = append(l.errs, e)
	}
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
		l.errs = append(l.errs, e)
		return
	}
	l.errs = append(l.errs, &Error{File: file, Msg: err.Error()})
}

// Len is the number of problems recorded.
func (l *List) Len() int { return len(l.errs) }

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
	for _, e := range errs {
		m.Errors = append(m.Errors, e)
	}
	return m
}

// Format renders a list of problems one per line, the shape compilers use,
// so editors and CI annotations can jump to the line.
func Format(errs []error) string {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = e.Error()
	}
	if len(lines) == 1 {
		return lines[0]
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
