package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// watched is a cellctl run in the background: its output goes to a
// file the test reads while it runs.
type watched struct {
	cmd    *exec.Cmd
	path   string
	exited chan struct{}
}

func startWatched(t *testing.T, dir string, args ...string) *watched {
	t.Helper()
	b := &watched{path: filepath.Join(t.TempDir(), "out"), exited: make(chan struct{})}
	f, err := os.Create(b.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	b.cmd = command(dir, args...)
	b.cmd.Stdout, b.cmd.Stderr = f, f
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = b.cmd.Wait(); close(b.exited) }()
	t.Cleanup(func() {
		select {
		case <-b.exited:
		default:
			_ = b.cmd.Process.Kill()
			<-b.exited
		}
	})
	return b
}

func (b *watched) output() string { d, _ := os.ReadFile(b.path); return string(d) }

// waitOutput waits until the run printed want (failing if it ended first).
func (b *watched) waitOutput(t *testing.T, what, want string) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the run waited on for %s printed:\n%s", what, b.output())
		}
	})
	waitFor(t, what, hangGuard, func() bool {
		if strings.Contains(b.output(), want) {
			return true
		}
		select {
		case <-b.exited:
			t.Fatalf("the run ended before %s:\n%s", what, b.output())
		default:
		}
		return false
	})
}

// waitLine waits until the run printed a line that starts with prefix
// and holds want (a wave's progress: "wave-2  baking, 36s left").
func (b *watched) waitLine(t *testing.T, what, prefix, want string) {
	t.Helper()
	waitFor(t, what, hangGuard, func() bool {
		for _, line := range strings.Split(b.output(), "\n") {
			if strings.HasPrefix(line, prefix) && strings.Contains(line, want) {
				return true
			}
		}
		select {
		case <-b.exited:
			t.Fatalf("the run ended before %s:\n%s", what, b.output())
		default:
		}
		return false
	})
}

// exitCode waits for the run to end and returns its exit code.
func (b *watched) exitCode() int {
	<-b.exited
	return b.cmd.ProcessState.ExitCode()
}

// steerGate is the gate of the steering tests' waves.
const steerGate = `gate:
  promote_if:
    error_rate_5xx: "< 0.5%"
    p99_latency_ms: "< 400"
  min_requests: 10
  poll: 30s
`

// steerWaves bakes the canary long enough (36s at --bake-scale 0.005) to
// pause it mid-bake; the rest waits for an approval before its cells change.
const steerWaves = `waves:
  - {name: canary, cells: [cell-a], bake: 2h}
  - {name: rest, cells: [cell-b, cell-c, cell-d], bake: 5m, approve: true}
` + steerGate

