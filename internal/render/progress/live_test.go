package progress

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/iostreams"
)

// A line any step writes while the frame is up (the router canary's, the
// apply path's, an interrupt notice) is printed above the frame, which is
// then drawn again below it; an unfinished line waits for its end.
func TestLiveWritesLinesAboveTheFrame(t *testing.T) {
	var b bytes.Buffer
	l := NewLive(&b, true, time.Hour, func() []string { return []string{"cell-a 1/3"} }, false)
	l.Lock()
	l.Redraw()
	l.Unlock()
	b.Reset()
	fmt.Fprint(l.Writer(), "router canary: step 1")
	if b.Len() != 0 {
		t.Fatalf("an unfinished line was written: %q", b.String())
	}
	fmt.Fprint(l.Writer(), " of 3\n")
	if got, want := b.String(), "\x1b[1A\x1b[Jrouter canary: step 1 of 3\n\x1b[2Kcell-a 1/3\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	l.Close()
}

// Piped, the surface draws no frame and writes the lines as written.
func TestPlainLiveAppendsLines(t *testing.T) {
	var b bytes.Buffer
	l := NewLive(&b, false, time.Hour, func() []string { t.Error("a plain surface drew a frame"); return nil }, false)
	fmt.Fprintln(l.Writer(), "note: one")
	l.Lock()
	l.Redraw()
	l.Line("note: two")
	l.Unlock()
	fmt.Fprint(l.Writer(), "Go ahead? ")
	l.Close()
	if got, want := b.String(), "note: one\nnote: two\nGo ahead? "; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// While a run's surface is up, the streams' ErrLines writes through it;
// after Close, straight to stderr again.
func TestStartRoutesErrLinesUntilClose(t *testing.T) {
	io, _, _, errOut := iostreams.Test()
	io.SetTTY(false, true, false) // stderr a terminal: a live frame
	lines := io.ErrLines()
	d := New(io)
	fmt.Fprint(lines, "interrupt: finishing")
	if errOut.Len() != 0 {
		t.Fatalf("a line went past the surface: %q", errOut.String())
	}
	d.Close()
	fmt.Fprintln(lines, "after")
	if got, want := errOut.String(), "interrupt: finishing\nafter\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
