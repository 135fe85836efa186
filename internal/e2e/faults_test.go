package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/sim"
)

const hangGuard = 5 * time.Minute // a hang guard, not a speed assertion

func simCloud(t *testing.T, dir string) *sim.Cloud {
	t.Helper()
	c, err := sim.Open(filepath.Join(dir, ".cellctl", "sim"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func countLive(t *testing.T, c *sim.Cloud, stack, typ string) int {
	t.Helper()
	rs, err := c.Resources(sim.Filter{Stack: stack, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	return len(rs)
}

// children lists the pids whose parent is pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so cut at the last ')'.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	return err == nil && !bytes.Contains(stat, []byte(") Z "))
}

// startSlowUp starts `up STACK` with a per-create latency and waits until
// some resources exist, so the run is killed in the middle.
func startSlowUp(t *testing.T, dir, stack string) (*os.Process, *sim.Cloud) {
	t.Helper()
	mustRun(t, dir, "sim", "latency", "set", "300ms", "--op", "create")
	cmd := command(dir, "up", stack)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait() // reap
	c := simCloud(t, dir)
	waitFor(t, "resources to appear in "+stack, hangGuard, func() bool {
		rs, _ := c.Resources(sim.Filter{Stack: stack})
		return len(rs) >= 12
	})
	return cmd.Process, c
}

// TestKilledUpConverges kills cellctl in the middle of an up; its pulumi
// child is told to stop (it gets SIGTERM when cellctl dies), releases the
// lock, and a rerun repairs the interrupted operations and converges with
// no duplicate resources. Where the kill lands decides what the rerun
// repairs — creates still pending in the checkpoint (imported or cleared),
// or a create the simulated provider carried out as it died, whose answer
// pulumi never got (an orphan: in the cloud, not in the state, adopted by
// the orphan audit; TestLostCreateAnswerAdopted makes that case happen
// every time) — and every case must converge, so the assertions hold
// whatever the timing.
func TestKilledUpConverges(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	proc, cloud := startSlowUp(t, dir, "cell-a")
	kids := children(proc.Pid)
	if err := proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		waitFor(t, "the pulumi child to exit", hangGuard, func() bool { return !alive(k) })
	}
	mustRun(t, dir, "sim", "latency", "clear")
	r := mustRun(t, dir, "up", "cell-a", "-o", "json")
	var res opResult
	decode(t, r, &res)
	if s := res.stack(t, "cell-a"); s.Result != "succeeded" {
		t.Fatalf("rerun: %+v", s)
	}
	if n := countLive(t, cloud, "cell-a", "aws:ec2/vpc:Vpc"); n != 1 {
		t.Fatalf("cell-a has %d VPCs after the rerun, want exactly 1", n)
	}
	assertConverged(t, dir, cloud, "cell-a")
}

// TestStaleLock kills cellctl and its pulumi child at once, leaving the
// stack's lock behind. The next up exits 4 and says the lock is stale and
// how to remove it; unlock removes it; the rerun converges.
func TestStaleLock(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	proc, cloud := startSlowUp(t, dir, "cell-b")
	kids := children(proc.Pid)
	if len(kids) == 0 {
		t.Fatal("no pulumi child found")
	}
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	_ = proc.Signal(syscall.SIGKILL)
	for _, k := range append(kids, proc.Pid) {
		waitFor(t, "killed processes to go", hangGuard, func() bool { return !alive(k) })
	}
	mustRun(t, dir, "sim", "latency", "clear")

	r := cellctl(t, dir, "up", "cell-b")
	if r.code != 4 {
		t.Fatalf("up on a stale lock: want exit 4, got %s", r)
	}
	if !strings.Contains(r.stdout+r.stderr, "stale") || !strings.Contains(r.stdout+r.stderr, "cellctl unlock cell-b") {
		t.Fatalf("the stale lock is not explained: %s", r)
	}
	mustRun(t, dir, "unlock", "cell-b")
	mustRun(t, dir, "up", "cell-b")
	if n := countLive(t, cloud, "cell-b", "aws:ec2/vpc:Vpc"); n != 1 {
		t.Fatalf("cell-b has %d VPCs, want 1", n)
	}
	var again opResult
	decode(t, mustRun(t, dir, "up", "cell-b", "-o", "json"), &again)
	if c := again.stack(t, "cell-b").Changes; c.Create+c.Update+c.Delete+c.Replace != 0 {
		t.Fatalf("not converged after unlock: %+v", c)
	}
}

// TestConcurrentUpLocked runs a second up on a stack while the first holds
// its lock: the second exits 4 and the first succeeds.
func TestConcurrentUpLocked(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	mustRun(t, dir, "sim", "latency", "set", "200ms", "--op", "create")
	first := command(dir, "up", "cell-c")
	var out bytes.Buffer
	first.Stdout, first.Stderr = &out, &out
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	lockDir := filepath.Join(dir, ".cellctl", "state", ".pulumi", "locks", "organization", "cells", "cell-c")
	waitFor(t, "the first up to take the lock", hangGuard, func() bool {
		entries, _ := os.ReadDir(lockDir)
		return len(entries) > 0
	})
	second := cellctl(t, dir, "up", "cell-c")
	err := first.Wait()
	if second.code != 4 {
		t.Fatalf("the second up: want exit 4, got %s", second)
	}
	if !strings.Contains(second.stdout+second.stderr, "lock") {
		t.Errorf("the second up does not mention the lock: %s", second)
	}
	if err != nil {
		t.Fatalf("the first up: %v\n%s", err, out.String())
	}
}

// TestInterruptFinishesStacksInFlight sends one Ctrl-C (SIGINT) during an
// up of two cells at --parallel 1: the cell in flight finishes, the other
// never starts, and the run exits non-zero saying what to rerun.
func TestInterruptFinishesStacksInFlight(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	mustRun(t, dir, "sim", "latency", "set", "100ms", "--op", "create")
	cmd := command(dir, "up", "cell-a", "cell-b", "--parallel", "1", "-o", "json")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cloud := simCloud(t, dir)
	waitFor(t, "the first cell to start creating", hangGuard, func() bool {
		return countLive(t, cloud, "", "") >= 3
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	r := result{stdout: out.String(), stderr: errOut.String(), code: cmd.ProcessState.ExitCode()}
	if err == nil || r.code != 1 {
		t.Fatalf("an interrupted up must exit 1: %s", r)
	}
	var res opResult
	decode(t, r, &res)
	var started, skipped stackResult
	for _, s := range res.Stacks {
		if s.Result == "skipped" {
			skipped = s
		} else {
			started = s
		}
	}
	if started.Result != "succeeded" {
		t.Errorf("the stack in flight must finish: %+v", started)
	}
	if skipped.Name == "" || !strings.Contains(skipped.Error, "interrupted") {
		t.Errorf("the other stack must not start: %+v", res.Stacks)
	}
	if !strings.Contains(r.stderr, "interrupt: finishing the stacks in flight") || !strings.Contains(r.stderr, "rerun to finish them") {
		t.Errorf("stderr must explain the interrupt: %s", r.stderr)
	}
	if n := countLive(t, cloud, skipped.Name, ""); n != 0 {
		t.Errorf("%s was not to be touched, has %d resources", skipped.Name, n)
	}
}

// TestLostCreateAnswerAdopted is the orphan TestKilledUpConverges can
// meet, made deterministic: the simulated cloud creates cell-a's VPC and
// then loses the answer (sim fault --lose-answer), so pulumi records a
// failed create and no pending operation, and the VPC exists in the cloud
// only. The next up's orphan audit adopts it: the rerun converges with
// exactly one VPC, and the state tracks every live resource.
func TestLostCreateAnswerAdopted(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	mustRun(t, dir, "sim", "fault", "add", "--cell", "cell-a", "--type", "ec2/vpc", "--op", "create", "--lose-answer")
	if r := cellctl(t, dir, "up", "cell-a"); r.code != 1 {
		t.Fatalf("up with a lost create answer: want exit 1, got %s", r)
	}
	cloud := simCloud(t, dir)
	if n := countLive(t, cloud, "cell-a", "aws:ec2/vpc:Vpc"); n != 1 {
		t.Fatalf("the lost create must have made the VPC: %d live", n)
	}
	var res opResult
	decode(t, mustRun(t, dir, "up", "cell-a", "-o", "json"), &res)
	s := res.stack(t, "cell-a")
	if s.Result != "succeeded" || !strings.Contains(strings.Join(s.Notes, " "), "orphan audit: adopted 1 resource(s)") {
		t.Fatalf("rerun: %+v", s)
	}
	if n := countLive(t, cloud, "cell-a", "aws:ec2/vpc:Vpc"); n != 1 {
		t.Fatalf("cell-a has %d VPCs after the rerun, want exactly 1 (the adopted one)", n)
	}
	assertConverged(t, dir, cloud, "cell-a")
}

// assertConverged checks that a further up of stack changes nothing and
// that the state tracks exactly the resources the cloud holds.
func assertConverged(t *testing.T, dir string, cloud *sim.Cloud, stack string) {
	t.Helper()
	var again opResult
	decode(t, mustRun(t, dir, "up", stack, "-o", "json"), &again)
	if c := again.stack(t, stack).Changes; c.Create+c.Update+c.Delete+c.Replace != 0 {
		t.Fatalf("not converged, a further up still changes: %+v", c)
	}
	live, _ := cloud.Resources(sim.Filter{Stack: stack})
	var status struct {
		Stacks []struct {
			Resources int `json:"resources"`
		} `json:"stacks"`
	}
	decode(t, mustRun(t, dir, "status", stack, "-o", "json"), &status)
	if status.Stacks[0].Resources != len(live) {
		t.Fatalf("state tracks %d resources but the cloud holds %d: orphans or losses", status.Stacks[0].Resources, len(live))
	}
}

// TestLostSubnetCreateAdoptedWithoutReplacement is the shape
// TestKilledUpConverges met in CI: an adopted subnet read back with what
// AWS chose itself (availabilityZoneId, ipv6Native…) beside what the
// program asked for. The rerun must keep it, never plan its replacement
// (a second subnet with the same CIDR is InvalidSubnet.Conflict).
func TestLostSubnetCreateAdoptedWithoutReplacement(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	mustRun(t, dir, "sim", "fault", "add", "--cell", "cell-a", "--type", "ec2/subnet", "--name", "cell-a-public-1b", "--op", "create", "--lose-answer")
	if r := cellctl(t, dir, "up", "cell-a"); r.code != 1 {
		t.Fatalf("up with a lost create answer: want exit 1, got %s", r)
	}
	var res opResult
	decode(t, mustRun(t, dir, "up", "cell-a", "-o", "json"), &res)
	s := res.stack(t, "cell-a")
	if s.Result != "succeeded" || !strings.Contains(strings.Join(s.Notes, " "), "orphan audit: adopted 1 resource(s)") {
		t.Fatalf("rerun: %+v", s)
	}
	if s.Changes.Replace != 0 {
		t.Fatalf("the adopted subnet was replaced: %+v", s.Changes)
	}
	assertConverged(t, dir, simCloud(t, dir), "cell-a")
}
