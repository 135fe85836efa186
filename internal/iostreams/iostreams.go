// Package iostreams is cellctl's one view of its standard streams: whether
// each is a terminal, whether colour is wanted, and the writers commands
// print to. Commands receive it injected, so tests pass buffers.
package iostreams

import (
	"bytes"
	"io"
	"os"

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
