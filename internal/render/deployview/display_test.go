package deployview

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/cellctl/cellctl/waves"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// clock is a display's time, moved by the script.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// step is one thing that happens in the scripted rollout: an executor
// event, an engine event, the clock moving, or (live) a frame drawn.
type step struct {
	ev     *executor.Event
	engine *stackrun.Event
	wait   time.Duration
	frame  bool
}

func ev(e executor.Event) step  { return step{ev: &e} }
func eng(e stackrun.Event) step { return step{engine: &e} }
func wait(d time.Duration) step { return step{wait: d} }
func frame() step               { return step{frame: true} }
func verdict(cell string, d waves.Decision, rs ...executor.Reading) executor.Verdict {
	return executor.Verdict{Cell: cell, Decision: d, Readings: rs}
}

// script is a rollout of two waves: the canary updates (3 resources),
// bakes and passes; wave-1's cell-b updates, breaches on its 5xx rate and
// is rolled back.
func script() []step {
	breach := &executor.Breach{Cell: "cell-b", Signal: "error_rate_5xx", Reading: "3%", Threshold: "< 0.5%"}
	good := verdict("cell-a", waves.Pass, executor.Reading{Signal: "error_rate_5xx", Value: "0.1%", OK: true}, executor.Reading{Signal: "p99_latency_ms", Value: "120ms", OK: true})
	bad := executor.Verdict{Cell: "cell-b", Decision: waves.Breached, Breach: breach,
		Readings: []executor.Reading{{Signal: "error_rate_5xx", Value: "3%"}, {Signal: "p99_latency_ms", Value: "900ms"}}}
	return []step{
		ev(executor.Event{Kind: executor.RolloutStarted, Message: "rollout r-0123456789ab: 2 waves"}),
		ev(executor.Event{Kind: executor.WaveStarted, Wave: "canary", Message: "wave canary: cell-a"}),
		ev(executor.Event{Kind: executor.CellUpdating, Wave: "canary", Cell: "cell-a"}),
		eng(stackrun.Event{Stack: "cell-a", Kind: stackrun.StackStarted, Op: "up", Expected: 3}),
		eng(stackrun.Event{Stack: "cell-a", Kind: stackrun.ResourceStarted, Op: "update", Type: "aws:ecs/taskDefinition:TaskDefinition", Name: "cell-a-task"}),
		eng(stackrun.Event{Stack: "cell-a", Kind: stackrun.ResourceDone, Op: "update", Type: "aws:ecs/taskDefinition:TaskDefinition", Name: "cell-a-task"}),
		wait(2 * time.Second), frame(),
		eng(stackrun.Event{Stack: "cell-a", Kind: stackrun.ResourceStarted, Op: "update", Type: "aws:ecs/service:Service", Name: "cell-a-svc"}),
		eng(stackrun.Event{Stack: "cell-a", Kind: stackrun.ResourceDone, Op: "update", Type: "aws:ecs/service:Service", Name: "cell-a-svc"}),
		wait(12 * time.Second),
		eng(stackrun.Event{Stack: "cell-a", Kind: stackrun.ResourceDone, Op: "same", Type: "aws:ec2/vpc:Vpc", Name: "cell-a-vpc"}),
		eng(stackrun.Event{Stack: "cell-a", Kind: stackrun.StackFinished, Result: &stackrun.Result{Name: "cell-a", Result: stackrun.Succeeded, Duration: 14 * time.Second}}),
		ev(executor.Event{Kind: executor.CellUpdated, Wave: "canary", Cell: "cell-a"}),
		ev(executor.Event{Kind: executor.Baking, Wave: "canary", Left: 30 * time.Minute}),
		wait(10 * time.Second), frame(),
		ev(executor.Event{Kind: executor.Baking, Wave: "canary", Left: 29*time.Minute + 30*time.Second, Verdicts: []executor.Verdict{good}}),
		wait(5 * time.Second), frame(),
		ev(executor.Event{Kind: executor.WavePassed, Wave: "canary"}),
		ev(executor.Event{Kind: executor.WaveStarted, Wave: "wave-1", Message: "wave wave-1: cell-b"}),
		ev(executor.Event{Kind: executor.CellUpdating, Wave: "wave-1", Cell: "cell-b"}),
		eng(stackrun.Event{Stack: "cell-b", Kind: stackrun.StackStarted, Op: "up", Expected: 2}),
		eng(stackrun.Event{Stack: "cell-b", Kind: stackrun.ResourceDone, Op: "update", Type: "aws:ecs/service:Service", Name: "cell-b-svc"}),
		eng(stackrun.Event{Stack: "cell-b", Kind: stackrun.ResourceDone, Op: "same", Type: "aws:ec2/vpc:Vpc", Name: "cell-b-vpc"}),
		eng(stackrun.Event{Stack: "cell-b", Kind: stackrun.StackFinished, Result: &stackrun.Result{Name: "cell-b", Result: stackrun.Succeeded, Duration: 9 * time.Second}}),
		ev(executor.Event{Kind: executor.CellUpdated, Wave: "wave-1", Cell: "cell-b"}),
		ev(executor.Event{Kind: executor.Baking, Wave: "wave-1", Left: 10 * time.Minute, Verdicts: []executor.Verdict{bad}}),
		frame(),
		ev(executor.Event{Kind: executor.WaveBreached, Wave: "wave-1", Cell: "cell-b", Breach: breach}),
		ev(executor.Event{Kind: executor.RollingBack, Wave: "wave-1", Message: "rolling back wave wave-1: cell-b"}),
		eng(stackrun.Event{Stack: "cell-b", Kind: stackrun.StackStarted, Op: "up", Expected: 2}),
		eng(stackrun.Event{Stack: "cell-b", Kind: stackrun.ResourceStarted, Op: "update", Type: "aws:ecs/service:Service", Name: "cell-b-svc"}),
		eng(stackrun.Event{Stack: "cell-b", Kind: stackrun.ResourceDone, Op: "update", Type: "aws:ecs/service:Service", Name: "cell-b-svc"}),
		wait(time.Second), frame(),
		eng(stackrun.Event{Stack: "cell-b", Kind: stackrun.StackFinished, Result: &stackrun.Result{Name: "cell-b", Result: stackrun.Succeeded, Duration: 8 * time.Second}}),
		ev(executor.Event{Kind: executor.CellRolledBack, Wave: "wave-1", Cell: "cell-b"}),
		ev(executor.Event{Kind: executor.RolledBack, Wave: "wave-1"}),
		frame(),
		ev(executor.Event{Kind: executor.Note, Err: errors.New("could not release the rollout lock"), Message: "could not release the rollout lock: `cellctl deploy --abandon r-0123456789ab` removes it"}),
	}
}

