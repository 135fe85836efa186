package progress

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cellctl/cellctl/internal/iostreams"
)

// Live is the one live surface of a run on stderr, which both live
// displays (the run progress, Display, and the rollout's,
// internal/render/deployview) draw on. On a terminal with colour it keeps
// a frame (the display's lines, from its lines func) redrawn in place
// every interval; a line written while the frame is up (Line, Writer) is
// printed above the frame, and the frame drawn again below it. Piped, or
// with colour off, it draws no frame and appends the lines.
//
// The display's model is guarded by the Live's lock (Lock, Unlock): the
// redraw runs under it.
type Live struct {
	w     io.Writer
	live  bool
	lines func() []string

	mu      sync.Mutex
	frame   *Frame
	ticker  *Redrawer
	partial []byte // the unfinished line written through Writer
	restore func()
}

// Start returns the live surface of a run on io's stderr: live when
// stderr is a terminal with colour. Until Close, io.ErrLines writes
// through it, so every line the run writes there (the apply path's, a
// lifecycle verb's, the router canary's, an interrupt notice) goes
// above the frame.
func Start(io *iostreams.IOStreams, interval time.Duration, lines func() []string) *Live {
	l := NewLive(io.ErrOut, io.IsStderrTTY() && io.ColorErr(), interval, lines, true)
	l.restore = io.SetErrLines(l.Writer())
	return l
}

// NewLive is Start on a writer; tick false starts no redraw loop (tests
// draw their frames with Redraw).
func NewLive(w io.Writer, live bool, interval time.Duration, lines func() []string, tick bool) *Live {
	l := &Live{w: w, live: live, lines: lines, frame: NewFrame(w)}
	l.ticker = StartRedrawer(&l.mu, interval, l.redraw, tick && live)
	return l
}

// IsLive reports whether the surface redraws a frame in place.
func (l *Live) IsLive() bool { return l.live }

// Lock and Unlock guard the display's model against the redraw.
func (l *Live) Lock()   { l.mu.Lock() }
func (l *Live) Unlock() { l.mu.Unlock() }

// Line writes one line (the caller holds the lock): above the frame when
// live, appended when plain.
func (l *Live) Line(s string) {
	if !l.live {
		fmt.Fprintln(l.w, s)
		return
	}
	l.frame.Above(s)
	l.redraw()
}

// Printf appends a formatted line in plain mode (the caller holds the
// lock); a live frame shows its state instead.
func (l *Live) Printf(format string, args ...any) {
	if !l.live {
		fmt.Fprintf(l.w, format, args...)
	}
}

// Writer returns a writer whose every complete line goes through Line,
// under the lock (an unfinished line waits for its end, or Close); when
// plain, the bytes go out as written.
func (l *Live) Writer() io.Writer { return liveWriter{l} }

type liveWriter struct{ l *Live }

func (lw liveWriter) Write(p []byte) (int, error) {
	l := lw.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.live {
		// No frame to keep whole: the bytes go out as written.
		return l.w.Write(p)
	}
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.Line(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

// Redraw draws the frame now (the caller holds the lock; the loop draws
// the others).
func (l *Live) Redraw() { l.redraw() }

func (l *Live) redraw() {
	if l.live {
		l.frame.Draw(l.lines())
	}
}

// Close stops redrawing, leaves the last frame on screen, writes an
// unfinished line, and gives stderr's lines back to stderr.
func (l *Live) Close() {
	l.ticker.Close()
	l.mu.Lock()
	if len(l.partial) > 0 {
		l.Line(string(l.partial))
		l.partial = nil
	}
	l.mu.Unlock()
	if l.restore != nil {
		l.restore()
		l.restore = nil
	}
}

// spinner is the frames of the live displays' spinner.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Spinner is the spinner's frame at now, turning once an interval.
func Spinner(now time.Time, interval time.Duration) string {
	return spinner[int(now.UnixMilli()/interval.Milliseconds())%len(spinner)]
}
