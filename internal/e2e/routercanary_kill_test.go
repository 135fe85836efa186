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

// statusRouter is the router's row of `cellctl status -o json`.
type statusRouter struct {
	TableVersion *int64 `json:"tableVersion"`
	Canary       *struct {
		Record         string    `json:"record"`
		Phase          string    `json:"phase"`
		Weight         float64   `json:"weight"`
		Since          time.Time `json:"since"`
		PrimaryTable   int64     `json:"primaryTableVersion"`
		CandidateTable int64     `json:"candidateTableVersion"`
	} `json:"canary"`
}

func routerStatus(t *testing.T, dir string) statusRouter {
	t.Helper()
	var doc struct {
		Stacks []struct {
			Name string `json:"name"`
			statusRouter
		} `json:"stacks"`
	}
	decode(t, mustRun(t, dir, "status", "-o", "json"), &doc)
	for _, s := range doc.Stacks {
		if s.Name == "router" {
			return s.statusRouter
		}
	}
	t.Fatal("status has no router row")
	return statusRouter{}
}

// TestRouterCanaryKilledInItsWeightedPhaseIsShownAndResumed: a router
// canary killed with SIGKILL while 5 % of viewers are on the staging
// distribution is never invisible — `status` shows its record, phase,
// weight and start, and the primary's own table version (the router's
// tableVersion output is the candidate's meanwhile); `health` counts it
// (exit 2); its lock refuses every other change (exit 4). The next
// `cellctl router canary` takes the dead run's lock over, continues the
// weighted bake where it was, and promotes exactly the canaried version.
func TestRouterCanaryKilledInItsWeightedPhaseIsShownAndResumed(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	before := readEdge(t, dir)
	old := routerStatus(t, dir)
	if old.TableVersion == nil || old.Canary != nil {
		t.Fatalf("after up: %+v", old)
	}
	good := bumpTable(t, dir)

	stderrPath := filepath.Join(t.TempDir(), "stderr")
	errFile, err := os.Create(stderrPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	// 30 minutes of weighted bake at 0.01: 18 s to be killed in.
	args := []string{"router", "canary", "--bake-scale", "0.01", "--weight-min-requests", "100", "--weight-bake", "30m"}
	cmd := command(dir, args...)
	cmd.Stdout, cmd.Stderr = errFile, errFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stderr := func() string { b, _ := os.ReadFile(stderrPath); return string(b) }
	waitFor(t, "the weighted phase to be polled", hangGuard, func() bool {
		select {
		case <-exited:
			t.Fatalf("the canary ended before its weighted phase was polled:\n%s", stderr())
		default:
		}
		return strings.Contains(stderr(), "router canary: weight phase: ")
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	waitPulumiGone(t, dir)
	mid := readEdge(t, dir)
	if mid.primary != before.primary || mid.staging == before.primary || !mid.policyEnabled {
		t.Fatalf("after kill -9 in the weighted phase: %+v; want the primary on %s, the candidate on staging, the policy on", mid, before.primary)
	}

	// status shows it, with the primary's own table.
	st := routerStatus(t, dir)
	if st.Canary == nil || st.Canary.Phase != "weight" || st.Canary.Weight != 0.05 || st.Canary.Since.IsZero() || !strings.HasPrefix(st.Canary.Record, "c-") {
		t.Fatalf("status after the kill: %+v", st.Canary)
	}
	if st.TableVersion == nil || *st.TableVersion != *old.TableVersion || st.Canary.CandidateTable != int64(good) {
		t.Errorf("status: primary table %v, candidate %d; want %d (the primary's), %d", st.TableVersion, st.Canary.CandidateTable, *old.TableVersion, good)
	}
	table := mustRun(t, dir, "status")
	if !strings.Contains(table.stdout, st.Canary.Record+" is unfinished: weight phase") || !strings.Contains(table.stdout, "5% of viewers") {
		t.Errorf("status table:\n%s", table.stdout)
	}
	// health counts it.
	h := cellctl(t, dir, "health")
	if h.code != 2 || !strings.Contains(h.stdout+h.stderr, st.Canary.Record+" is unfinished") {
		t.Errorf("health with an unfinished canary: want exit 2 naming it, got %s", h)
	}
	// Its lock refuses every other change, naming it.
	if r := cellctl(t, dir, "up", "--router"); r.code != 4 || !strings.Contains(r.stderr, st.Canary.Record) {
		t.Errorf("up --router during the unfinished canary: %s", r)
	}
	// rollout list shows the canary record.
	if r := mustRun(t, dir, "rollout", "list"); !strings.Contains(r.stdout, st.Canary.Record) || !strings.Contains(r.stdout, "router canary: weight") {
		t.Errorf("rollout list:\n%s", r.stdout)
	}

	// The next run resumes the weighted bake and promotes.
	r := mustRun(t, dir, append(args, "-o", "json")...)
	t.Logf("the resumed run:\n%s", r.stderr)
	for _, want := range []string{"is gone", "resuming canary " + st.Canary.Record, "continuing its bake"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the resumed run does not say %q", want)
		}
	}
	if strings.Contains(r.stderr, "smoke test:") {
		t.Errorf("the resumed run smoke-tested again instead of continuing the weighted phase")
	}
	var res struct {
		ID        string `json:"id"`
		Outcome   string `json:"outcome"`
		Candidate string `json:"candidateFunctionArn"`
	}
	decode(t, r, &res)
	if res.ID != st.Canary.Record || res.Outcome != "promoted" || res.Candidate != mid.staging {
		t.Fatalf("resumed: %+v, want %s promoted to %s", res, st.Canary.Record, mid.staging)
	}
	after := readEdge(t, dir)
	if after.primary != mid.staging || after.staging != after.primary || after.policyEnabled {
		t.Fatalf("after the resumed promotion: %+v", after)
	}
	done := routerStatus(t, dir)
	if done.Canary != nil || done.TableVersion == nil || strconv.FormatInt(*done.TableVersion, 10) != strconv.Itoa(good) {
		t.Errorf("status after the promotion: %+v", done)
	}
	// Nothing changed since: the next canary runs no engine.
	r = mustRun(t, dir, "router", "canary", "--bake-scale", "0.01")
	if !strings.Contains(r.stdout, "router canary: unchanged") || !strings.Contains(r.stderr, "no engine run") {
		t.Errorf("a canary with nothing to change:\n%s", r)
	}
	if again := readEdge(t, dir); again != after {
		t.Errorf("the no-change canary changed the edge: %+v, was %+v", again, after)
	}
}
