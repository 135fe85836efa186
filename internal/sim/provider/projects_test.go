package provider_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// Two fleets (Pulumi projects) in one simulated account both have a
// cell-a: each stack's resources are kept by project, a qualified fault
// reaches only its project, a name one fleet holds is refused to the
// other as AWS would take it over silently, and deleting one fleet's
// resources leaves the other's.
func TestTwoProjectsShareOneAccount(t *testing.T) {
	dir := t.TempDir()
	prod := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a", Project: "prod"}, "us-east-1")
	stg := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a", Project: "staging"}, "us-east-1")

	pq := prod.Create(simtest.TQueue, "cell-a-jobs", simtest.PM("name", "prod-cell-a-jobs"))
	sq := stg.Create(simtest.TQueue, "cell-a-jobs", simtest.PM("name", "staging-cell-a-jobs"))
	for _, p := range []string{"prod", "staging"} {
		if _, err := os.Stat(filepath.Join(dir, store.ResourcesDir, p, "cell-a.json")); err != nil {
			t.Errorf("%s's cell-a has no shard of its own: %v", p, err)
		}
	}

	// The same account-unique name in the other fleet: SQS would hand back
	// the existing queue (CreateQueue is idempotent for equal attributes).
	_, err := stg.TryCreate(simtest.TQueue, "cell-a-dlq", simtest.PM("name", "prod-cell-a-jobs"))
	var ae *awsmodel.APIError
	if !errors.As(err, &ae) || ae.Code != awsmodel.HazardCode && ae.Code != "QueueNameExists" {
		t.Fatalf("a second fleet's queue with the first's name: %v", err)
	}

	c, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := c.Resources(store.Filter{Stack: store.QualifiedStack("prod", "cell-a")}); err != nil || len(rs) != 1 || rs[0].Project != "prod" || rs[0].ID != pq.ID {
		t.Fatalf("prod's cell-a = %+v, %v", rs, err)
	}
	if rs, err := c.Resources(store.Filter{Stack: "a"}); err != nil || len(rs) != 2 {
		t.Fatalf("cell-a of every project = %d, %v", len(rs), err)
	}

	// A fault for prod's cell-a never fails staging's.
	if _, err := c.AddFault(store.Fault{Stack: store.QualifiedStack("prod", "cell-a"), Op: store.OpUpdate, Always: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := stg.TryUpdate(sq, simtest.PM("name", "staging-cell-a-jobs", "delaySeconds", 5)); err != nil {
		t.Fatalf("staging's update met prod's fault: %v", err)
	}
	if _, err := prod.TryUpdate(pq, simtest.PM("name", "prod-cell-a-jobs", "delaySeconds", 5)); err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Fatalf("prod's update must meet its fault: %v", err)
	}
	if err := c.ClearFaults(); err != nil {
		t.Fatal(err)
	}

	// An out-of-band edit names the fleet's cell; unqualified it is
	// ambiguous across the account.
	if _, err := c.Edit("cell-a", "cell-a-jobs", "delaySeconds", "9"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("an unqualified edit must say it is ambiguous: %v", err)
	}
	if r, err := c.Edit(store.QualifiedStack("staging", "cell-a"), "cell-a-jobs", "delaySeconds", "9"); err != nil || r.Project != "staging" {
		t.Fatalf("staging's edit = %+v, %v", r, err)
	}

	if err := prod.Delete(pq); err != nil {
		t.Fatal(err)
	}
	if rs, _ := c.Resources(store.Filter{}); len(rs) != 1 || rs[0].Project != "staging" || rs[0].ID != sq.ID {
		t.Fatalf("after prod's delete the account holds %+v", rs)
	}
	if _, err := os.Stat(filepath.Join(dir, store.ResourcesDir, "prod", "cell-a.json")); !os.IsNotExist(err) {
		t.Errorf("prod's emptied shard was kept: %v", err)
	}
}

// A sim dir written before stacks were project-qualified
// (resources/<stack>.json) reads as before, with each resource's project
// from its URN; the first change moves every shard to its project's
// directory, and a move interrupted after writing the new shard (both
// files present) never doubles a resource.
func TestUnqualifiedShardsAreMovedToTheirProject(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixtureDir)); err != nil {
		t.Fatal(err)
	}
	legacyA := filepath.Join(dir, store.ResourcesDir, "cell-a.json")
	legacyData, err := os.ReadFile(legacyA)
	if err != nil {
		t.Fatal(err)
	}
	c, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.Resources(store.Filter{})
	if err != nil || len(before) != 20 {
		t.Fatalf("legacy resources = %d, %v", len(before), err)
	}
	for _, r := range before {
		if r.Project != "cells" {
			t.Fatalf("%s %s: project %q, want cells (from its URN)", r.Stack, r.Name, r.Project)
		}
	}
	if _, err := os.Stat(legacyA); err != nil {
		t.Fatalf("a read must not move anything: %v", err)
	}

	// A change of cell-a (any change under the exclusive lock) moves all.
	h := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a"}, "us-east-1")
	h.Create(simtest.TQueue, "cell-a-jobs", simtest.PM("name", "cells-cell-a-jobs"))
	for _, stack := range []string{"cell-a", "cell-b", "router"} {
		if _, err := os.Stat(filepath.Join(dir, store.ResourcesDir, stack+".json")); !os.IsNotExist(err) {
			t.Errorf("resources/%s.json outlived the move: %v", stack, err)
		}
		if _, err := os.Stat(filepath.Join(dir, store.ResourcesDir, "cells", stack+".json")); err != nil {
			t.Errorf("resources/cells/%s.json: %v", stack, err)
		}
	}
	after, err := c.Resources(store.Filter{})
	if err != nil || len(after) != 21 {
		t.Fatalf("after the move = %d resources, %v", len(after), err)
	}

	// The old file reappears beside the moved one (a move cut short): the
	// moved copy wins, nothing is doubled, and the next change removes it.
	if err := os.WriteFile(legacyA, legacyData, 0o644); err != nil {
		t.Fatal(err)
	}
	if rs, _ := c.Resources(store.Filter{}); len(rs) != 21 {
		t.Fatalf("with both files = %d resources, want 21", len(rs))
	}
	h.Create(simtest.TQueue, "cell-a-dlq", simtest.PM("name", "cells-cell-a-dlq"))
	if _, err := os.Stat(legacyA); !os.IsNotExist(err) {
		t.Errorf("the leftover file was not removed: %v", err)
	}
	if rs, _ := c.Resources(store.Filter{Stack: "cells/cell-a"}); len(rs) != 11 {
		t.Errorf("cell-a = %d resources, want 11 (9 moved, 2 new)", len(rs))
	}
}