func play(d *Display, c *clock, steps []step) {
	for _, s := range steps {
		switch {
		case s.ev != nil:
			e := *s.ev
			e.At = c.t
			d.Event(e)
		case s.engine != nil:
			d.Engine(*s.engine)
		case s.wait > 0:
			c.t = c.t.Add(s.wait)
		case s.frame:
			d.Redraw()
		}
	}
}

// Piped stderr, or NO_COLOR: append-only lines, no escape codes, engine
// progress throttled per cell.
func TestDisplayPlain(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	d := newDisplay(&buf, false, render.NewStyles(&buf, false), c.now, false)
	play(d, c, script())
	d.Close()
	out := buf.String()
	if strings.Contains(out, "\x1b") {
		t.Errorf("plain output holds escape codes:\n%q", out)
	}
	golden(t, "display-plain.golden", out)
}

// A terminal with colour: one block, redrawn in place, sentences above it.
func TestDisplayLive(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	d := newDisplay(&buf, true, render.NewStyles(&buf, true), c.now, false)
	play(d, c, script())
	d.Close()
	// One escaped line per written line, so the golden file's diff shows
	// each redraw.
	var b strings.Builder
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		if l != "" {
			fmt.Fprintf(&b, "%q\n", l)
		}
	}
	golden(t, "display-live.golden", b.String())
}

// The block's bake countdown runs between the gate's polls.
func TestDisplayLiveCountsTheBakeDown(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	d := newDisplay(&buf, true, render.NewStyles(&buf, false), c.now, false)
	d.Event(executor.Event{Kind: executor.WaveStarted, Wave: "canary", At: c.t})
	d.Event(executor.Event{Kind: executor.Baking, Wave: "canary", Left: time.Minute, At: c.t})
	c.t = c.t.Add(25 * time.Second)
	buf.Reset()
	d.Redraw()
	if !strings.Contains(buf.String(), "baking, 35s left") {
		t.Errorf("25s into a 1m bake:\n%q", buf.String())
	}
}
