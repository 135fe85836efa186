package plan

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/isolation"
	"github.com/cellctl/cellctl/internal/outcome"
	offline "github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/internal/render"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const demo = "../../.."

// The demo fleet renders once for the tests that only read the render.
var (
	demoOnce   sync.Once
	demoReport *offline.Report
	demoErr    error
)

func demoRender(ctx context.Context, f *fleet.Fleet, opts offline.Options) (*offline.Report, error) {
	demoOnce.Do(func() { demoReport, demoErr = offline.Render(ctx, f, opts) })
	return demoReport, demoErr
}

func loadDemo(t *testing.T) *fleet.Fleet {
	t.Helper()
	fl, err := fleet.Load(demo)
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

func run(t *testing.T, fl *fleet.Fleet, format string, renderFleet func(context.Context, *fleet.Fleet, offline.Options) (*offline.Report, error)) (string, error) {
	t.Helper()
	io, _, out, _ := iostreams.Test()
	view, err := render.Pick(format, planTable, planJSON)
	if err != nil {
		t.Fatal(err)
	}
	err = planRun(context.Background(), &PlanOptions{IO: io, View: view, Parallel: 2, Render: renderFleet,
		Backend: func(string) string { return "s3://acme-cellctl-state" },
		Fleet:   func() (*fleet.Fleet, error) { return fl, nil }})
	return out.String(), err
}

// ledgerSection is the ledger part of the plan table.
func ledgerSection(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, "\nshared parts: ")
	if i < 0 {
		t.Fatalf("no ledger in:\n%s", out)
	}
	return out[i+1:]
}

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

