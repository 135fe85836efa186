// Package iostreams is cellctl's one view of its standard streams: whether
// each is a terminal, whether colour is wanted, and the writers commands
// print to. Commands receive it injected, so tests pass buffers.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/mattn/go-isatty"
)

// IOStreams bundles the process's streams and what they are connected to.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdoutTTY bool
	stderrTTY bool
	stdinTTY  bool
	noColor   bool

	linesMu sync.Mutex
	lines   io.Writer // where ErrLines writes while a live frame is up
}

// System returns the process's real streams.
func System() *IOStreams {
	return &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
		stdinTTY:  isTerminal(os.Stdin),
		noColor:   os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb",
	}
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Test returns streams backed by buffers: (streams, stdin, stdout, stderr).
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// SetTTY marks the streams as terminals (tests).
func (s *IOStreams) SetTTY(stdout, stderr, stdin bool) {
	s.stdoutTTY, s.stderrTTY, s.stdinTTY = stdout, stderr, stdin
}

// DisableColor turns styling off (--no-color).
func (s *IOStreams) DisableColor() { s.noColor = true }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// CanPrompt reports whether cellctl may ask the user a question.
func (s *IOStreams) CanPrompt() bool { return s.stdinTTY && s.stderrTTY }

// ColorOut reports whether stdout output may be styled.
func (s *IOStreams) ColorOut() bool { return s.stdoutTTY && !s.noColor }

// ColorErr reports whether stderr output (progress) may be styled.
func (s *IOStreams) ColorErr() bool { return s.stderrTTY && !s.noColor }

// ErrLines is where a line of text meant for stderr goes (a log line, a
// note, an interrupt notice): above a live display's frame while one is
// up (SetErrLines), so it is neither overdrawn nor drawn through, else
// straight to ErrOut. The writer is stable: one taken before a frame
// comes up writes above it once it does.
func (s *IOStreams) ErrLines() io.Writer { return errLines{s} }

// SetErrLines routes ErrLines to w (a live display's writer) until
// restore is called.
func (s *IOStreams) SetErrLines(w io.Writer) (restore func()) {
	s.linesMu.Lock()
	prev := s.lines
	s.lines = w
	s.linesMu.Unlock()
	return func() {
		s.linesMu.Lock()
		s.lines = prev
		s.linesMu.Unlock()
	}
}

type errLines struct{ s *IOStreams }

func (e errLines) Write(p []byte) (int, error) {
	e.s.linesMu.Lock()
	w := e.s.lines
	e.s.linesMu.Unlock()
	if w == nil {
		w = e.s.ErrOut
	}
	return w.Write(p)
}
