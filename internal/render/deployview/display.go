// Package deployview draws `cellctl deploy`: the rollout's live progress
// (Display), its dry run (Describe, Markdown) and its final table.
package deployview

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/progress"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// Display is a rollout's live progress on stderr: per wave and per cell,
// updating (resources done/total, from the engine's events), baking (time
// left, last readings), passed, breached, rolling back, rolled back.
//
// On a terminal with colour it keeps one block of lines — a line per wave
// that has started and one per cell under it — and redraws it in place;
// sentences (the rollout starting, a note, the halt) are printed above the
// block. Piped, or with NO_COLOR / --no-color, it appends one plain line
// per step instead, so CI logs stay readable and grep-able: "WAVE  step"
// and "WAVE CELL  step", with engine progress at most every PlainInterval
// per cell.
type Display struct {
	styles *render.Styles
	now    func() time.Time
	// PlainInterval throttles a cell's resource-count lines in plain mode.
	PlainInterval time.Duration

	live   *progress.Live
	waves  []*waveLine
	cells  map[string]*cellLine // by cell id (= its stack name)
	stacks progress.Stacks      // the engine's runs of the cells' stacks
}

type waveLine struct {
	name  string
	state string
	// left is the bake time remaining at leftAt (the last Baking event).
	left     time.Duration
	leftAt   time.Time
	readings string
	detail   string
	cells    []*cellLine
}

type cellLine struct {
	wave   *waveLine
	name   string
	state  string
	detail string
}

// frameInterval is the rollout display's redraw and spinner interval.
const frameInterval = 200 * time.Millisecond

// NewDisplay returns the rollout's display on io's stderr, drawn on the
// run's live surface (progress.Start): redrawn in place on a terminal
// with colour, else plain lines. Until Close, io.ErrLines writes above it.
func NewDisplay(io *iostreams.IOStreams) *Display {
	d := &Display{styles: render.Err(io), now: time.Now, PlainInterval: 10 * time.Second, cells: map[string]*cellLine{}}
	d.live = progress.Start(io, frameInterval, d.frameLines)
	return d
}

func newDisplay(w io.Writer, live bool, styles *render.Styles, now func() time.Time, tick bool) *Display {
	d := &Display{styles: styles, now: now, PlainInterval: 10 * time.Second, cells: map[string]*cellLine{}}
	d.live = progress.NewLive(w, live, frameInterval, d.frameLines, tick)
	return d
}

// Close stops redrawing and leaves the last frame on screen.
func (d *Display) Close() { d.live.Close() }

func (d *Display) wave(name string) *waveLine {
	for _, w := range d.waves {
		if w.name == name {
			return w
		}
	}
	w := &waveLine{name: name, state: "pending"}
	d.waves = append(d.waves, w)
	return w
}

func (d *Display) cell(w *waveLine, name string) *cellLine {
	if c := d.cells[name]; c != nil {
		return c
	}
	c := &cellLine{wave: w, name: name, state: "pending"}
	w.cells = append(w.cells, c)
	d.cells[name] = c
	return c
}

// Event implements executor.Progress.
func (d *Display) Event(e executor.Event) {
	d.live.Lock()
	defer d.live.Unlock()
	var w *waveLine
	if e.Wave != "" {
		w = d.wave(e.Wave)
	}
	var c *cellLine
	if w != nil && e.Cell != "" {
		c = d.cell(w, e.Cell)
	}
	d.apply(e, w, c)
	if !d.live.IsLive() {
		d.plain(e)
		return
	}
	if sentence(e) {
		d.live.Line(d.sentenceText(e))
	}
}