// `plan` on the demo fleet prints the shared-parts ledger, every part
// declared: the router (100% of tenants, request path), the origin-verify
// secret, the fleet bucket, the zones, the region, the account; the state
// backend and the rest of the control plane.
func TestPlanPrintsTheDemoLedger(t *testing.T) {
	fl := loadDemo(t)
	out, err := run(t, fl, render.FormatTable, demoRender)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	golden(t, "demo-ledger.txt", ledgerSection(t, out))

	js, err := run(t, fl, render.FormatJSON, demoRender)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Ledger *isolation.Ledger `json:"ledger"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.Ledger == nil {
		t.Fatalf("plan -o json has no ledger: %v\n%.400s", err, js)
	}
	l := doc.Ledger
	if !l.OK || l.Cells != 4 || l.File != "stacks/shared.yaml" || len(l.Undeclared) != 0 || len(l.Stale) != 0 {
		t.Fatalf("ledger: ok %v, cells %d, undeclared %+v, stale %+v", l.OK, l.Cells, l.Undeclared, l.Stale)
	}
	part := func(kind, id string) isolation.Part {
		for _, p := range l.Parts {
			if p.Kind == kind && p.ID == id {
				return p
			}
		}
		t.Fatalf("the demo ledger has no %s %s", kind, id)
		return isolation.Part{}
	}
	for _, c := range []struct {
		kind, id string
		plane    isolation.Plane
		cells    int
		share    float64
	}{
		{isolation.KindDistribution, "router-cdn", isolation.RequestPath, 4, 1},
		{isolation.KindEdgeFunction, "router-edge", isolation.RequestPath, 4, 1},
		{isolation.KindSecret, "cells:originVerifySecret", isolation.RequestPath, 4, 1},
		{isolation.KindBucket, "example-cells-fleet", isolation.RequestPath, 4, 1},
		{isolation.KindDNSZone, "Z0123456789ABCDEFGHIJ", isolation.RequestPath, 4, 1},
		{isolation.KindAccount, isolation.CurrentAccount, isolation.RequestPath, 4, 1},
		// cell-a, b, c run there, and cell-d reads the fleet bucket there.
		{isolation.KindRegion, "us-east-1", isolation.RequestPath, 4, 1},
		// cell-d's us-west-2 has its own prefix list.
		{isolation.KindPrefixList, "pl-3b927c52", isolation.RequestPath, 3, 0.75},
		{isolation.KindStateBackend, isolation.BackendID, isolation.ControlPlane, 4, 1},
		{isolation.KindImageRepository, "registry.example.com/shop/api", isolation.ControlPlane, 4, 1},
	} {
		p := part(c.kind, c.id)
		if p.Plane != c.plane || len(p.Cells) != c.cells || p.TenantShare != c.share || p.Declared == nil || p.Why == "" {
			t.Errorf("%s %s: plane %s, cells %v, share %v, declared %v", c.kind, c.id, p.Plane, p.Cells, p.TenantShare, p.Declared)
		}
	}
	if p := part(isolation.KindStateBackend, isolation.BackendID); p.Detail != "s3://acme-cellctl-state" {
		t.Errorf("backend detail = %q", p.Detail)
	}
	if strings.Contains(js, offline.PlaceholderSecret) {
		t.Error("plan -o json shows the origin-verify secret's value")
	}
}

const eventsTopic = "arn:aws:sns:us-east-1:123456789012:fleet-events"

// withTopic renders the fleet, then gives cells' task definitions an
// EVENTS_TOPIC naming one SNS topic outside the fleet's stacks — a new
// dependency two cells now share.
func withTopic(cells ...string) func(context.Context, *fleet.Fleet, offline.Options) (*offline.Report, error) {
	return func(ctx context.Context, f *fleet.Fleet, opts offline.Options) (*offline.Report, error) {
		r, err := offline.Render(ctx, f, opts)
		if err != nil {
			return nil, err
		}
		for _, s := range r.Stacks {
			if !contains(cells, s.Name) {
				continue
			}
			for _, res := range s.Recorded() {
				if res.Type != "aws:ecs/taskDefinition:TaskDefinition" {
					continue
				}
				var defs []map[string]any
				if err := json.Unmarshal([]byte(res.Inputs["containerDefinitions"].StringValue()), &defs); err != nil {
					return nil, err
				}
				for _, d := range defs {
					env, _ := d["environment"].([]any)
					d["environment"] = append(env, map[string]any{"name": "EVENTS_TOPIC", "value": eventsTopic})
				}
				b, _ := json.Marshal(defs)
				res.Inputs["containerDefinitions"] = resource.NewStringProperty(string(b))
			}
		}
		return r, nil
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// copyDemo writes the demo fleet's configuration into a new directory,
// with extra appended to its stacks/shared.yaml.
func copyDemo(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "stacks"), 0o755); err != nil {
		t.Fatal(err)
	}
	cp := func(name, suffix string) {
		data, err := os.ReadFile(filepath.Join(demo, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(data, suffix...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cp("Pulumi.yaml", "")
	entries, err := os.ReadDir(filepath.Join(demo, "stacks"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case n == isolation.SharedFile:
			cp(filepath.Join("stacks", n), extra)
		case strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".json"):
			cp(filepath.Join("stacks", n), "")
		}
	}
	return dir
}

// A resource two cells share that stacks/shared.yaml does not declare is
// a finding: plan prints it with the entry that would declare it and
// exits 2; declaring it clears it. One cell naming the topic is that
// cell's business, not a shared part.
func TestPlanUndeclaredSharedDependencyIsAFinding(t *testing.T) {
	out, err := run(t, loadDemo(t), render.FormatTable, withTopic("cell-a", "cell-b"))
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) || !strings.Contains(err.Error(), "shared parts: 1 not declared in stacks/shared.yaml (sns-topic "+eventsTopic+")") {
		t.Fatalf("err = %v\n%s", err, out)
	}
	ledger := ledgerSection(t, out)
	for _, want := range []string{
		"shared parts: 1 not declared in stacks/shared.yaml",
		"  - [undeclared] sns-topic " + eventsTopic + ": cell-a, cell-b depend on it (request-path, 50.0% of tenants, first used by cell-a/cell-a-",
		"    - kind: sns-topic\n      id: " + eventsTopic + "\n",
	} {
		if !strings.Contains(ledger, want) {
			t.Errorf("the ledger lacks %q:\n%s", want, ledger)
		}
	}

	declared := copyDemo(t, "  - kind: sns-topic\n    id: "+eventsTopic+"\n    plane: control-plane\n    why: order events for the nightly export\n")
	fl, err := fleet.Load(declared)
	if err != nil {
		t.Fatal(err)
	}
	out, err = run(t, fl, render.FormatTable, withTopic("cell-a", "cell-b"))
	if err != nil || !strings.Contains(out, "shared parts: ok") {
		t.Fatalf("declared, err = %v:\n%s", err, out)
	}
	if !strings.Contains(out, "sns-topic         "+eventsTopic) || !strings.Contains(out, "control-plane  2/4    50.0%") {
		t.Errorf("the declared topic's row:\n%s", ledgerSection(t, out))
	}

	// The declaration outlives the dependency: a note, not a failure.
	out, err = run(t, fl, render.FormatTable, withTopic("cell-a"))
	if err != nil || !strings.Contains(out, "note: stacks/shared.yaml:") || !strings.Contains(out, "sns-topic "+eventsTopic+" is declared but no longer shared") {
		t.Fatalf("stale declaration: err %v\n%s", err, out)
	}
}

// The same rule for a shared part set through the fleet's configuration:
// one existing certificate (cells:certificateArn) for three cells'
// ALBs is a shared certificate, undeclared.
func TestPlanSharedCertificateFromConfigIsAFinding(t *testing.T) {
	fl := loadDemo(t)
	const cert = "arn:aws:acm:us-east-1:123456789012:certificate/11111111-2222-3333-4444-555555555555"
	for _, id := range []string{"cell-a", "cell-b", "cell-c"} {
		fl.Cell(id).CertificateArn = cert
	}
	out, err := run(t, fl, render.FormatTable, nil)
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) || !strings.Contains(out, "[undeclared] certificate "+cert+": cell-a, cell-b, cell-c depend on it (request-path, 75.0% of tenants") {
		t.Fatalf("err = %v\n%s", err, out)
	}
}

// A render of some stacks cannot see what cells share: the ledger is not
// derived, and says how to get it.
func TestPlanOfSomeStacksSkipsTheLedger(t *testing.T) {
	fl := loadDemo(t)
	io, _, out, _ := iostreams.Test()
	view, _ := render.Pick(render.FormatTable, planTable, planJSON)
	err := planRun(context.Background(), &PlanOptions{IO: io, View: view, Parallel: 2, Stacks: []string{"cell-a"},
		Fleet: func() (*fleet.Fleet, error) { return fl, nil }})
	if err != nil || !strings.Contains(out.String(), "shared parts: not derived (the ledger needs the whole fleet") {
		t.Fatalf("err %v\n%s", err, out.String())
	}
}

// README.md shows the demo's ledger as plan prints it (the golden file).
func TestREADMEShowsTheDemoLedger(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(demo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "demo-ledger.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "$ cellctl plan\n…\n"+string(want)+"```") {
		t.Errorf("README.md's \"Shared parts: the ledger\" does not show testdata/demo-ledger.txt; paste it after `$ cellctl plan`")
	}
}

// A fleet without stacks/shared.yaml declares nothing: every shared part
// is a finding, and the hint is a whole file to start from.
func TestPlanWithoutADeclarationFileListsEveryPart(t *testing.T) {
	dir := copyDemo(t, "")
	if err := os.Remove(filepath.Join(dir, "stacks", isolation.SharedFile)); err != nil {
		t.Fatal(err)
	}
	fl, err := fleet.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, fl, render.FormatTable, demoRender)
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) || !strings.Contains(out, "the fleet has no stacks/shared.yaml to declare them") ||
		!strings.Contains(out, "or declare it in stacks/shared.yaml:\n    shared:\n    - kind: ") {
		t.Fatalf("err %v\n%s", err, ledgerSection(t, out))
	}
}
