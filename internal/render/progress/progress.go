// Package progress shows live engine progress on stderr: one status line
// per stack (resources done/total, current operation, elapsed), redrawn in
// place on a terminal, or plain, append-only lines when stderr is piped or
// colour is off — CI logs stay readable.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// Display renders engine events.
type Display struct {
	w      io.Writer
	live   bool
	styles *render.Styles
	now    func() time.Time
	// PlainInterval throttles per-stack progress lines in plain mode.
	PlainInterval time.Duration

	mu     sync.Mutex
	stacks map[string]*stackLine
	order  []string
	frame  *Frame
	ticker *Redrawer
}

type stackLine struct {
	name      string
	op        string
	start     time.Time
	expected  int
	done      int
	current   string
	finished  *stackrun.Result
	lastPrint time.Time
}

// New returns a display writing to w. live selects in-place redrawing (a
// terminal with colour); otherwise lines are appended.
func New(w io.Writer, live bool, styles *render.Styles) *Display {
	return newDisplay(w, live, styles, time.Now, live)
}

// newDisplay is New with a clock; tick starts the redraw loop (tests draw
// frames themselves).
func newDisplay(w io.Writer, live bool, styles *render.Styles, now func() time.Time, tick bool) *Display {
	d := &Display{w: w, live: live, styles: styles, now: now, PlainInterval: 10 * time.Second,
		stacks: map[string]*stackLine{}, frame: NewFrame(w)}
	d.ticker = StartRedrawer(&d.mu, 120*time.Millisecond, d.redraw, tick)
	return d
}

// Close stops redrawing and leaves the final lines on screen.
func (d *Display) Close() {
	d.ticker.Close()
}

// Handle consumes one engine event; safe for concurrent use.
func (d *Display) Handle(ev stackrun.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.stacks[ev.Stack]
	if s == nil {
		s = &stackLine{name: ev.Stack, start: ev.Time}
		d.stacks[ev.Stack] = s
		d.order = append(d.order, ev.Stack)
	}
	switch ev.Kind {
	case stackrun.StackStarted:
		// A plan may run a stack twice (lift protection, then destroy):
		// each run starts its line afresh.
		s.op, s.start, s.expected = ev.Op, ev.Time, ev.Expected
		s.done, s.current, s.finished = 0, "", nil
		if !d.live {
			d.printf("%s: %s started\n", s.name, s.op)
		}
	case stackrun.ResourceStarted:
		s.current = Verb(ev.Op) + " " + ev.Type + " " + ev.Name
	case stackrun.ResourceDone:
		s.done++
		if !d.live && d.now().Sub(s.lastPrint) >= d.PlainInterval {
			s.lastPrint = d.now()
			d.printf("%s: %s, %s\n", s.name, s.count(), s.current)
		}
	case stackrun.ResourceFailed:
		if !d.live {
			d.printf("%s: %s %s %s failed\n", s.name, Verb(ev.Op), ev.Type, ev.Name)
		}
	case stackrun.Diagnostic:
		if !d.live {
			d.printf("%s: error: %s\n", s.name, ev.Message)
		}
	case stackrun.StackFinished:
		s.finished = ev.Result
		if !d.live {
			d.printf("%s\n", d.finalLine(s))
		}
	}
}

func (d *Display) printf(format string, args ...any) { fmt.Fprintf(d.w, format, args...) }

func (s *stackLine) count() string {
	if s.expected > 0 {
		total := s.expected
		if s.done > total {
			total = s.done
		}
		return fmt.Sprintf("%d/%d resources", s.done, total)
	}
	return fmt.Sprintf("%d resources", s.done)
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

func (d *Display) finalLine(s *stackLine) string {
	r := s.finished
	elapsed := r.Duration.Round(100 * time.Millisecond)
	switch r.Result {
	case stackrun.Succeeded:
		c := r.Changes
		return fmt.Sprintf("%s: %s in %s (create %d, update %d, delete %d, replace %d, same %d)",
			s.name, d.styles.Good("succeeded"), elapsed, c.Create, c.Update, c.Delete, c.Replace, c.Same)
	case stackrun.Skipped:
		return fmt.Sprintf("%s: %s (%s)", s.name, d.styles.Warn("skipped"), r.Error())
	}
	return fmt.Sprintf("%s: %s after %s: %s", s.name, d.styles.Bad("failed"), elapsed, r.Error())
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// redraw draws the status lines as the live frame.
func (d *Display) redraw() {
	frame := spinner[int(d.now().UnixMilli()/120)%len(spinner)]
	lines := make([]string, 0, len(d.order))
	for _, n := range d.order {
		s := d.stacks[n]
		if s.finished != nil {
			lines = append(lines, d.finalLine(s))
			continue
		}
		lines = append(lines, fmt.Sprintf("%-10s %s %s  %s  %s", s.name, d.styles.Dim(frame), s.count(),
			d.now().Sub(s.start).Round(100*time.Millisecond), s.current))
	}
	d.frame.Draw(lines)
}
