package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/sim"
)

// TestCellAddQuotaRefusalWritesNothing: on the deployed demo fleet with
// us-east-1's VPC quota at the four VPCs it already has (three cells and
// the default VPC), `cell add` of a fourth us-east-1 cell is refused by
// the quota preflight before the first file is written — the fleet
// repository and the backend are byte-identical, the simulated cloud holds
// nothing of the cell — and its --dry-run reports the same refusal with
// the same exit code. Before, the refused add had written
// stacks/Pulumi.cell-e.yaml and edited waves.yaml, and the dry run passed.
func TestCellAddQuotaRefusalWritesNothing(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	mustRun(t, dir, "sim", "quota", "set", "us-east-1", "vpc/L-F678F1CE", "4")
	var refusals []result
	for _, args := range [][]string{{"cell", "add", "--dry-run"}, {"cell", "add"}} {
		before := treeSums(t, dir)
		r := cellctl(t, dir, args...)
		if r.code != 2 {
			t.Fatalf("cellctl %s with no VPC left in us-east-1: want exit 2, got %s", strings.Join(args, " "), r)
		}
		for _, want := range []string{"cannot add cell-e, nothing was written", "critical vpc/L-F678F1CE (VPCs per Region) in us-east-1", "--skip-quota-check"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("cellctl %s: the refusal must say %q:\n%s", strings.Join(args, " "), want, r.stderr)
			}
		}
		for _, past := range []string{"would write stacks/", "wrote stacks/", "deploying cell-e"} {
			if strings.Contains(r.stderr, past) {
				t.Errorf("cellctl %s went past the refusal (%q):\n%s", strings.Join(args, " "), past, r.stderr)
			}
		}
		if diff := withoutSimClock(diffSums(before, treeSums(t, dir))); len(diff) > 0 {
			t.Errorf("a refused cellctl %s wrote:\n  %s", strings.Join(args, " "), strings.Join(diff, "\n  "))
		}
		refusals = append(refusals, r)
	}
	if refusal(refusals[0].stderr) != refusal(refusals[1].stderr) {
		t.Errorf("the dry run's refusal differs from the run's:\n--- dry run\n%s\n--- run\n%s", refusals[0].stderr, refusals[1].stderr)
	}
	live, err := sim.Open(cloud.SimDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := live.Resources(sim.Filter{Stack: "cell-e"}); err != nil || len(rs) != 0 {
		t.Errorf("after the refusals cell-e has %d resources in the simulated cloud (err %v), want none", len(rs), err)
	}
}

// TestCellAddJoinsTheShippedRelease: after `deploy --image 1.5.0` (the
// repository still names 1.4.2, as when CI ships from a clean checkout),
// `cell add` gives the new cell 1.5.0 and says so, migrates its database
// from that image before the router gives it tenants, and records the
// migration: status shows the cell on 1.5.0 with schema 1.5.0 and no
// schema problem, drift --behind has no schema finding for it (the cell
// add's record is the cell's shipped schema, as a rollout's wave is), its
// migration task ran in its own cluster, and a later up keeps it there.
// Before, the cell came up on 1.4.2 with schema "-" and took 19.9 % of
// the tenants; then, migrated, status and drift --behind called its
// schema a problem ("comes from rollout a-…, which has not kept or rolled
// back the cell") with advice that did nothing.
func TestCellAddJoinsTheShippedRelease(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const shipped = "registry.example.com/shop/api:1.5.0"
	mustRun(t, dir, "deploy", "--image", shipped, "--bake-scale", "0.002")

	dry := mustRun(t, dir, "cell", "add", "--dry-run")
	for _, want := range []string{"cell-e gets " + shipped + ", what the fleet last shipped", "would migrate cell-e's database before it gets tenants: /app/migrate up (image " + shipped + ")"} {
		if !strings.Contains(dry.stderr, want) {
			t.Errorf("the dry run must say %q:\n%s", want, dry.stderr)
		}
	}
	r := mustRun(t, dir, "cell", "add")
	migrated, published := strings.Index(r.stderr, "cell-e's migration task"), strings.Index(r.stderr, "publishing the router")
	if migrated < 0 || published < 0 || migrated > published {
		t.Fatalf("cell-e's migration must pass before the router gives it tenants:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "schema version 1.5.0") {
		t.Errorf("the add must say the schema version its migration reported:\n%s", r.stderr)
	}
	if img := cellImages(t, dir)["cell-e"]; img != shipped {
		t.Errorf("cell-e runs %q, want %s (what the fleet shipped)", img, shipped)
	}
	if tasks := migrationTasks(t, dir, shipped); !slices.ContainsFunc(tasks, func(tk sim.TaskRun) bool {
		return cellOfStack(tk.Stack) == "cell-e" && tk.ExitCode != nil && *tk.ExitCode == 0 && slices.Equal(tk.Command, []string{"/app/migrate", "up"})
	}) {
		t.Errorf("no migration task of %s ran to exit 0 in cell-e: %+v", shipped, tasks)
	}
	var status struct {
		Stacks []struct {
			Name   string `json:"name"`
			Schema *struct {
				Version string `json:"version"`
				Problem string `json:"problem"`
			} `json:"schema"`
		} `json:"stacks"`
	}
	decode(t, mustRun(t, dir, "status", "-o", "json"), &status)
	for _, s := range status.Stacks {
		if strings.HasPrefix(s.Name, "cell-") && (s.Schema == nil || s.Schema.Version != "1.5.0" || s.Schema.Problem != "") {
			t.Errorf("status: %s's schema %+v, want 1.5.0 with no problem", s.Name, s.Schema)
		}
	}
	var behind driftReport
	d := cellctl(t, dir, "drift", "--behind", "-o", "json")
	decode(t, d, &behind)
	if f := behind.find("cell-e", "schema"); f != nil {
		t.Errorf("drift --behind after the add: cell-e's schema is a finding (%s; %s): %s", f.Detail, f.Next, d)
	}
	mustRun(t, dir, "up", "cell-e")
	if img := cellImages(t, dir)["cell-e"]; img != shipped {
		t.Errorf("after up cell-e runs %q, want %s", img, shipped)
	}
}

// withoutSimClock drops from a tree diff what the simulated cloud's own
// clock writes when a command reads its alarms (the quota preflight, as
// on AWS, counts them): the health history and alarm states advanced to
// the current minute — time passing, not a change the command made. A
// resource added to the simulated cloud is still a write.
func withoutSimClock(diff []string) []string {
	var out []string
	for _, d := range diff {
		if strings.HasSuffix(d, "(simulated cloud) .cellctl/sim/health.json") ||
			strings.HasPrefix(d, "changed (simulated cloud) .cellctl/sim/resources/") {
			continue
		}
		out = append(out, d)
	}
	return out
}

// refusal is the error of a run's stderr: from its "cannot add" line on.
func refusal(stderr string) string {
	if i := strings.Index(stderr, "cannot add"); i >= 0 {
		return stderr[i:]
	}
	return stderr
}