// TestRolloutPausedInABakeThenResumedAndApproved: an operator pauses a
// rollout while its canary bakes. The run stops at its next poll and
// exits 0; the rollout keeps the fleet, `status` says who paused it, drain
// and a plain rerun of the deploy are refused (exit 4) naming the pause.
// `rollout resume` continues the bake and then waits for the approval the
// next wave needs, holding the fleet; killed with SIGKILL while it waits,
// the approval is given anyway, and the next resume takes the dead run's
// lock over and finishes, recording who approved.
func TestRolloutPausedInABakeThenResumedAndApproved(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	writeWaves(t, dir, steerWaves)
	const img = "registry.example.com/shop/api:3.1.0"

	run := startWatched(t, dir, "deploy", "--image", img, "--bake-scale", "0.005")
	run.waitLine(t, "the canary to bake", "canary ", "baking")
	id := rolloutID(t, run.output())
	mustRun(t, dir, "rollout", "pause", id, "--by", "alice@ops")
	if code := run.exitCode(); code != 0 {
		t.Fatalf("the paused deploy: exit %d, want 0:\n%s", code, run.output())
	}
	paused := rolloutStatus(t, dir, id)
	if paused.State != "paused" || paused.waveStates() != "canary=baking rest=pending" {
		t.Fatalf("after the pause: %s %s", paused.State, paused.waveStates())
	}
	wantImages(t, dir, images(1, img, baseImage))

	st := mustRun(t, dir, "status")
	if !strings.Contains(st.stdout, "fleet: a paused rollout holds the fleet: "+id+" was paused by alice@ops") {
		t.Errorf("status must say the paused rollout holds the fleet:\n%s", st.stdout)
	}
	for _, args := range [][]string{{"drain", "cell-d"}, {"deploy", "--image", img, "--bake-scale", "0.005"}} {
		r := cellctl(t, dir, args...)
		if r.code != 4 || !strings.Contains(r.stderr, "paused by alice@ops") || !strings.Contains(r.stderr, "cellctl rollout resume "+id) || strings.Contains(r.stderr, "stale") {
			t.Errorf("%s while paused: want exit 4 naming the pause and the resume, got %s", args[0], r)
		}
	}

	resumed := startWatched(t, dir, "rollout", "resume", id, "--bake-scale", "0.005")
	resumed.waitOutput(t, "the rest to wait for its approval", "cellctl rollout approve "+id)
	waiting := rolloutStatus(t, dir, id)
	if waiting.State != "waiting" || waiting.waveStates() != "canary=passed rest=waiting" {
		t.Fatalf("waiting for the approval: %s %s", waiting.State, waiting.waveStates())
	}
	wantImages(t, dir, images(1, img, baseImage))
	if err := resumed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-resumed.exited

	r := mustRun(t, dir, "rollout", "approve", id, "--by", "dana@release")
	if !strings.Contains(r.stdout, "approved wave rest") || !strings.Contains(r.stdout, "no run is waiting on it") {
		t.Errorf("approve with the waiting run killed:\n%s", r)
	}
	// The record keeps the rehearsal's --bake-scale: resume runs with it.
	r = mustRun(t, dir, "rollout", "resume", id)
	done := rolloutStatus(t, dir, id)
	if done.State != "complete" || done.waveStates() != "canary=passed rest=passed" {
		t.Fatalf("after the approval: %s %s\n%s", done.State, done.waveStates(), r)
	}
	wantImages(t, dir, images(4, img, baseImage))
	if s := mustRun(t, dir, "rollout", "status", id); !strings.Contains(s.stdout, "approved by dana@release") {
		t.Errorf("the record must say who approved:\n%s", s.stdout)
	}
	h := mustRun(t, dir, "rollout", "history")
	if !rowHas(h.stdout, id, "complete", img, "2/2 passed", "approved by dana@release") {
		t.Errorf("history:\n%s", h.stdout)
	}

	// Undo: another image ships, then undo ships this rollout's again,
	// as a new rollout through the waves.
	writeWaves(t, dir, fastWaves)
	const next = "registry.example.com/shop/api:3.1.1"
	mustRun(t, dir, "deploy", "--image", next, "--bake-scale", "0.005")
	wantImages(t, dir, images(4, next, baseImage))
	r = mustRun(t, dir, "rollout", "undo", "--bake-scale", "0.005")
	if !strings.Contains(r.stderr, "undo: shipping the images rollout "+id+" shipped") {
		t.Errorf("undo must say whose images it ships:\n%s", r)
	}
	wantImages(t, dir, images(4, img, baseImage))
	// What ships names the rollout: the undo is rollout id again, run
	// anew through the waves (the latest record, complete).
	undone := rolloutStatus(t, dir, "")
	if undone.ID != id || undone.State != "complete" || undone.waveStates() != "canary=passed rest=passed" {
		t.Errorf("the undo must run rollout %s again through the waves: %s %s %s", id, undone.ID, undone.State, undone.waveStates())
	}
	if d := cellctl(t, dir, "drift"); d.code != 0 {
		t.Errorf("drift after the undo: %s", d)
	}
}

