package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/sim"
	"github.com/cellctl/cellctl/router"
)

// renameProject makes the fleet in dir a different Pulumi project: its
// Pulumi.yaml name and every config key's namespace (config keys live in
// the project's namespace). The default name prefix of every
// account-unique name follows the project name.
func renameProject(t *testing.T, dir, name string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "stacks", "Pulumi.*.yaml"))
	files = append(files, filepath.Join(dir, "Pulumi.yaml"))
	key := regexp.MustCompile(`(?m)^(\s*)cells:(\w)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := key.ReplaceAllString(string(b), "${1}"+name+":${2}")
		if filepath.Base(f) == "Pulumi.yaml" {
			s = strings.Replace(s, "\nname: cells\n", "\nname: "+name+"\n", 1)
		}
		writeText(t, f, s)
	}
}

// setBaseline sets (value "": removes) a key of the fleet baseline in
// Pulumi.yaml, key in the project's namespace ("staging:fleetDomain").
func setBaseline(t *testing.T, dir, key, value string) {
	t.Helper()
	path := filepath.Join(dir, "Pulumi.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(key) + `: .*\n`)
	s := line.ReplaceAllString(string(b), "")
	if value != "" {
		s = strings.Replace(s, "\nconfig:\n", "\nconfig:\n  "+key+": "+value+"\n", 1)
	}
	writeText(t, path, s)
}

// drainCell takes a cell out of the fleet's routing table (a cell that
// serves no tenant may be destroyed).
func drainCell(t *testing.T, dir, cell string) {
	t.Helper()
	path := filepath.Join(dir, "stacks", "routing.json")
	table, err := router.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	drained, err := router.Drain(table, cell)
	if err != nil {
		t.Fatal(err)
	}
	if err := drained.WriteFile(path); err != nil {
		t.Fatal(err)
	}
}

// Issue 20 item 4: two fleets with different Pulumi projects (prod
// "cells", staging "staging") in ONE simulated account, named by
// CELLCTL_SIM_DIR, both with a cell-d in us-west-2. Their account-unique
// names carry the fleet, so both come up; a fleet that keeps the other's
// names is refused as AWS refuses it; neither fleet's orphan audit, drift
// --cloud or `sim` commands see the other's resources; destroying prod's
// cell leaves staging's as it was.
func TestTwoFleetsShareOneSimulatedAccount(t *testing.T) {
	t.Parallel()
	account := t.TempDir()
	prod, staging := freshClone(t), freshClone(t)
	for _, dir := range []string{prod, staging} {
		setFleetEnv(t, dir, cloud.SimDirEnv+"="+account) // every cellctl below (not t.Setenv: the test runs in parallel)
		drainCell(t, dir, "cell-d")
	}
	addDemoZones(t, prod) // the account's zones, seen by both fleets
	// One account's Elastic IPs serve both fleets (cell-d has a NAT per
	// AZ): quotas are the account's, so the second fleet's preflight
	// counts the first's three.
	mustRun(t, prod, "sim", "quota", "set", "us-west-2", "ec2/L-0263D0A3", "10")
	renameProject(t, staging, "staging")
	setBaseline(t, staging, "staging:fleetDomain", "staging.cells.example.com")
	setBaseline(t, staging, "staging:fleetBucket", "example-staging-fleet")
	setBaseline(t, staging, "staging:namePrefix", "cells") // prod's names: refused below

	mustRun(t, prod, "up", "cell-d", "-y")
	live, err := sim.Open(account)
	if err != nil {
		t.Fatal(err)
	}
	if live.Dir() != account {
		t.Fatalf("CELLCTL_SIM_DIR not honoured: the cloud is %s", live.Dir())
	}
	prodBefore := resourcesOf(t, live, "cells/cell-d")
	if len(prodBefore) < 60 {
		t.Fatalf("prod's cell-d has %d resources", len(prodBefore))
	}

	// Staging with prod's names: the simulator refuses what AWS refuses
	// (or would take over silently), and prod's cell is untouched.
	r := cellctl(t, staging, "up", "cell-d", "-y")
	if r.code == 0 || !regexp.MustCompile(`AlreadyExists|QueueNameExists|`+"SimulatedSilentTakeover").MatchString(r.stderr) {
		t.Fatalf("a second fleet with the first's names must be refused: %s", r)
	}
	if got := resourcesOf(t, live, "cells/cell-d"); !sameResources(got, prodBefore) {
		t.Fatal("the refused fleet changed prod's resources")
	}

	// Staging's own names (the project's prefix): both fleets live side by
	// side, every account-unique name distinct.
	setBaseline(t, staging, "staging:namePrefix", "")
	mustRun(t, staging, "up", "cell-d", "-y")
	stagingBefore := resourcesOf(t, live, "staging/cell-d")
	if len(stagingBefore) != len(prodBefore) {
		t.Fatalf("staging's cell-d has %d resources, prod's %d", len(stagingBefore), len(prodBefore))
	}
	prodIDs := map[string]bool{}
	for _, r := range prodBefore {
		prodIDs[r.Type+" "+r.ID] = true
	}
	for _, r := range stagingBefore {
		if prodIDs[r.Type+" "+r.ID] {
			t.Errorf("%s %s has prod's id %s", r.Type, r.Name, r.ID)
		}
		if r.Project != "staging" || !strings.Contains(r.URN, "::staging::") {
			t.Errorf("%s %s is kept as project %q (%s)", r.Type, r.Name, r.Project, r.URN)
		}
	}
	for _, typ := range []string{"aws:cloudwatch/metricAlarm:MetricAlarm", "aws:sqs/queue:Queue", "aws:rds/cluster:Cluster"} {
		names := map[string]string{}
		for _, m := range []map[string]sim.Resource{prodBefore, stagingBefore} {
			for _, r := range m {
				if r.Type == typ {
					if prev, dup := names[r.ID]; dup {
						t.Errorf("%s %s is named like %s", typ, r.ID, prev)
					}
					names[r.ID] = r.Project
				}
			}
		}
		if len(names) == 0 {
			t.Errorf("no %s in either fleet", typ)
		}
	}

	// An out-of-band edit from staging's checkout names staging's cell-d.
	mustRun(t, staging, "sim", "edit", "cell-d", "cell-d-queue", "visibilityTimeoutSeconds", "120")

	// Prod's orphan audit (before every up) never adopts staging's
	// resources, and its drift --cloud never reports them.
	var up opResult
	decode(t, mustRun(t, prod, "up", "cell-d", "-y", "-o", "json"), &up)
	if st := up.stack(t, "cell-d"); st.Result != "succeeded" || st.Changes.Create+st.Changes.Update+st.Changes.Delete+st.Changes.Replace != 0 || len(st.Notes) != 0 {
		t.Fatalf("prod's second up must change nothing and adopt nothing: %+v", st)
	}
	if r := cellctl(t, prod, "drift", "--cloud", "cell-d", "-o", "json"); r.code != 0 || strings.Contains(r.stdout, "visibilityTimeoutSeconds") {
		t.Fatalf("prod's drift --cloud reports staging's edit: %s", r)
	}
	var rep driftReport
	r = cellctl(t, staging, "drift", "--cloud", "cell-d", "-o", "json")
	decode(t, r, &rep)
	if r.code != 2 || len(rep.Findings) != 1 || rep.find("cell-d", "visibilityTimeoutSeconds") == nil {
		t.Fatalf("staging's drift --cloud must report exactly its edit: %s", r)
	}

	// Destroying prod's cell leaves staging's as it was.
	mustRun(t, prod, "destroy", "cell-d", "-y", "--release-protected")
	if n := len(resourcesOf(t, live, "cells/cell-d")); n != 0 {
		t.Fatalf("%d of prod's resources remain", n)
	}
	after := resourcesOf(t, live, "staging/cell-d")
	if !sameResources(after, stagingBefore) {
		t.Fatalf("prod's destroy changed staging's cell-d: %d resources, %d before", len(after), len(stagingBefore))
	}
	r = cellctl(t, staging, "drift", "--cloud", "cell-d", "-o", "json")
	decode(t, r, &rep)
	if r.code != 2 || len(rep.Findings) != 1 {
		t.Fatalf("after prod's destroy staging's cell-d drifts by its one edit only: %s", r)
	}
}

// resourcesOf is a stack's live resources by URN.
func resourcesOf(t *testing.T, c *sim.Cloud, stack string) map[string]sim.Resource {
	t.Helper()
	rs, err := c.Resources(sim.Filter{Stack: stack})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]sim.Resource{}
	for _, r := range rs {
		out[r.URN] = r
	}
	return out
}

// sameResources says two listings hold the same resources, none changed
// since (the out-of-band edit aside, which is not a change by a fleet).
func sameResources(a, b map[string]sim.Resource) bool {
	if len(a) != len(b) {
		return false
	}
	for urn, r := range a {
		o, ok := b[urn]
		if !ok || !r.Updated.Equal(o.Updated) && len(r.Edited) == 0 {
			return false
		}
	}
	return true
}
