package e2e

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/engine"
)

// Issue 38: the backend is the fleet's memory, not the checkout. Two
// checkouts of one fleet share its file backend and its simulated cloud;
// the second is not pulled after the first changes the fleet.

// secondCheckout copies the repository files of the fleet in dir
// (Pulumi.yaml and stacks/, as committed) into a directory of its own, and
// returns a runner of cellctl there against dir's backend and simulated
// cloud — a teammate's clone, sharing only the backend and the account
// (and the demo's passphrase, which a backend named by URL is not given
// on its own).
func secondCheckout(t *testing.T, dir string) (string, func(args ...string) result) {
	t.Helper()
	other := filepath.Join(t.TempDir(), "checkout-2")
	copyFile(t, filepath.Join(dir, "Pulumi.yaml"), filepath.Join(other, "Pulumi.yaml"))
	syncStacks(t, dir, other)
	backend := "file://" + filepath.ToSlash(filepath.Join(dir, ".cellctl", "state"))
	simDir := cloud.SimDir(dir)
	return other, func(args ...string) result {
		t.Helper()
		cmd := command(other, append([]string{"--backend", backend}, args...)...)
		cmd.Env = append(cmd.Env, cloud.SimDirEnv+"="+simDir, "PULUMI_CONFIG_PASSPHRASE="+engine.DemoPassphrase)
		return run(t, cmd)
	}
}

// Item 1: after the first checkout's `secret rotate` completed, the second
// one (not pulled) would ship the old origin-verify value: up, a gated
// deploy and up --router are refused with exit 4 and `git pull` before
// anything runs, and every cell keeps accepting what CloudFront sends.
// Once pulled, the second checkout's up goes ahead. On the deployed
// two-cell fleet: the rotation and the refusals are every cell's alike,
// and two cells (the one the stale checkout ups, and another) show it at
// half the engine runs of the demo's four.
func TestStaleCheckoutNeverPutsTheOldOriginSecretBack(t *testing.T) {
	t.Parallel()
	dir := deployedTwoCellFleet(t)
	stale, run2 := secondCheckout(t, dir)
	mustRun(t, dir, "secret", "rotate", "--bake-scale", "0.002")
	cells := []string{"cell-a", "cell-b"}
	checkNoRefusal(t, dir, "after the rotation", cells)
	before := originView(t, dir)

	for _, args := range [][]string{
		{"up", "cell-b"},
		{"up", "--router"},
		{"deploy", "--image", "registry.example.com/shop/api:1.5.0", "--bake-scale", "0.002"},
	} {
		r := run2(args...)
		if r.code != 4 {
			t.Fatalf("%v from a checkout older than the rotation: want exit 4, got %s", args, r)
		}
		for _, want := range []string{"origin-verify secret", "older than", "git pull"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, r.stderr)
			}
		}
		if after := originView(t, dir); !reflect.DeepEqual(before, after) {
			t.Fatalf("%v changed what the fleet sends or accepts:\nbefore %+v\nafter  %+v", args, before, after)
		}
		checkNoRefusal(t, dir, "after the refused "+strings.Join(args, " "), cells)
	}

	syncStacks(t, dir, stale) // git pull
	if r := run2("up", "cell-b"); r.code != 0 {
		t.Fatalf("up cell-b from the pulled checkout: %s", r)
	}
	checkNoRefusal(t, dir, "after the pulled checkout's up", cells)
}

// Item 2: the first checkout starts a tenant's migration (routing table
// version 2, the tenant's writes refused while its data is copied); the
// second checkout, still on version 1, would lift the write block by
// republishing version 1: up --router and a whole up are refused with
// exit 4 and `git pull`, the router keeps serving version 2. Pulled, the
// second checkout's up --router goes ahead.
func TestStaleCheckoutNeverRepublishesAnOlderTable(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	stale, run2 := secondCheckout(t, dir)
	mustRun(t, dir, "migrate", "initech", "--to", "cell-c")
	served := routerStatus(t, dir).TableVersion
	if served == nil || *served != 2 {
		t.Fatalf("after the migration started the router serves table %v, want 2", served)
	}
	cellsBefore := resourcesOf(t, simCloud(t, dir), "cell-a")

	for _, args := range [][]string{{"up", "--router"}, {"up"}} {
		r := run2(args...)
		if r.code != 4 {
			t.Fatalf("%v with routing table version 1 while the router serves 2: want exit 4, got %s", args, r)
		}
		for _, want := range []string{"serves routing table version 2", "version 1", "git pull"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, r.stderr)
			}
		}
		if v := routerStatus(t, dir).TableVersion; v == nil || *v != 2 {
			t.Fatalf("after the refused %v the router serves table %v, want 2", args, v)
		}
	}
	if after := resourcesOf(t, simCloud(t, dir), "cell-a"); !sameResources(cellsBefore, after) {
		t.Error("the refused whole-fleet up changed cell-a")
	}

	syncStacks(t, dir, stale) // git pull
	if r := run2("up", "--router"); r.code != 0 {
		t.Fatalf("up --router from the pulled checkout: %s", r)
	}
	if v := routerStatus(t, dir).TableVersion; v == nil || *v != 2 {
		t.Fatalf("after the pulled up --router the router serves table %v, want 2", v)
	}
}