// fastWaves bakes every wave for a second at --bake-scale 0.005.
const fastWaves = `waves:
  - {name: canary, cells: [cell-a], bake: 5m}
  - {name: rest, cells: [cell-b, cell-c, cell-d], bake: 5m}
` + steerGate

// abortWaves updates two waves before the last one bakes for long
// enough (36s at --bake-scale 0.005) to abort it mid-bake.
const abortWaves = `waves:
  - {name: canary, cells: [cell-a], bake: 5m}
  - {name: wave-1, cells: [cell-b], bake: 5m}
  - {name: wave-2, cells: [cell-c, cell-d], bake: 2h}
` + steerGate

// TestRolloutAbortedMidWaveRestoresEveryCell: an abort asked while the
// last wave bakes rolls every wave back, last first, to what each cell ran
// before: the deploy exits 3, drift is clean against the repository
// (what the cells ran before), and the fleet is free. A rollout stopped
// by --through and aborted by `rollout abort` itself, killed with SIGKILL
// mid-abort, is finished by the next `rollout abort`.
func TestRolloutAbortedMidWaveRestoresEveryCell(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	writeWaves(t, dir, abortWaves)
	const img, other = "registry.example.com/shop/api:3.2.0", "registry.example.com/shop/api:3.2.1"

	run := startWatched(t, dir, "deploy", "--image", img, "--bake-scale", "0.005")
	run.waitLine(t, "wave-2 to bake", "wave-2 ", "baking")
	id := rolloutID(t, run.output())
	wantImages(t, dir, images(4, img, baseImage))
	r := mustRun(t, dir, "rollout", "abort", id, "--by", "bob@ops")
	if !strings.Contains(r.stdout, "asked rollout "+id+" to abort") {
		t.Errorf("abort of a running rollout:\n%s", r)
	}
	if code := run.exitCode(); code != 3 {
		t.Fatalf("the aborted deploy: exit %d, want 3:\n%s", code, run.output())
	}
	aborted := rolloutStatus(t, dir, id)
	if aborted.State != "aborted" || aborted.waveStates() != "canary=rolled-back wave-1=rolled-back wave-2=rolled-back" {
		t.Fatalf("after the abort: %s %s", aborted.State, aborted.waveStates())
	}
	wantImages(t, dir, images(0, img, baseImage))
	if d := cellctl(t, dir, "drift"); d.code != 0 {
		t.Errorf("drift after the abort (every cell back on its before-config): %s", d)
	}
	if r := cellctl(t, dir, "deploy", "--image", img, "--bake-scale", "0.005"); r.code == 0 || !strings.Contains(r.stderr, "aborted by bob@ops") {
		t.Errorf("a rerun of the aborted deploy must be refused, naming the abort: %s", r)
	}

	// Killed mid-abort: the next abort finishes it.
	mustRun(t, dir, "deploy", "--image", other, "--through", "wave-1", "--bake-scale", "0.005")
	second := rolloutStatus(t, dir, "")
	if second.ID == id || second.State != "paused" {
		t.Fatalf("the second rollout: %s %s", second.ID, second.State)
	}
	ab := startWatched(t, dir, "rollout", "abort", second.ID, "--by", "bob@ops", "--bake-scale", "0.005")
	ab.waitOutput(t, "wave-1 to be rolled back", "rolled-back")
	if err := ab.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-ab.exited
	if mid := rolloutStatus(t, dir, second.ID); mid.State == "aborted" {
		t.Fatalf("the abort finished before the kill landed (%s): nothing left to finish", mid.waveStates())
	}
	r = mustRun(t, dir, "rollout", "abort", second.ID, "--bake-scale", "0.005")
	if done := rolloutStatus(t, dir, second.ID); done.State != "aborted" {
		t.Fatalf("after the second abort: %s %s\n%s", done.State, done.waveStates(), r)
	}
	wantImages(t, dir, images(0, other, baseImage))
	if d := cellctl(t, dir, "drift"); d.code != 0 {
		t.Errorf("drift after the finished abort: %s", d)
	}
}
