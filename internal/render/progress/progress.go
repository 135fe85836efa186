// Package progress shows live engine progress on stderr: one status line
// per stack (resources done/total, current operation, elapsed), redrawn in
// place on a terminal, or plain, append-only lines when stderr is piped or
// colour is off — CI logs stay readable.
package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// Display is a run's progress: one line per stack from the engine's
// events (the Stacks fold), drawn on the run's Live surface.
type Display struct {
	styles *render.Styles
	now    func() time.Time
	// PlainInterval throttles per-stack progress lines in plain mode.
	PlainInterval time.Duration

	stacks Stacks
	live   *Live
}

// New returns the run progress on io's stderr: redrawn in place on a
// terminal with colour, else appended lines. Until Close, io.ErrLines
// writes above it.
func New(io *iostreams.IOStreams) *Display {
	d := &Display{styles: render.Err(io), now: time.Now, PlainInterval: 10 * time.Second}
	d.live = Start(io, 120*time.Millisecond, d.frameLines)
	return d
}

// newDisplay is New on a writer, with a clock; tick starts the redraw
// loop (tests draw frames themselves).
func newDisplay(w io.Writer, live bool, styles *render.Styles, now func() time.Time, tick bool) *Display {
	d := &Display{styles: styles, now: now, PlainInterval: 10 * time.Second}
	d.live = NewLive(w, live, 120*time.Millisecond, d.frameLines, tick)
	return d
}

// Close stops redrawing and leaves the final lines on screen.
func (d *Display) Close() { d.live.Close() }

// Handle consumes one engine event; safe for concurrent use.
func (d *Display) Handle(ev stackrun.Event) {
	d.live.Lock()
	defer d.live.Unlock()
	s := d.stacks.Fold(ev)
	l := d.live
	switch ev.Kind {
	case stackrun.StackStarted:
		l.Printf("%s: %s started\n", s.Name, s.Op)
	case stackrun.ResourceDone:
		if !l.IsLive() && s.Due(d.now(), d.PlainInterval) {
			l.Printf("%s: %s, %s\n", s.Name, s.Count(), s.Current)
		}
	case stackrun.ResourceFailed:
		l.Printf("%s: %s %s %s failed\n", s.Name, Verb(ev.Op), ev.Type, ev.Name)
	case stackrun.Diagnostic:
		l.Printf("%s: error: %s\n", s.Name, ev.Message)
	case stackrun.StackFinished:
		l.Printf("%s\n", d.finalLine(s))
	}
}

// Verb is what the engine is doing to a resource, in the words both live
// displays show ("creating", "replacing", "deleting replaced").
func Verb(op string) string {
	switch op {
	case "create":
		return "creating"
	case "update":
		return "updating"
	case "delete":
		return "deleting"
	case "replace", "create-replacement":
		return "replacing"
	case "delete-replaced":
		return "deleting replaced"
	case "same":
		return "checking"
	case "refresh", "read":
		return "reading"
	}
	return op
}

func (d *Display) finalLine(s *Stack) string {
	r := s.Finished
	elapsed := r.Duration.Round(100 * time.Millisecond)
	switch r.Result {
	case stackrun.Succeeded:
		c := r.Changes
		return fmt.Sprintf("%s: %s in %s (create %d, update %d, delete %d, replace %d, same %d)",
			s.Name, d.styles.Good("succeeded"), elapsed, c.Create, c.Update, c.Delete, c.Replace, c.Same)
	case stackrun.Skipped:
		return fmt.Sprintf("%s: %s (%s)", s.Name, d.styles.Warn("skipped"), r.Error())
	}
	return fmt.Sprintf("%s: %s after %s: %s", s.Name, d.styles.Bad("failed"), elapsed, r.Error())
}

// frameLines is the live frame: a status line per stack.
func (d *Display) frameLines() []string {
	spin := Spinner(d.now(), 120*time.Millisecond)
	lines := make([]string, 0, len(d.stacks.Order()))
	for _, n := range d.stacks.Order() {
		s := d.stacks.Get(n)
		if s.Finished != nil {
			lines = append(lines, d.finalLine(s))
			continue
		}
		lines = append(lines, fmt.Sprintf("%-10s %s %s  %s  %s", s.Name, d.styles.Dim(spin), s.Count(),
			d.now().Sub(s.Start).Round(100*time.Millisecond), s.Current))
	}
	return lines
}

// redraw draws the live frame now (tests; the caller holds no lock).
func (d *Display) redraw() {
	d.live.Lock()
	defer d.live.Unlock()
	d.live.Redraw()
}
