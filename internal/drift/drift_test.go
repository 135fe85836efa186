package drift

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/desired"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

const project = `name: cells
runtime: go
stackConfigDir: stacks
config:
  cells:image: registry.example.com/app:2.0.0
  cells:fleetBucket: example-fleet
  cells:fleetDomain: cells.example.com
  cells:hostedZoneId: Z0123456789ABCDEFGHIJ
  cells:natMode: single
  aws:region: us-east-1
`

// testFleet loads a four-cell fleet; stacks overrides stack files.
func testFleet(t *testing.T, stacks map[string]string) *fleet.Fleet {
	t.Helper()
	fsys := fstest.MapFS{"Pulumi.yaml": {Data: []byte(project)}}
	files := map[string]string{
		"cell-a": "config:\n  cells:index: 1\n",
		"cell-b": "config:\n  cells:index: 2\n",
		"cell-c": "config:\n  cells:index: 3\n  cells:desiredCount: 6\n",
		"cell-d": "config:\n  cells:index: 4\n  aws:region: us-west-2\n",
	}
	for k, v := range stacks {
		files[k] = v
	}
	var ids []string
	for id, data := range files {
		fsys["stacks/Pulumi."+id+".yaml"] = &fstest.MapFile{Data: []byte(data)}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fsys["stacks/waves.yaml"] = &fstest.MapFile{Data: []byte("waves:\n  - {name: all, cells: [" + strings.Join(ids, ", ") + "]}\n")}
	f, err := fleet.LoadFS(fsys, "/fleet")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Every key the fleet model knows — the cells: table, aws:region and the
// origin-verify secret — has exactly one class, and the table names no
// key the model does not know.
func TestEveryKeyHasAClass(t *testing.T) {
	known := append(spec.Names(), RegionKey, fleet.OriginVerifyKey)
	seen := map[string]bool{}
	for _, k := range Classes {
		if seen[k.Key] {
			t.Errorf("%s has two rows", k.Key)
		}
		seen[k.Key] = true
		if !slices.Contains([]Class{MustEqual, MustUnique, MayVary}, k.Class) {
			t.Errorf("%s: unknown class %q", k.Key, k.Class)
		}
		if k.Why == "" {
			t.Errorf("%s: say why it has its class", k.Key)
		}
		if !k.Derived && !slices.Contains(known, k.Key) {
			t.Errorf("%s has a class but the fleet model has no such key", k.Key)
		}
	}
	for _, k := range known {
		if !seen[k] {
			t.Errorf("cells key %s has no drift class: add it to Classes (internal/drift/classes.go) and docs/DRIFT.md", k)
		}
	}
	// Every non-secret key's value can be read from a cell.
	f := testFleet(t, nil)
	for _, k := range Classes {
		if k.Secret {
			continue
		}
		if _, err := value(f.Cells[0], k); err != nil {
			t.Error(err)
		}
	}
}

// docs/DRIFT.md documents the same table: a row per key with its class.
func TestDocListsEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../../docs/DRIFT.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Classes {
		row := fmt.Sprintf("| `%s` | %s |", k.Key, k.Class)
		if !bytes.Contains(doc, []byte(row)) {
			t.Errorf("docs/DRIFT.md has no row starting %q", row)
		}
	}
}

type fakeSecrets map[string]string // stack → digest ("" absent, "!" error)

func (f fakeSecrets) SecretDigest(_ context.Context, stack, _ string) (string, bool, error) {
	d, ok := f[stack]
	switch {
	case !ok || d == "":
		return "", false, nil
	case d == "!":
		return "", true, errors.New("wrong passphrase")
	}
	return d, true, nil
}

func TestSkewOutliersExceptionsAndSecrets(t *testing.T) {
	f := testFleet(t, map[string]string{
		"cell-b": "config:\n  cells:index: 2\n  cells:taskCpu: 1024\n  cells:taskMemory: 2048\n",
		"cell-c": "config:\n  cells:index: 3\n  cells:desiredCount: 6\n  cells:alarmP99LatencyMs: 5000\n",
	})
	pol, err := ParsePolicy("stacks/drift.yaml", []byte(`exceptions:
  - {cell: cell-c, key: alarmP99LatencyMs, reason: "batch tenants: slow by design"}
  - {cell: cell-a, key: image, reason: "canary"}
`), "cells", f.CellIDs())
	if err != nil {
		t.Fatal(err)
	}
	secrets := fakeSecrets{"cell-a": "d1", "cell-b": "d1", "cell-c": "d2", "cell-d": "!"}
	part := Skew(context.Background(), f, pol, SkewOptions{Secrets: secrets})

	got := map[string]Finding{}
	for _, fd := range part.Findings {
		got[fd.Cell+" "+fd.Key] = fd
	}
	if fd := got["cell-b taskCpu"]; fd.Status != StatusOutlier || fd.Old != "512" || fd.New != "1024" || fd.Class != MustEqual ||
		!strings.Contains(fd.Next, "remove cells:taskCpu from stacks/Pulumi.cell-b.yaml") || !strings.Contains(fd.Next, "stacks/drift.yaml") {
		t.Errorf("cell-b taskCpu: %+v", fd)
	}
	if _, ok := got["cell-b taskMemory"]; !ok {
		t.Error("taskMemory is must_equal too")
	}
	if _, ok := got["cell-c desiredCount"]; ok {
		t.Error("desiredCount may vary: shown, not a finding")
	}
	if _, ok := got["cell-d aws:region"]; ok {
		t.Error("the region may vary")
	}
	if _, ok := got["cell-c alarmP99LatencyMs"]; ok {
		t.Error("an excepted outlier is not a finding")
	}
	if len(part.Excepted) != 1 || part.Excepted[0].Detail != "batch tenants: slow by design" {
		t.Errorf("the exception and its reason are reported: %+v", part.Excepted)
	}
	// The secret: cell-c's digest differs from the majority; cell-d's
	// cannot be read (a finding, fail closed); its value never shows.
	if fd := got["cell-c originVerifySecret"]; fd.Status != StatusOutlier || fd.New != secretDiffers {
		t.Errorf("secret outlier: %+v", fd)
	}
	if fd := got["cell-d originVerifySecret"]; fd.Status != StatusUnreadable || !strings.Contains(fd.Next, "PULUMI_CONFIG_PASSPHRASE") {
		t.Errorf("an unreadable secret is a finding: %+v", fd)
	}
	for _, fd := range part.Findings {
		if strings.Contains(fd.Old+fd.New+fd.Detail, "d1") || strings.Contains(fd.Old+fd.New+fd.Detail, "d2") {
			t.Errorf("a digest reached the report: %+v", fd)
		}
	}
	if len(part.Findings) != 4 {
		t.Errorf("findings: %+v", part.Findings)
	}
	// cell-a's image exception is stale: it is on the baseline.
	if !slices.ContainsFunc(part.Notes, func(n string) bool { return strings.Contains(n, "stacks/drift.yaml:3") && strings.Contains(n, "stale") }) {
		t.Errorf("stale exception note: %q", part.Notes)
	}
	// The view: one row per key where a cell differs.
	rows := map[string]SkewRow{}
	for _, r := range part.Skew {
		rows[r.Key] = r
	}
	if r := rows["desiredCount"]; r.Values["cell-c"] != "6" || r.State["cell-c"] != "varies" || r.Baseline != "2" {
		t.Errorf("desiredCount row: %+v", r)
	}
	if r := rows["alarmP99LatencyMs"]; r.State["cell-c"] != "excepted" {
		t.Errorf("excepted row: %+v", r)
	}
	if _, ok := rows["image"]; ok {
		t.Error("no cell differs in image: no row")
	}
}

func TestSkewOnlyNamedCells(t *testing.T) {
	f := testFleet(t, map[string]string{"cell-b": "config:\n  cells:index: 2\n  cells:taskCpu: 1024\n  cells:taskMemory: 2048\n"})
	part := Skew(context.Background(), f, nil, SkewOptions{Cells: []string{"cell-a"}})
	if len(part.Findings) != 0 {
		t.Errorf("cell-b's outlier is not cell-a's finding: %+v", part.Findings)
	}
	if !slices.ContainsFunc(part.Notes, func(n string) bool { return strings.Contains(n, "not compared") }) {
		t.Errorf("without secrets access the secret key is said to be not compared: %q", part.Notes)
	}
}

func TestSkewMustUnique(t *testing.T) {
	// The loader refuses two cells with one index; the check is still
	// there for any fleet that reaches it (a hand-built model).
	f := testFleet(t, nil)
	f.Cells[1].Index = f.Cells[0].Index
	part := Skew(context.Background(), f, nil, SkewOptions{})
	n := 0
	for _, fd := range part.Findings {
		if fd.Status == StatusDuplicate {
			n++
			if fd.Cell != "cell-a" && fd.Cell != "cell-b" {
				t.Errorf("duplicate on the wrong cell: %+v", fd)
			}
		}
	}
	if n != 4 { // index and cidr, on both cells
		t.Errorf("want index and cidr duplicates on cell-a and cell-b: %+v", part.Findings)
	}
}

type fakeDeployed map[string]any // cell → spec.Cell, error or nil (not deployed)

func (f fakeDeployed) DeployedOutputs(_ context.Context, stack string) (map[string]any, error) {
	switch v := f[stack].(type) {
	case spec.Cell:
		enc, err := spec.EncodeDeployed(v)
		return map[string]any{spec.DeployedOutput: enc}, err
	case error:
		return nil, v
	case map[string]any:
		return v, nil
	}
	return nil, stackrun.ErrNotDeployed
}

func TestBehind(t *testing.T) {
	f := testFleet(t, nil)
	old := f.Cell("cell-b").Cell
	old.Image = "registry.example.com/app:1.9.0"
	old.DesiredCount = 3
	dep := fakeDeployed{
		"cell-a": f.Cell("cell-a").Cell,
		"cell-b": old,
		"cell-c": errors.New("backend unreachable"),
		"cell-d": map[string]any{"index": 4.0}, // deployed by a cellctl without deployedSpec
	}
	part := Behind(context.Background(), f, nil, dep, 2)
	by := map[string][]Finding{}
	for _, fd := range part.Findings {
		by[fd.Cell] = append(by[fd.Cell], fd)
	}
	if len(by["cell-a"]) != 0 {
		t.Errorf("cell-a runs the repo's state: %+v", by["cell-a"])
	}
	b := by["cell-b"]
	if len(b) != 2 || b[0].Key != "image" && b[1].Key != "image" {
		t.Fatalf("cell-b is one image behind and runs 3 tasks: %+v", b)
	}
	for _, fd := range b {
		if fd.Key == "image" && (fd.Old != "registry.example.com/app:1.9.0" || fd.New != "registry.example.com/app:2.0.0" || !strings.Contains(fd.Next, "cellctl deploy")) {
			t.Errorf("image old → new and next: %+v", fd)
		}
		if fd.Key == "desiredCount" && (fd.Old != "3" || fd.New != "2") {
			t.Errorf("desiredCount: %+v", fd)
		}
	}
	if img := part.Images["cell-b"]; img[0] != "registry.example.com/app:1.9.0" || img[1] != "registry.example.com/app:2.0.0" {
		t.Errorf("which cell runs which version: %v", part.Images)
	}
	if c := by["cell-c"]; len(c) != 1 || c[0].Status != StatusUnreadable || !strings.Contains(c[0].Detail, "backend unreachable") {
		t.Errorf("an unreadable cell is a finding, not current: %+v", c)
	}
	if d := by["cell-d"]; len(d) != 1 || d[0].Status != StatusUnreadable || !strings.Contains(d[0].Detail, "deployedSpec") {
		t.Errorf("a cell without deployedSpec is unknown: %+v", d)
	}
	none := Behind(context.Background(), f, []string{"cell-a"}, fakeDeployed{}, 1)
	if len(none.Findings) != 1 || none.Findings[0].Status != StatusNotDeployed || !strings.Contains(none.Findings[0].Next, "cellctl up cell-a") {
		t.Errorf("a cell never deployed: %+v", none.Findings)
	}
}

type fakeCloud struct {
	cells   map[string]*CellCloud
	errs    map[string]error
	delay   time.Duration
	running atomic.Int32
	mu      sync.Mutex
	peak    int32
}

func (f *fakeCloud) CloudDrift(ctx context.Context, stack string) (*CellCloud, error) {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	f.mu.Lock()
	f.peak = max(f.peak, n)
	f.mu.Unlock()
	time.Sleep(f.delay)
	if err := f.errs[stack]; err != nil {
		return nil, err
	}
	if c := f.cells[stack]; c != nil {
		return c, nil
	}
	return &CellCloud{}, nil
}

func svc(cell string, changes ...PropertyChange) CloudResource {
	state := ResourceSame
	if len(changes) > 0 {
		state = ResourceChanged
	}
	return CloudResource{URN: "urn:pulumi:" + cell + "::cells::cellctl:index:Cell$aws:ecs/service:Service::" + cell + "-service",
		Type: "aws:ecs/service:Service", Name: cell + "-service", State: state, Changes: changes}
}

func TestCloud(t *testing.T) {
	pol, err := ParsePolicy("stacks/drift.yaml", []byte(`cloud:
  ignore:
    - {type: aws:ecs/service:Service, property: desiredCount, reason: autoscaling}
`), "cells", fleetCells)
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeCloud{delay: 5 * time.Millisecond, cells: map[string]*CellCloud{
		"cell-a": {Resources: []CloudResource{svc("cell-a")}},
		"cell-b": {Resources: []CloudResource{
			svc("cell-b", PropertyChange{"desiredCount", "2", "7"}, PropertyChange{"tags.owner", "(absent)", "mallory"}),
			{URN: "u-db", Type: "aws:rds/cluster:Cluster", Name: "cell-b-db", State: ResourceNotChecked, Reason: "the read failed: AccessDenied"},
			{URN: "u-q", Type: "aws:sqs/queue:Queue", Name: "cell-b-queue", State: ResourceDeleted},
		}},
	}, errs: map[string]error{"cell-c": errors.New("provider crashed"), "cell-d": stackrun.ErrNotDeployed}}
	part := Cloud(context.Background(), fleetCells, fc, pol, 2)
	if fc.peak > 2 {
		t.Errorf("--parallel 2 ran %d refreshes at once", fc.peak)
	}
	var lines []string
	for _, fd := range part.Findings {
		lines = append(lines, fmt.Sprintf("%s %s %s %s %s→%s", fd.Cell, fd.Status, fd.Resource, fd.Property, fd.Old, fd.New))
		if fd.Next == "" {
			t.Errorf("a finding without a next step: %+v", fd)
		}
	}
	want := []string{
		"cell-b changed cell-b-service tags.owner (absent)→mallory",
		"cell-b not_checked cell-b-db  →",
		"cell-b deleted cell-b-queue  →",
		"cell-c not_checked   →",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if part.Ignored["cell-b"] != 1 {
		t.Errorf("the ignored desiredCount is counted: %v", part.Ignored)
	}
	if !slices.ContainsFunc(part.Notes, func(n string) bool { return strings.Contains(n, "cell-d is not deployed") }) {
		t.Errorf("notes: %q", part.Notes)
	}
}

func TestReportWorstFirstAndFailOn(t *testing.T) {
	f := testFleet(t, map[string]string{"cell-d": "config:\n  cells:index: 4\n  aws:region: us-west-2\n  cells:taskCpu: 1024\n  cells:taskMemory: 2048\n"})
	old := f.Cell("cell-c").Cell
	old.Image = "registry.example.com/app:1.9.0"
	fc := &fakeCloud{cells: map[string]*CellCloud{
		"cell-b": {Resources: []CloudResource{svc("cell-b", PropertyChange{"desiredCount", "2", "7"}, PropertyChange{"launchType", "FARGATE", "EC2"})}},
	}}
	rep, err := Run(context.Background(), Options{Fleet: f, Parallel: 2, Cloud: fc,
		Deployed: fakeDeployed{"cell-a": f.Cell("cell-a").Cell, "cell-b": f.Cell("cell-b").Cell, "cell-c": old, "cell-d": f.Cell("cell-d").Cell},
		Secrets:  fakeSecrets{}})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range rep.Cells {
		order = append(order, fmt.Sprintf("%s:%d", c.Cell, c.Total()))
	}
	// cell-d deployed its own task size, so only skew (2); cell-b has two
	// cloud changes (ranked first on the tie); cell-c is one image behind.
	if want := []string{"cell-b:2", "cell-d:2", "cell-c:1", "cell-a:0"}; !slices.Equal(order, want) {
		t.Errorf("worst first: %v, want %v", order, want)
	}
	if rep.Failing() != 5 {
		t.Errorf("failing: %d", rep.Failing())
	}
	rep.FailOn = []Kind{KindBehind}
	if rep.Failing() != 1 {
		t.Errorf("--fail-on behind counts only behind: %d", rep.Failing())
	}
	if _, err := Run(context.Background(), Options{Fleet: f, Cells: []string{"cell-z"}, Checks: []Kind{KindSkew}}); err == nil || !strings.Contains(err.Error(), "unknown cell") {
		t.Errorf("an unknown cell is an error: %v", err)
	}

	// What the views show of this report: internal/render/driftview.
	if got := rep.Cells[0].Cell; got != "cell-b" {
		t.Errorf("worst cell first: %s", got)
	}
	var desired bool
	for _, f := range rep.Findings {
		if f.Cell == "cell-b" && f.Kind == KindCloud && f.Property == "desiredCount" && f.Old == "2" && f.New == "7" && strings.HasPrefix(f.Next, "`cellctl up cell-b --refresh`") {
			desired = true
		}
	}
	if !desired {
		t.Errorf("cell-b's desiredCount 2 → 7 is not a cloud finding with its next step: %+v", rep.Findings)
	}
}

// A routed cell whose state is gone is a finding (exit 2) saying how to
// recover — never "not deployed: nothing to compare", never advice to
// create it again.
func TestRoutedCellWithoutStateIsAFinding(t *testing.T) {
	f, err := fleet.Load("../..") // the demo fleet: routing.json routes every cell
	if err != nil {
		t.Fatal(err)
	}
	if routedCells(f)["cell-d"] == 0 {
		t.Fatal("the test fleet's routing table must route cell-d")
	}
	fc := &fakeCloud{errs: map[string]error{"cell-d": stackrun.ErrNotDeployed}}
	dep := fakeDeployed{"cell-a": f.Cell("cell-a").Cell, "cell-b": f.Cell("cell-b").Cell, "cell-c": f.Cell("cell-c").Cell}
	rep, err := Run(context.Background(), Options{Fleet: f, Parallel: 2, Cloud: fc, Deployed: dep, Secrets: fakeSecrets{}, Checks: []Kind{KindBehind, KindCloud}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]bool{}
	for _, fd := range rep.Findings {
		if fd.Cell != "cell-d" {
			continue
		}
		if fd.Status != StatusMissingState || !strings.Contains(fd.Next, "restore") || strings.Contains(fd.Next, "creates it") {
			t.Errorf("%s finding %+v, want missing_state with how to restore", fd.Kind, fd)
		}
		kinds[fd.Kind] = true
	}
	if !kinds[KindBehind] || !kinds[KindCloud] || rep.Failing() == 0 {
		t.Errorf("both checks must find cell-d (found %v), failing %d", kinds, rep.Failing())
	}
}

// shippedRecords: rollout r-0123456789ab shipped app:2.1.0 to every cell
// (schema 0001) and kept it; rollout r-0123456789cd migrated the canary
// cell-a to 0002, breached and rolled it back (the old image passed the
// gate on 0002), and cell-b's migration then failed and its rollback
// failed too.
func shippedRecords(at time.Time) []*executor.Record {
	zero, one := 0, 1
	mig := func(code *int, v string, t time.Time) *executor.Migration {
		return &executor.Migration{Image: "app:2", Task: "arn:aws:ecs:us-east-1:1:task/c/t" + v, ExitCode: code, SchemaVersion: v, Stopped: t, LastLines: []string{"ERROR: boom"}}
	}
	cell := func(id string, st executor.CellState, m *executor.Migration) executor.CellRecord {
		return executor.CellRecord{Cell: id, State: st, After: executor.CellConfig{Image: "registry.example.com/app:2.1.0"}, RepoImage: "registry.example.com/app:2.0.0", Migration: m}
	}
	shipped := &executor.Record{ID: "r-0123456789ab", Kind: executor.KindRollout, State: executor.Complete, Started: at, Waves: []executor.WaveRecord{
		{Name: "one", State: executor.WaveDone, Cells: []executor.CellRecord{cell("cell-a", executor.CellStateUpdated, mig(&zero, "0001", at)),
			cell("cell-b", executor.CellStateUpdated, mig(&zero, "0001", at)), cell("cell-c", executor.CellStateUpdated, mig(&zero, "0001", at)),
			cell("cell-d", executor.CellStateUpdated, mig(&zero, "0001", at))}},
	}}
	halted := &executor.Record{ID: "r-0123456789cd", Kind: executor.KindRollout, State: executor.HaltedState, Started: at.Add(time.Hour), Waves: []executor.WaveRecord{
		{Name: "canary", State: executor.WaveRolledBack, Cells: []executor.CellRecord{cell("cell-a", executor.CellStateRolled, mig(&zero, "0002", at.Add(time.Hour)))},
			SchemaCheck: &executor.StepRecord{Cells: []string{"cell-a"}, State: executor.WaveDone, Decision: "pass"}},
		{Name: "rest", State: executor.WaveHalted, Cells: []executor.CellRecord{cell("cell-b", executor.CellRollbackFailed, mig(&one, "", at.Add(2*time.Hour)))}},
	}}
	return []*executor.Record{shipped, halted}
}

// After a halted rollout, --behind judges each cell's schema against what
// the fleet shipped and kept, never against the newest version any cell
// reported: the canary's 0002 was left by a rolled-back release (a note,
// not a target), the cells it never reached are current, and the cell
// whose migration failed without a clean rollback is a finding.
func TestSchemaBehindAfterAHaltedRollout(t *testing.T) {
	f := testFleet(t, nil)
	st := desired.Resolve(f, shippedRecords(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)))
	got, notes := SchemaBehind(st, f.CellIDs())
	if len(got) != 1 || got[0].Cell != "cell-b" {
		t.Fatalf("findings %+v: want cell-b only (cell-a keeps a rolled-back release's schema by design; cell-c and cell-d are on what was shipped)", got)
	}
	if b := got[0]; b.Key != SchemaKey || !strings.Contains(b.Detail, "last migration failed in rollout r-0123456789cd") || !strings.Contains(b.Detail, "ERROR: boom") || b.New != "0001" {
		t.Errorf("cell-b (half-migrated): %+v", b)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "cell-a's schema is 0002, left in place by rollout r-0123456789cd") || !strings.Contains(notes[0], "its release's is 0001, not a target") {
		t.Errorf("notes %q: want cell-a's schema shown as what it is", notes)
	}
}

// After a rollout shipped and kept an image the repository does not name,
// skew compares the cells with what the fleet shipped: no outlier. A cell
// the release did not reach is one, and the advice ships the release
// rather than editing a file that holds no image.
func TestSkewOfAShippedRelease(t *testing.T) {
	f := testFleet(t, nil)
	recs := shippedRecords(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	st := desired.Resolve(f, recs)
	part := Skew(context.Background(), st.Fleet, nil, SkewOptions{Desired: st})
	for _, fd := range part.Findings {
		if fd.Key == "image" {
			t.Errorf("image finding after a shipped release: %+v", fd)
		}
	}
	// cell-d never got the release.
	recs[0].Waves[0].Cells[3].State = executor.CellPending
	st = desired.Resolve(f, recs)
	part = Skew(context.Background(), st.Fleet, nil, SkewOptions{Desired: st})
	var images []Finding
	for _, fd := range part.Findings {
		if fd.Key == "image" {
			images = append(images, fd)
		}
	}
	if len(images) != 1 || images[0].Cell != "cell-d" || images[0].Old != "registry.example.com/app:2.1.0" ||
		!strings.Contains(images[0].Next, "`cellctl deploy --image registry.example.com/app:2.1.0` ships it") || strings.Contains(images[0].Next, "remove") {
		t.Errorf("image findings %+v: want cell-d, told to ship the release", images)
	}
}

// After an inconclusive halt the canary cell-a runs app:2.2.0 (schema
// 0002), held by the halt: behind does not tell `cellctl up cell-a` to
// take it back to 2.1.0 (the downgrade), its schema is its release's, and
// skew names it with the halt's way out instead of silence. Before, the
// desired state skipped the halted wave: behind advised the downgrade,
// skew found nothing, and the schema was "from a rollout that has not
// kept the cell".
func TestDriftOfACanaryHeldByAHalt(t *testing.T) {
	f := testFleet(t, nil)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	zero := 0
	cr := executor.CellRecord{Cell: "cell-a", State: executor.CellStateUpdated, After: executor.CellConfig{Image: "registry.example.com/app:2.2.0"},
		Before: &executor.CellConfig{Image: "registry.example.com/app:2.1.0"}, RepoImage: "registry.example.com/app:2.0.0",
		Migration: &executor.Migration{Image: "registry.example.com/app:2.2.0", Task: "arn:aws:ecs:us-east-1:1:task/c/t2", ExitCode: &zero, SchemaVersion: "0002", Stopped: at.Add(time.Hour)}}
	held := &executor.Record{ID: "r-0123456789ef", Kind: executor.KindRollout, State: executor.HaltedState, Started: at.Add(time.Hour), Waves: []executor.WaveRecord{
		{Name: "canary", State: executor.WaveHalted, Reason: "cell-a: 12 requests < min 100", Cells: []executor.CellRecord{cr}},
	}}
	st := desired.Resolve(f, []*executor.Record{shippedRecords(at)[0], held})

	dep := fakeDeployed{}
	for _, c := range st.Fleet.Cells {
		s := c.Cell
		if c.ID == "cell-a" {
			s.Image = "registry.example.com/app:2.2.0"
		}
		dep[c.ID] = s
	}
	if part := Behind(context.Background(), st.Fleet, nil, dep, 2); len(part.Findings) != 0 {
		t.Errorf("behind findings %+v: want none (cell-a runs what the halt holds it on)", part.Findings)
	}
	if got, _ := SchemaBehind(st, f.CellIDs()); len(got) != 0 {
		t.Errorf("schema findings %+v: want none (cell-a's 0002 is the schema of the release it runs)", got)
	}
	var images []Finding
	for _, fd := range Skew(context.Background(), st.Fleet, nil, SkewOptions{Desired: st}).Findings {
		if fd.Key == "image" {
			images = append(images, fd)
		}
	}
	if len(images) != 1 || images[0].Cell != "cell-a" || images[0].New != "registry.example.com/app:2.2.0" ||
		!strings.Contains(images[0].Next, "wave canary halted") || !strings.Contains(images[0].Next, "`cellctl deploy --image registry.example.com/app:2.2.0 --retry`") ||
		!strings.Contains(images[0].Next, "`cellctl deploy --image registry.example.com/app:2.1.0`") {
		t.Errorf("image findings %+v: want cell-a, with how to resolve the halt", images)
	}
}

// A rolled-back release's rollback command exited 0 but reported the
// version its migration left (it did not undo it), so the executor ran no
// schema check: cell-a's 0002 is past its release's 0001, unproven under
// the old image. That is its own finding (ahead), advising to check
// cell-a's database — never to migrate the other cells to 0002, nor cell-a
// down. Before, the command's exit 0 was taken as an undo: no finding.
func TestSchemaAheadOfItsRelease(t *testing.T) {
	f := testFleet(t, nil)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	recs := shippedRecords(at)
	zero := 0
	a := &recs[1].Waves[0].Cells[0]
	a.RollbackMigration = &executor.Migration{Image: "app:2", Task: "arn:aws:ecs:us-east-1:1:task/c/down", ExitCode: &zero, SchemaVersion: "0002", Stopped: at.Add(90 * time.Minute)}
	recs[1].Waves[0].SchemaCheck = nil
	recs[1].Waves = recs[1].Waves[:1]
	st := desired.Resolve(f, recs)
	got, notes := SchemaBehind(st, f.CellIDs())
	if len(got) != 1 || len(notes) != 0 {
		t.Fatalf("findings %+v, notes %q: want cell-a's only", got, notes)
	}
	b := got[0]
	if b.Cell != "cell-a" || b.Status != StatusAhead || b.Key != SchemaKey || b.Old != "0001" || b.New != "0002" ||
		!strings.Contains(b.Detail, "did not undo it") || !strings.Contains(b.Detail, "no schema check read the old image on it") ||
		!strings.Contains(b.Next, "check the database of cell-a") || !strings.Contains(b.Next, "not a target for the other cells") {
		t.Errorf("cell-a: %+v", b)
	}
}
