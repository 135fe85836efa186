package progress

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/stackrun"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
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

// clock advances one second per reading.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

// events is a short run of two cells: cell-a succeeds, cell-b fails.
func events(c *clock) []stackrun.Event {
	t0 := c.t
	return []stackrun.Event{
		{Stack: "cell-a", Kind: stackrun.StackStarted, Op: "up", Expected: 3, Time: t0},
		{Stack: "cell-b", Kind: stackrun.StackStarted, Op: "up", Expected: 2, Time: t0},
		{Stack: "cell-a", Kind: stackrun.ResourceStarted, Op: "create", Type: "aws:ec2/vpc:Vpc", Name: "cell-a-vpc"},
		{Stack: "cell-a", Kind: stackrun.ResourceDone, Op: "create", Type: "aws:ec2/vpc:Vpc", Name: "cell-a-vpc"},
		{Stack: "cell-b", Kind: stackrun.ResourceStarted, Op: "create", Type: "aws:rds/cluster:Cluster", Name: "cell-b-db"},
		{Stack: "cell-b", Kind: stackrun.ResourceFailed, Op: "create", Type: "aws:rds/cluster:Cluster", Name: "cell-b-db"},
		{Stack: "cell-b", Kind: stackrun.Diagnostic, Message: "aws:rds/cluster:Cluster cell-b-db: InjectedFault"},
		{Stack: "cell-b", Kind: stackrun.StackFinished, Result: &stackrun.Result{Name: "cell-b", Result: stackrun.Failed,
			Err: errors.New("aws:rds/cluster:Cluster cell-b-db: InjectedFault"), Duration: 4200 * time.Millisecond}},
		{Stack: "cell-a", Kind: stackrun.ResourceStarted, Op: "create", Type: "aws:ec2/subnet:Subnet", Name: "cell-a-private-1a"},
		{Stack: "cell-a", Kind: stackrun.ResourceDone, Op: "create", Type: "aws:ec2/subnet:Subnet", Name: "cell-a-private-1a"},
	}
}

// Piped stderr (CI logs): append-only lines, no escape codes.
func TestPlainProgress(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	var b bytes.Buffer
	d := newDisplay(&b, false, render.NewStyles(&b, false), c.now, false)
	d.PlainInterval = 0
	for _, ev := range events(c) {
		d.Handle(ev)
	}
	d.Handle(stackrun.Event{Stack: "cell-a", Kind: stackrun.StackFinished, Result: &stackrun.Result{Name: "cell-a", Result: stackrun.Succeeded,
		Changes: stackrun.Changes{Create: 2, Same: 1}, Duration: 6 * time.Second}})
	d.Handle(stackrun.Event{Stack: "router", Kind: stackrun.StackFinished, Result: &stackrun.Result{Name: "router", Result: stackrun.Skipped,
		Err: &stackrun.Blocked{Reason: "the router is updated only after all its cells succeed"}}})
	d.Close()
	if strings.Contains(b.String(), "\x1b") {
		t.Fatalf("plain progress holds escape codes: %q", b.String())
	}
	golden(t, "plain.golden", b.String())
}

// A terminal: one line per stack, redrawn in place.
func TestLiveProgress(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	var b bytes.Buffer
	d := newDisplay(&b, true, render.NewStyles(&b, true), c.now, false)
	for _, ev := range events(c) {
		d.Handle(ev)
	}
	if b.Len() != 0 {
		t.Fatalf("a live display writes only when it redraws: %q", b.String())
	}
	d.redraw()
	d.Handle(stackrun.Event{Stack: "cell-a", Kind: stackrun.StackFinished, Result: &stackrun.Result{Name: "cell-a", Result: stackrun.Succeeded,
		Changes: stackrun.Changes{Create: 2, Same: 1}, Duration: 6 * time.Second}})
	d.redraw()
	d.Close()
	var lines []string
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		if l != "" {
			lines = append(lines, fmt.Sprintf("%q", l))
		}
	}
	golden(t, "live.golden", strings.Join(lines, "\n")+"\n")
}

// A plan may run one stack twice (lift protection, then destroy): the
// second run starts its line afresh.
func TestRestartedStackStartsAfresh(t *testing.T) {
	var b bytes.Buffer
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	d := newDisplay(&b, true, render.NewStyles(&b, false), c.now, false)
	d.Handle(stackrun.Event{Stack: "cell-d", Kind: stackrun.StackStarted, Op: "up", Expected: 1})
	d.Handle(stackrun.Event{Stack: "cell-d", Kind: stackrun.ResourceDone})
	d.Handle(stackrun.Event{Stack: "cell-d", Kind: stackrun.StackFinished, Result: &stackrun.Result{Result: stackrun.Succeeded}})
	d.Handle(stackrun.Event{Stack: "cell-d", Kind: stackrun.StackStarted, Op: "destroy", Expected: 0})
	d.redraw()
	if out := b.String(); strings.Contains(out, "succeeded") || !strings.Contains(out, "0 resources") {
		t.Fatalf("the destroy's line still shows the up: %q", out)
	}
}