// apply updates the model the live block draws.
func (d *Display) apply(e executor.Event, w *waveLine, c *cellLine) {
	switch e.Kind {
	case executor.WaveStarted:
		w.state = "updating"
	case executor.WaveSkipped:
		w.state = "skipped"
		w.detail = e.Message
	case executor.CellMigrating:
		c.state, c.detail = "migrating", ""
	case executor.CellMigrated:
		c.state = "migrated"
	case executor.CellUpdating:
		c.state, c.detail = "updating", ""
		d.stacks.Reset(c.name)
	case executor.CellUpdated:
		c.state = "updated"
		d.stacks.Stop(c.name)
	case executor.CellUnchanged:
		c.state = "unchanged"
	case executor.CellFailed:
		c.state = "failed"
		d.stacks.Stop(c.name)
		if e.Err != nil {
			c.detail = e.Err.Error()
		} else if e.Message != "" {
			c.detail = e.Message
		}
	case executor.Baking:
		w.state, w.left, w.leftAt = "baking", e.Left, e.At
		if w.leftAt.IsZero() {
			w.leftAt = d.now()
		}
		if r := readings(e.Verdicts); r != "" {
			w.readings = r
		}
	case executor.WavePassed:
		w.state = "passed"
	case executor.WaveBreached:
		w.state = "breached"
		if e.Breach != nil {
			w.detail = e.Breach.String()
			if bc := d.cells[e.Breach.Cell]; bc != nil {
				bc.state = "breached"
			}
		} else if e.Message != "" {
			w.detail = e.Message
		}
	case executor.RollingBack:
		w.state = "rolling back"
		for _, wc := range w.cells {
			if wc.state != "unchanged" && wc.state != "pending" {
				wc.state = "rolling back"
				d.stacks.Reset(wc.name)
			}
		}
	case executor.CellRolledBack:
		c.state = "rolled back"
		d.stacks.Stop(c.name)
		if e.Err != nil {
			c.state, c.detail = "rollback failed", e.Err.Error()
		}
	case executor.RolledBack:
		w.state = "rolled back"
	case executor.WaveWaitingApproval:
		w.state = "waiting for approval"
	case executor.RouterUpdating:
		r := d.wave("router")
		r.state = "updating"
		d.cell(r, "router").state = "updating"
	case executor.RouterUpdated:
		r := d.wave("router")
		r.state = "updated"
		if rc := d.cells["router"]; rc != nil {
			rc.state = "updated"
			d.stacks.Stop(rc.name)
		}
	}
}

// sentence reports whether an event is told as a sentence above the live
// block rather than as a state in it.
func sentence(e executor.Event) bool {
	switch e.Kind {
	case executor.RolloutStarted, executor.RolloutResumed, executor.RolloutPaused, executor.RolloutComplete, executor.Note,
		executor.RolloutAborted, executor.WaveWaitingApproval:
		return true
	case executor.CellFailed, executor.WaveBreached, executor.CellMigrating, executor.CellMigrated:
		return true
	}
	return false
}

func (d *Display) sentenceText(e executor.Event) string {
	s := d.styles
	var text string
	switch e.Kind {
	case executor.RolloutComplete:
		text = s.Good(e.Message)
	case executor.WaveBreached:
		text = s.Bad("wave " + e.Wave + " breached")
		if e.Breach != nil {
			text += ": " + e.Breach.String()
		} else if e.Message != "" {
			text += ": " + e.Message
		}
		return text
	case executor.CellFailed:
		text = s.Warn(e.Cell + " failed to update")
		if e.Err != nil {
			text += ": " + e.Err.Error()
		} else if e.Message != "" {
			text += ": " + e.Message
		}
		return text
	default:
		text = e.Message
	}
	if e.Err != nil && !strings.Contains(text, e.Err.Error()) {
		text += ": " + e.Err.Error()
	}
	return text
}

// plain appends the event as one line (the format of CI logs).
func (d *Display) plain(e executor.Event) {
	s := d.styles
	where := e.Wave
	if e.Cell != "" {
		where += " " + e.Cell
	}
	var text string
	switch e.Kind {
	case executor.Baking:
		text = fmt.Sprintf("baking, %s left", e.Left.Round(time.Second))
		if r := readings(e.Verdicts); r != "" {
			text += ": " + r
		}
	case executor.WaveBreached:
		text = s.Bad("breached")
		if e.Breach != nil {
			text += ": " + e.Breach.String()
		}
	case executor.WavePassed, executor.RolloutComplete, executor.CellUpdated:
		text = s.Good(string(e.Kind))
	case executor.CellFailed, executor.RollingBack:
		text = s.Warn(string(e.Kind))
	default:
		text = string(e.Kind)
	}
	if e.Message != "" {
		text += ": " + e.Message
	}
	if e.Err != nil && !strings.Contains(e.Message, e.Err.Error()) {
		text += ": " + e.Err.Error()
	}
	if where != "" {
		d.live.Line(fmt.Sprintf("%s  %s", s.Bold(strings.TrimSpace(where)), text))
		return
	}
	d.live.Line(text)
}

