package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// resumeWaves bakes wave-2 long enough (36s at --bake-scale 0.005) to be
// killed in the middle of; the canary and wave-1 bake for a second or two.
const resumeWaves = `waves:
  - {name: canary, cells: [cell-a], bake: 5m}
  - {name: wave-1, cells: [cell-b], bake: 5m}
  - {name: wave-2, cells: [cell-c, cell-d], bake: 2h, max_parallel: 1}
gate:
  promote_if:
    error_rate_5xx: "< 0.5%"
    p99_latency_ms: "< 400"
  min_requests: 10
  poll: 30s
`

// TestDeployKilledDuringBakeResumes kills deploy with SIGKILL while wave 2
// bakes. While it runs, and after it died, a deploy of another image is
// refused with exit 4 naming the holder: rollout id, host, pid and start.
// Rerunning the same deploy takes the dead run's lock over, bakes wave 2
// again and finishes — without updating or baking the canary or wave 1 a
// second time — and every cell ends on the new image.
func TestDeployKilledDuringBakeResumes(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	writeWaves(t, dir, resumeWaves)
	const img, other = "registry.example.com/shop/api:3.0.0", "registry.example.com/shop/api:3.0.1"

	stderrPath := filepath.Join(t.TempDir(), "stderr")
	errFile, err := os.Create(stderrPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd := command(dir, "deploy", "--image", img, "--bake-scale", "0.005")
	cmd.Stdout, cmd.Stderr = errFile, errFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stderr := func() string { b, _ := os.ReadFile(stderrPath); return string(b) }
	baking := func(wave string) bool {
		for _, line := range strings.Split(stderr(), "\n") {
			if strings.HasPrefix(line, wave+" ") && strings.Contains(line, "baking") {
				return true
			}
		}
		return false
	}
	waitFor(t, "wave-2 to bake", hangGuard, func() bool {
		select {
		case <-exited:
			t.Fatalf("deploy ended before wave-2 baked:\n%s", stderr())
		default:
		}
		return baking("wave-2")
	})
	id := rolloutID(t, stderr())
	host, _ := os.Hostname()

	// A second rollout while the first runs: exit 4, naming the holder.
	r := cellctl(t, dir, "deploy", "--image", other, "--bake-scale", "0.005")
	if r.code != 4 {
		t.Fatalf("a concurrent deploy: want exit 4, got %s", r)
	}
	held := rolloutStatus(t, dir, id)
	for _, want := range []string{id, "host " + host, "pid " + strconv.Itoa(cmd.Process.Pid), "started " + held.Holder.Started.UTC().Format(time.RFC3339)} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal must name %q:\n%s", want, r.stderr)
		}
	}
	if held.Holder.PID != cmd.Process.Pid || held.Holder.Host != host {
		t.Errorf("the record's holder is %+v, want pid %d on %s", held.Holder, cmd.Process.Pid, host)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	killed := rolloutStatus(t, dir, id)
	if got := killed.waveStates(); got != "canary=passed wave-1=passed wave-2=baking" {
		t.Fatalf("after kill -9 during wave-2's bake the record says %s", got)
	}
	polls := map[string]int{}
	for _, w := range killed.Waves {
		polls[w.Name] = len(w.Polls)
	}
	// The canary and wave-1 run the new image, wave-2's cells were updated.
	wantImages(t, dir, images(4, img, baseImage))

	// The dead holder still holds the fleet for its rollout: another image
	// is refused, and told how to give the dead one up.
	r = cellctl(t, dir, "deploy", "--image", other, "--bake-scale", "0.005")
	if r.code != 4 || !strings.Contains(r.stderr, id) || !strings.Contains(r.stderr, "--abandon "+id) {
		t.Errorf("deploy of another image while the killed rollout holds the fleet: want exit 4 naming %s and --abandon, got %s", id, r)
	}

	// The same deploy again continues the rollout.
	r = mustRun(t, dir, "deploy", "--image", img, "--bake-scale", "0.005")
	t.Logf("the resumed run:\n%s", r)
	if !strings.Contains(r.stderr, "is gone") {
		t.Errorf("the rerun must say it took over the dead run's lock:\n%s", r.stderr)
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		if (strings.HasPrefix(line, "canary ") || strings.HasPrefix(line, "wave-1 ")) && !strings.Contains(line, "wave-skipped") {
			t.Errorf("the rerun touched a wave that had passed: %q", line)
		}
	}
	done := rolloutStatus(t, dir, id)
	if done.State != "complete" || done.waveStates() != "canary=passed wave-1=passed wave-2=passed" {
		t.Errorf("after the rerun: %s %s", done.State, done.waveStates())
	}
	for _, w := range done.Waves {
		switch {
		case w.Name != "wave-2" && len(w.Polls) != polls[w.Name]:
			t.Errorf("wave %s was baked again: %d polls, %d before the rerun", w.Name, len(w.Polls), polls[w.Name])
		case w.Name == "wave-2" && len(w.Polls) <= polls[w.Name]:
			// The resumed bake judges its whole window, the minutes
			// nobody watched included, at least once more.
			t.Errorf("wave-2 was promoted without a poll after the rerun (%d polls, %d before)", len(w.Polls), polls[w.Name])
		case w.Name == "wave-2" && !w.BakeStart.Equal(killed.Waves[2].BakeStart):
			t.Errorf("wave-2's bake window moved on the rerun: %s, was %s", w.BakeStart, killed.Waves[2].BakeStart)
		}
	}
	for _, c := range demoCells {
		if !rowHas(r.stdout, c, img, "new") {
			t.Errorf("no row %s %s new:\n%s", c, img, r.stdout)
		}
	}
	wantImages(t, dir, images(4, img, baseImage))
}