// Engine consumes the engine's events of the cells' (and the router's)
// stack runs: the resources done of the total expected, and what is being
// worked on. Events of stacks the rollout has not announced are ignored.
func (d *Display) Engine(ev stackrun.Event) {
	d.live.Lock()
	defer d.live.Unlock()
	c := d.cells[ev.Stack]
	if c == nil {
		return
	}
	st := d.stacks.Fold(ev)
	switch ev.Kind {
	case stackrun.ResourceDone:
		if !d.live.IsLive() && st.Due(d.now(), d.PlainInterval) {
			d.live.Printf("%s  %s: %s\n", d.styles.Bold(c.wave.name+" "+c.name), c.state, st.Count())
		}
	case stackrun.StackFinished:
		st.Current = ""
		if ev.Result != nil {
			d.live.Printf("%s  %s: %s, %s in %s\n", d.styles.Bold(c.wave.name+" "+c.name), c.state, st.Count(), ev.Result.Result,
				ev.Result.Duration.Round(100*time.Millisecond))
		}
	}
}

// run is the engine's run of a cell's stack in the current step (nil:
// none yet).
func (d *Display) run(c *cellLine) *progress.Stack { return d.stacks.Get(c.name) }

// frameLines is the live frame: a line per wave that has started and one
// per cell under it.
func (d *Display) frameLines() []string {
	if len(d.waves) == 0 {
		return nil
	}
	now := d.now()
	frame := d.styles.Dim(progress.Spinner(now, frameInterval))
	var lines []string
	for _, w := range d.waves {
		lines = append(lines, fmt.Sprintf("%s %s", d.styles.Bold(fmt.Sprintf("%-10s", w.name)), d.waveState(w, now, frame)))
		for _, c := range w.cells {
			if c.name == w.name {
				continue // the router's one line is its wave's
			}
			lines = append(lines, fmt.Sprintf("  %-10s %s", c.name, d.cellState(c, frame)))
		}
	}
	return lines
}

func (d *Display) waveState(w *waveLine, now time.Time, frame string) string {
	s := d.styles
	switch w.state {
	case "baking":
		left := w.left - now.Sub(w.leftAt)
		if left < 0 {
			left = 0
		}
		text := fmt.Sprintf("%s baking, %s left", frame, left.Round(time.Second))
		if w.readings != "" {
			text += s.Dim(" · " + w.readings)
		}
		return text
	case "updating":
		if rc := d.cells[w.name]; rc != nil {
			if st := d.run(rc); st != nil && st.Running {
				return fmt.Sprintf("%s updating %s  %s", frame, st.Count(), s.Dim(st.Current))
			}
		}
		return frame + " updating"
	case "rolling back":
		return frame + " " + s.Warn("rolling back")
	case "passed", "updated":
		return s.Good("✓ " + w.state)
	case "rolled back":
		return s.Warn("↺ rolled back")
	case "breached":
		return s.Bad("✗ breached") + detail(s, w.detail)
	case "skipped":
		return s.Dim("skipped" + detail(s, w.detail))
	}
	return s.Dim(w.state)
}

func (d *Display) cellState(c *cellLine, frame string) string {
	s := d.styles
	switch c.state {
	case "updating", "rolling back":
		text := frame + " " + c.state
		if c.state == "rolling back" {
			text = frame + " " + s.Warn(c.state)
		}
		if st := d.run(c); st != nil && (st.Running || st.Done > 0) {
			text += " " + st.Count()
			if st.Current != "" {
				text += "  " + s.Dim(st.Current)
			}
		}
		return text
	case "updated":
		return s.Good("✓ updated")
	case "rolled back":
		return s.Warn("↺ rolled back")
	case "breached":
		return s.Bad("✗ breached")
	case "failed", "rollback failed":
		return s.Bad("✗ "+c.state) + detail(s, c.detail)
	}
	return s.Dim(c.state)
}

func detail(s *render.Styles, t string) string {
	if t == "" {
		return ""
	}
	return s.Dim(": " + t)
}

// Redraw draws one frame now (tests; the loop draws the others).
func (d *Display) Redraw() {
	d.live.Lock()
	defer d.live.Unlock()
	d.live.Redraw()
}
func readings(vs []executor.Verdict) string {
	var parts []string
	for _, v := range vs {
		var rs []string
		for _, r := range v.Readings {
			rs = append(rs, r.Signal+" "+r.Value)
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", v.Cell, v.Decision, strings.Join(rs, ", ")))
	}
	return strings.Join(parts, "; ")
}
