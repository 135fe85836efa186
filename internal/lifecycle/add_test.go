package lifecycle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/desired"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/waves/executor"
)

func TestAddToWaveKeepsTheRestOfTheFile(t *testing.T) {
	in := "# comment\ndefaults:\n  bake: 10m\nwaves:\n  - name: canary\n    cells: [cell-a]   # first\n  - name: last\n    cells:\n      - cell-b\n      - cell-c  # two\n# tail\n"
	out, wave, err := addToWave([]byte(in), "", "cell-e")
	if err != nil || wave != "last" {
		t.Fatal(err, wave)
	}
	want := strings.Replace(in, "      - cell-c  # two\n", "      - cell-c  # two\n      - cell-e\n", 1)
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	out, wave, err = addToWave([]byte(in), "canary", "cell-e")
	if err != nil || wave != "canary" {
		t.Fatal(err, wave)
	}
	if want := strings.Replace(in, "[cell-a]", "[cell-a, cell-e]", 1); string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	if _, _, err := addToWave([]byte(in), "wave-9", "cell-e"); err == nil || err.Error() != `no wave "wave-9" (waves: canary, last)` {
		t.Fatalf("unknown wave: %v", err)
	}
}

func TestNextIDAndIndex(t *testing.T) {
	for n, want := range map[int]string{0: "a", 25: "z", 26: "aa", 27: "ab", 701: "zz", 702: "aaa"} {
		if got := letters(n); got != want {
			t.Errorf("letters(%d) = %s, want %s", n, got, want)
		}
	}
	fl, err := fleet.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	if id := nextID(fl, fl.Routing); id != "cell-e" {
		t.Errorf("next id %s", id)
	}
	if i, err := pickIndex(fl, -1); err != nil || i != 5 {
		t.Errorf("next index %d %v", i, err)
	}
	if _, err := pickIndex(fl, 4); err == nil || err.Error() != "--index 4 is cell-d's (VPC 10.4.0.0/16); free indexes: 5, 6, 7, 8, 9 …" {
		t.Errorf("taken index: %v", err)
	}
}

// TestAddCellOrder: files, validation, the cell's up, then the table and
// the router; the new cell gets its share with the fewest moves.
func TestAddCellOrder(t *testing.T) {
	h := newHarness(t, 1)
	rep, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: router.TakeAuto})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	if got := strings.Join(h.eng.runs(), ";"); got != "up cell-e;up router" {
		t.Fatalf("runs %q, want the cell then the router", got)
	}
	data, err := os.ReadFile(filepath.Join(h.dir, "stacks", "Pulumi.cell-e.yaml"))
	if err != nil || !strings.Contains(string(data), "  cells:index: 5\n") {
		t.Fatalf("stack file: %v\n%s", err, data)
	}
	waves, _ := os.ReadFile(filepath.Join(h.dir, "stacks", "waves.yaml"))
	if !strings.Contains(string(waves), "cells: [cell-c, cell-d, cell-e]") {
		t.Fatalf("waves.yaml:\n%s", waves)
	}
	tb := h.table(t)
	tr := rep.Transitions[0]
	if owned(tb, "cell-e") != tr.MovedBuckets || tr.MovedBuckets != tr.LowerBound || tr.MovedBuckets == 0 || h.eng.deployed != 2 {
		t.Fatalf("cell-e owns %d, moved %d, bound %d, router at %d", owned(tb, "cell-e"), tr.MovedBuckets, tr.LowerBound, h.eng.deployed)
	}
}

// TestAddCellInAnotherAccount: --account and --role (a name, taken in the
// account) write the provider's own aws:assumeRole and cells:account into
// the new stack file, which the fleet then loads as a cell in that account.
func TestAddCellInAnotherAccount(t *testing.T) {
	h := newHarness(t, 1)
	h.eng.fail["up cell-e"] = errors.New("IAM Role cannot be assumed")
	rep, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: router.TakeAuto, Account: "333344445555", Role: "cellctl-deploy", ExternalID: "fleet-7",
		HostedZoneID: "Z0C33334444555CELLS0", FleetDomain: "c.cells.example.com"})
	if err == nil || !strings.Contains(err.Error(), "deploying cell-e failed") {
		t.Fatalf("the first up fails: %v", err)
	}
	const role = "arn:aws:iam::333344445555:role/cellctl-deploy"
	if rep.Placement == nil || rep.Placement.Account != "333344445555" || rep.Placement.RoleARN != role {
		t.Errorf("placement = %+v", rep.Placement)
	}
	fl, err := fleet.Load(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	a := fl.Cell("cell-e").Access()
	if a.Account != "333344445555" || a.Role.RoleARN != role || a.Role.ExternalID != "fleet-7" {
		t.Errorf("cell-e's access as loaded = %+v", a)
	}
	if c := fl.Cell("cell-e"); c.HostedZoneID != "Z0C33334444555CELLS0" || c.DNSName() != "cell-e.c.cells.example.com" {
		t.Errorf("cell-e's zone %s, name %s", c.HostedZoneID, c.DNSName())
	}
	if !strings.Contains(h.log.String(), "in account 333344445555 through "+role) {
		t.Errorf("the add must say where the cell lives:\n%s", h.log)
	}
	// Continuing the add in another account is refused; as written, it
	// continues.
	delete(h.eng.fail, "up cell-e")
	_, err = AddCell(context.Background(), h.env, AddOptions{ID: "cell-e", Index: -1, Take: router.TakeAuto, Account: "444455556666"})
	if err == nil || !strings.Contains(err.Error(), "stacks/Pulumi.cell-e.yaml exists in account 333344445555") {
		t.Errorf("continuing cell-e's add in another account: %v", err)
	}
	if _, err := AddCell(context.Background(), h.env, AddOptions{ID: "cell-e", Index: -1, Take: router.TakeAuto}); err != nil {
		t.Errorf("continuing: %v", err)
	}
}

// TestAddCellUpFailureLeavesNoTraffic: the cell's up fails; the table is
// untouched, the router not run, and the error says how to continue or
// undo. Running the command again continues with the files written.
func TestAddCellUpFailureLeavesNoTraffic(t *testing.T) {
	h := newHarness(t, 1)
	h.eng.fail["up cell-e"] = errors.New("quota exceeded")
	before := h.tableBytes(t)
	_, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: router.TakeAuto})
	want := "cell-e has no traffic (it is not in stacks/routing.json). To continue, fix the cause and run `cellctl cell add cell-e` again; " +
		"to undo, `cellctl destroy cell-e --release-protected`, then delete stacks/Pulumi.cell-e.yaml and remove cell-e from stacks/waves.yaml"
	if err == nil || !strings.Contains(err.Error(), "deploying cell-e failed") || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("error: %v", err)
	}
	if h.tableBytes(t) != before || strings.Contains(strings.Join(h.eng.runs(), ";"), "router") {
		t.Fatal("a failed cell up must leave the routing and the router alone")
	}
	delete(h.eng.fail, "up cell-e")
	if _, err := AddCell(context.Background(), h.env, AddOptions{ID: "cell-e", Index: -1, Take: router.TakeAuto}); err != nil {
		t.Fatalf("continue: %v\n%s", err, h.log)
	}
	if !strings.Contains(h.log.String(), "stacks/Pulumi.cell-e.yaml exists and cell-e is not routed yet: continuing the add") {
		t.Fatalf("log:\n%s", h.log)
	}
	if owned(h.table(t), "cell-e") == 0 {
		t.Fatal("the continued add gave cell-e no buckets")
	}
}

func TestAddCellRefusals(t *testing.T) {
	cases := []struct {
		opts AddOptions
		want string
	}{
		{AddOptions{ID: "cell-d", Index: -1, Take: router.TakeAuto}, `cannot add "cell-d": it is already in the routing table (active, 256 buckets); undrain it instead`},
		{AddOptions{ID: "Cell_E", Index: -1, Take: router.TakeAuto}, `cannot add "Cell_E": `},
		{AddOptions{Index: 2, Take: router.TakeAuto}, `cannot add "cell-e": --index 2 is cell-b's (VPC 10.2.0.0/16); free indexes: 5, 6, 7, 8, 9 …`},
		{AddOptions{Index: -1, Wave: "nope", Take: router.TakeAuto}, `cannot add "cell-e" to a wave of stacks/waves.yaml: no wave "nope" (waves: canary, wave-1, wave-2)`},
		{AddOptions{Index: -1, Take: 2000}, `cannot add "cell-e": take must be "auto" or a number of buckets from 0 to 1024; got 2000`},
		{AddOptions{Index: -1, Take: router.TakeAuto, Account: "3333"}, `cannot add "cell-e": --account "3333": must be a 12-digit AWS account id`},
		{AddOptions{Index: -1, Take: router.TakeAuto, Role: "cellctl-deploy"}, `cannot add "cell-e": --role "cellctl-deploy" is a role name: give --account too`},
		{AddOptions{Index: -1, Take: router.TakeAuto, Account: "333344445555", Role: "arn:aws:iam::222233334444:role/cellctl-deploy"},
			`cannot add "cell-e": --role arn:aws:iam::222233334444:role/cellctl-deploy is in account 222233334444, but --account says 333344445555`},
		{AddOptions{Index: -1, Take: router.TakeAuto, Account: "333344445555", ExternalID: "x-1"}, `cannot add "cell-e": --external-id is the id a role's trust policy requires: give --role too`},
		{AddOptions{Index: -1, Take: router.TakeAuto, HostedZoneID: "Z0C33334444555CELLS0"}, `cannot add "cell-e": --hosted-zone-id and --fleet-domain go together`},
	}
	for _, tc := range cases {
		h := newHarness(t, 1)
		_, err := AddCell(context.Background(), h.env, tc.opts)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v:\n got %v\nwant %s", tc.opts, err, tc.want)
		}
		if _, serr := os.Stat(filepath.Join(h.dir, "stacks", "Pulumi.cell-e.yaml")); serr == nil {
			t.Errorf("%+v: a refused add wrote the stack file", tc.opts)
		}
		if len(h.eng.runs()) != 0 {
			t.Errorf("%+v: a refused add ran %v", tc.opts, h.eng.runs())
		}
	}
}

func TestAddCellDryRun(t *testing.T) {
	h := newHarness(t, 1)
	before := treeSum(t, h.dir)
	rep, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: 100, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Transitions[0].MovedBuckets != 100 || rep.Cell != "cell-e" || rep.Wave != "wave-2" {
		t.Fatalf("%+v", rep)
	}
	// The dry run reads what the run's preflights read (the router's
	// table version) and changes nothing.
	if runs := h.eng.runs(); len(runs) != 0 || slices.ContainsFunc(h.eng.calls, func(c string) bool { return strings.HasPrefix(c, "secret ") }) {
		t.Fatalf("a dry run ran the engine: %v", h.eng.calls)
	}
	if after := treeSum(t, h.dir); after != before {
		t.Fatal("a dry run changed the repository")
	}
}

// TestAddCellRefusedByAPreflightWritesNothing: a preflight refusal (here
// the quota check, as on a region with no VPC left) comes before the
// first file is written — the repository is byte-identical, the engine
// ran nothing — and the dry run refuses the same way, with the same
// error, checking the same fleet.
func TestAddCellRefusedByAPreflightWritesNothing(t *testing.T) {
	refusal := errors.New("refusing to create cell-e: vpc/L-F678F1CE in us-east-1: 5 used + 1 for the new cells = 6 > limit 5")
	var msgs []string
	for _, dry := range []bool{false, true} {
		h := newHarness(t, 1)
		h.eng.gone = map[string]bool{"cell-e": true} // a new cell: never deployed
		var checked []string
		h.env.QuotaCheck = func(_ context.Context, fl *fleet.Fleet, cells []string) error {
			if c := fl.Cell("cell-e"); c == nil || c.Index != 5 {
				t.Errorf("the quota check saw a fleet without the new cell-e: %v", fl.CellIDs())
			}
			checked = append(checked, cells...)
			return refusal
		}
		before := treeSum(t, h.dir)
		_, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: router.TakeAuto, DryRun: dry})
		if !errors.Is(err, refusal) || !strings.HasPrefix(err.Error(), "cannot add cell-e, nothing was written: ") {
			t.Fatalf("dry run %v: err = %v", dry, err)
		}
		msgs = append(msgs, err.Error())
		if !slices.Equal(checked, []string{"cell-e"}) {
			t.Errorf("dry run %v: quota checked for %v, want cell-e", dry, checked)
		}
		if after := treeSum(t, h.dir); after != before {
			t.Errorf("dry run %v: a refused add changed the repository", dry)
		}
		if _, serr := os.Stat(filepath.Join(h.dir, "stacks", "Pulumi.cell-e.yaml")); serr == nil {
			t.Errorf("dry run %v: a refused add wrote the stack file", dry)
		}
		if runs := h.eng.runs(); len(runs) != 0 || slices.ContainsFunc(h.eng.calls, func(c string) bool { return strings.HasPrefix(c, "secret ") }) {
			t.Errorf("dry run %v: a refused add ran the engine: %v", dry, h.eng.calls)
		}
	}
	if msgs[0] != msgs[1] {
		t.Errorf("the dry run's refusal differs from the run's:\n%s\n%s", msgs[1], msgs[0])
	}
}

// TestAddCellInvalidFleetWritesNothing: a new cell that makes the fleet
// invalid is refused from the fleet loaded with it as data, naming the
// file and line, before anything is written.
func TestAddCellInvalidFleetWritesNothing(t *testing.T) {
	h := newHarness(t, 1)
	h.env.LoadWith = func(files map[string][]byte) (*fleet.Fleet, error) {
		if _, ok := files["stacks/Pulumi.cell-e.yaml"]; !ok {
			t.Errorf("the fleet was loaded without the new stack file: %v", files)
		}
		return nil, errors.New("stacks/Pulumi.cell-e.yaml:3: cells:index: refused by the test")
	}
	before := treeSum(t, h.dir)
	_, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: router.TakeAuto})
	if err == nil || !strings.Contains(err.Error(), "the fleet is not valid with cell-e, nothing was written:\nstacks/Pulumi.cell-e.yaml:3") {
		t.Fatalf("err = %v", err)
	}
	if treeSum(t, h.dir) != before || len(h.eng.calls) != 0 {
		t.Fatalf("an invalid add changed the repository or used the engine: %v", h.eng.calls)
	}
}

// treeSum hashes every file of dir (path, mode and contents).
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	sum := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(sum, "%s %v\n", rel, info.Mode())
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(sum, "%d %x\n", len(data), sha256.Sum256(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(sum.Sum(nil))
}

// TestAddCellDryRunIsThePlanTheRunExecutes: the dry run's steps are the
// run's, in the same order (files, deploy, buckets), with the same index,
// wave and bucket count the run then uses.
func TestAddCellDryRunIsThePlanTheRunExecutes(t *testing.T) {
	h := newHarness(t, 1)
	dry, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: 100, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	run, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: 100})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	want := []string{
		"validated the fleet with cell-e (stacks/Pulumi.cell-e.yaml and the stacks/waves.yaml edit, not written yet)",
		"preflight passed for cell-e: the offline render and audits of the fleet with it, access to its account",
		"cell-e gets registry.example.com/shop/api:1.4.2",
		"would write stacks/Pulumi.cell-e.yaml (cells:index 5: VPC 10.5.0.0/16) and add cell-e to wave \"wave-2\" of stacks/waves.yaml",
		"would deploy cell-e (cellctl up cell-e)",
		"would give cell-e 100 buckets (9.8% of tenants) and publish the router (table version 2)",
	}
	if !reflect.DeepEqual(dry.Steps, want) {
		t.Fatalf("dry run steps:\n%s\nwant:\n%s", strings.Join(dry.Steps, "\n"), strings.Join(want, "\n"))
	}
	done := strings.Join(run.Steps, "\n")
	for _, s := range []string{
		"wrote stacks/Pulumi.cell-e.yaml (cells:index 5: VPC 10.5.0.0/16) and added cell-e to wave \"wave-2\" of stacks/waves.yaml",
		"deploying cell-e (cellctl up cell-e)",
		"cell-e takes 100 buckets (9.8% of tenants); the router serves table version 2",
	} {
		if !strings.Contains(done, s) {
			t.Errorf("the run did not do %q:\n%s", s, done)
		}
	}
	if dry.Index != run.Index || dry.Wave != run.Wave || dry.Transitions[0].MovedBuckets != run.Transitions[len(run.Transitions)-1].MovedBuckets {
		t.Errorf("dry run %+v, run %+v", dry, run)
	}
}

// fakeMigrator plans a migration from the image a cell migrates to and
// runs it through the engine's call log, exiting with exit.
type fakeMigrator struct {
	eng  *fakeEngine
	exit int
}

func (m *fakeMigrator) Plan(req executor.MigrationRequest) executor.MigrationPlan {
	return executor.MigrationPlan{Image: req.To.Image, Command: []string{"/app/migrate", "up"}}
}

func (m *fakeMigrator) Migrate(_ context.Context, req executor.MigrationRequest, started func(string)) (executor.Migration, error) {
	m.eng.mu.Lock()
	m.eng.calls = append(m.eng.calls, "run migrate "+req.Cell+" "+req.To.Image)
	m.eng.mu.Unlock()
	started("arn:aws:ecs:us-east-1:123456789012:task/cells-cell-e/0123abcd")
	exit := m.exit
	return executor.Migration{Image: req.To.Image, Command: []string{"/app/migrate", "up"}, Task: "arn:aws:ecs:us-east-1:123456789012:task/cells-cell-e/0123abcd",
		ExitCode: &exit, SchemaVersion: "1.5.0", LastLines: []string{"schema_version=1.5.0"}}, nil
}

// migratingHarness is a harness whose fleet shipped 1.5.0 (the desired
// state gives the new cell that image, as internal/desired does for a
// cell no rollout decided) and whose cells run migrations.
func migratingHarness(t *testing.T, exit int) (*harness, *[]*executor.Record) {
	h := newHarness(t, 1)
	h.eng.gone = map[string]bool{"cell-e": true}
	const shipped = "registry.example.com/shop/api:1.5.0"
	desired := func(fl *fleet.Fleet, err error) (*fleet.Fleet, error) {
		if err != nil {
			return nil, err
		}
		for _, c := range fl.Cells {
			c.Image = shipped
		}
		return fl, nil
	}
	h.env.Load = func() (*fleet.Fleet, error) { return desired(fleet.Load(h.dir)) }
	h.env.LoadWith = func(files map[string][]byte) (*fleet.Fleet, error) { return desired(fleet.LoadWith(h.dir, files)) }
	h.env.Migrator = func(*fleet.Fleet, Engine) executor.Migrator { return &fakeMigrator{eng: h.eng, exit: exit} }
	// The fleet's rollout migrated cell-a (and the others) to 1.5.0.
	exit0 := 0
	shippedRec := &executor.Record{ID: "r-0123456789ab", State: executor.Complete, Waves: []executor.WaveRecord{{Name: "canary", State: executor.WaveDone,
		Cells: []executor.CellRecord{{Cell: "cell-a", State: executor.CellStateUpdated, After: executor.CellConfig{Image: shipped},
			Migration: &executor.Migration{Task: "arn:aws:ecs:us-east-1:123456789012:task/cells-cell-a/1", ExitCode: &exit0, SchemaVersion: "1.5.0"}}}}}}
	h.env.Records = func(context.Context) ([]*executor.Record, error) { return []*executor.Record{shippedRec}, nil }
	var recs []*executor.Record
	h.env.Record = func(_ context.Context, rec *executor.Record) error {
		h.eng.mu.Lock()
		h.eng.calls = append(h.eng.calls, "run record "+string(rec.State))
		h.eng.mu.Unlock()
		recs = append(recs, rec)
		return nil
	}
	return h, &recs
}

// TestAddCellGetsTheShippedReleaseAndItsSchema: the new cell runs what
// the fleet shipped (the desired state's image, said in a step), and its
// database is migrated from that image — and the migration recorded, so
// status and the desired state see the cell's schema and image — after
// its up and before it gets a bucket.
func TestAddCellGetsTheShippedReleaseAndItsSchema(t *testing.T) {
	h, recs := migratingHarness(t, 0)
	dry, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: router.TakeAuto, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	const gets = "cell-e gets registry.example.com/shop/api:1.5.0, what the fleet last shipped; the repository says registry.example.com/shop/api:1.4.2 — commit `cells:image: registry.example.com/shop/api:1.5.0` to stacks/Pulumi.cell-e.yaml to make it say so"
	if !slices.Contains(dry.Steps, gets) || !slices.Contains(dry.Steps, "would migrate cell-e's database before it gets tenants: /app/migrate up (image registry.example.com/shop/api:1.5.0)") ||
		!slices.Contains(dry.Steps, "cell-e's database gets the fleet's schema before any tenant: cell-a ran migrations (schema 1.5.0)") {
		t.Fatalf("dry run steps:\n%s", strings.Join(dry.Steps, "\n"))
	}
	if len(h.eng.runs()) != 0 || len(*recs) != 0 {
		t.Fatalf("the dry run ran %v", h.eng.runs())
	}
	rep, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: router.TakeAuto})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	if got := strings.Join(h.eng.runs(), ";"); got != "up cell-e;record running;migrate cell-e registry.example.com/shop/api:1.5.0;record running;record complete;up router" {
		t.Fatalf("runs %q: want the up, the migration (its record saved before the start, once the task is named, and at its end), then the router", got)
	}
	rec := (*recs)[0]
	cr := rec.Waves[0].Cells[0]
	if rec.Kind != executor.KindCellAdd || !strings.HasPrefix(rec.ID, "a-") || cr.After.Image != "registry.example.com/shop/api:1.5.0" ||
		cr.RepoImage != "registry.example.com/shop/api:1.4.2" || !cr.Migration.OK() {
		t.Fatalf("record %+v, cell %+v", rec, cr)
	}
	if s := executor.SchemaVersions(*recs)["cell-e"]; s.Version != "1.5.0" || s.Rollout != rec.ID {
		t.Errorf("cell-e's schema from the records: %+v", s)
	}
	// status and drift --behind judge each schema through the desired
	// state: the add's migration is the schema cell-e was shipped, not a
	// schema "from a rollout which has not kept the cell".
	fl, err := fleet.Load(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	fleetRecs, _ := h.env.Records(context.Background())
	if s := desired.Resolve(fl, append(slices.Clone(*recs), fleetRecs...)).Schemas["cell-e"]; s.Version != "1.5.0" || s.Shipped != "1.5.0" || s.ShippedRollout != rec.ID || s.Problem != "" {
		t.Errorf("cell-e's schema as status and drift judge it: %+v", s)
	}
	if !slices.Contains(rep.Steps, gets) || owned(h.table(t), "cell-e") == 0 {
		t.Errorf("steps:\n%s", strings.Join(rep.Steps, "\n"))
	}
}

// TestAddCellFailedMigrationRoutesNothing: a migration that exits non-zero
// is recorded (status shows the failure) and the cell gets no tenants; the
// error names the task's failure and how to continue or undo.
func TestAddCellFailedMigrationRoutesNothing(t *testing.T) {
	h, recs := migratingHarness(t, 1)
	before := h.tableBytes(t)
	_, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: router.TakeAuto})
	if err == nil || !strings.Contains(err.Error(), "the migration of cell-e's database failed") || !strings.Contains(err.Error(), "exited 1") ||
		!strings.Contains(err.Error(), "cell-e has no traffic") {
		t.Fatalf("err = %v", err)
	}
	if got := strings.Join(h.eng.runs(), ";"); got != "up cell-e;record running;migrate cell-e registry.example.com/shop/api:1.5.0;record running;record halted" {
		t.Fatalf("runs %q", got)
	}
	if s := executor.SchemaVersions(*recs)["cell-e"]; s.Failed == "" {
		t.Errorf("the failed migration is not in the records: %+v", s)
	}
	if h.tableBytes(t) != before {
		t.Fatal("a failed migration changed the routing table")
	}
}

// TestAddCellInAFleetNeverMigratedRunsNoMigration: a fleet whose cells
// never ran a migration (only `up` created them) gets a new cell without
// one too, so no cell looks behind the new one.
func TestAddCellInAFleetNeverMigratedRunsNoMigration(t *testing.T) {
	h, recs := migratingHarness(t, 0)
	h.env.Records = func(context.Context) ([]*executor.Record, error) { return nil, nil }
	if _, err := AddCell(context.Background(), h.env, AddOptions{Index: -1, Take: router.TakeAuto}); err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	if got := strings.Join(h.eng.runs(), ";"); got != "up cell-e;up router" || len(*recs) != 0 {
		t.Fatalf("runs %q, records %d: want no migration", got, len(*recs))
	}
}

// resumingMigrator is a Migrator whose first task outlives its run (the
// run is killed while it waits: Migrate returns when ctx ends, the task
// still running) and that follows a task by its record (Resumer).
type resumingMigrator struct {
	fakeMigrator
	migrates, resumed []string
	die               func() // the run is killed -9 once the task started
}

func (m *resumingMigrator) Migrate(ctx context.Context, req executor.MigrationRequest, started func(string)) (executor.Migration, error) {
	m.migrates = append(m.migrates, req.Token)
	if len(m.migrates) > 1 {
		return executor.Migration{}, errors.New("a second migration task started on the cell's database")
	}
	task := "arn:aws:ecs:us-east-1:123456789012:task/cells-cell-e/hung"
	started(task)
	m.die()
	<-ctx.Done() // the run dies while the task runs
	return executor.Migration{Task: task}, ctx.Err()
}

func (m *resumingMigrator) Resume(_ context.Context, req executor.MigrationRequest, running executor.Migration) (executor.Migration, error) {
	m.resumed = append(m.resumed, running.Task)
	exit := 0
	return executor.Migration{Image: req.To.Image, Command: running.Command, Token: running.Token, Task: running.Task, Started: running.Started,
		ExitCode: &exit, SchemaVersion: "1.5.0"}, nil
}

// TestAddCellKilledDuringItsMigrationFollowsTheTaskOnRerun: a cell add
// whose run dies while its migration task runs leaves the task named in a
// running cell-add record; the rerun follows that task to its end (the
// Resumer) and starts no second task on the cell's database, and the one
// record ends complete with the task's result.
func TestAddCellKilledDuringItsMigrationFollowsTheTaskOnRerun(t *testing.T) {
	h, recs := migratingHarness(t, 0)
	mig := &resumingMigrator{fakeMigrator: fakeMigrator{eng: h.eng}}
	h.env.Migrator = func(*fleet.Fleet, Engine) executor.Migrator { return mig }
	fleetRecs, _ := h.env.Records(context.Background())
	h.env.Records = func(context.Context) ([]*executor.Record, error) {
		return append(slices.Clone(*recs), fleetRecs...), nil
	}
	ctx, kill := context.WithCancel(context.Background())
	dead := false
	h.env.Record = func(_ context.Context, rec *executor.Record) error {
		if dead {
			return errors.New("killed: a dead process saves nothing")
		}
		c := *rec
		c.Waves = slices.Clone(rec.Waves)
		*recs = append([]*executor.Record{&c}, *recs...)
		return nil
	}
	mig.die = func() { dead = true; kill() }
	before := h.tableBytes(t)
	if _, err := AddCell(ctx, h.env, AddOptions{Index: -1, Take: router.TakeAuto}); err == nil {
		t.Fatal("the killed cell add did not fail")
	}
	if h.tableBytes(t) != before {
		t.Fatal("the killed cell add routed tenants before its migration ended")
	}
	if len(*recs) == 0 {
		t.Fatal("the killed cell add left no record naming its migration task")
	}
	first := (*recs)[0]
	if first.Kind != executor.KindCellAdd || first.State != executor.Running || !first.Waves[0].Cells[0].Migration.Unfinished() {
		t.Fatalf("after the kill the newest record is %+v", first)
	}
	dead = false
	if _, err := AddCell(context.Background(), h.env, AddOptions{ID: "cell-e", Index: -1, Take: router.TakeAuto}); err != nil {
		t.Fatalf("rerun: %v\n%s", err, h.log)
	}
	if len(mig.migrates) != 1 || len(mig.resumed) != 1 || mig.resumed[0] != first.Waves[0].Cells[0].Migration.Task {
		t.Fatalf("started %d task(s) (tokens %v), followed %v: want one start and the rerun following its task", len(mig.migrates), mig.migrates, mig.resumed)
	}
	last := (*recs)[0]
	if last.ID != first.ID || last.State != executor.Complete || !last.Waves[0].Cells[0].Migration.OK() {
		t.Fatalf("the rerun's record %s (%s), want %s complete with the task's exit 0", last.ID, last.State, first.ID)
	}
	if owned(h.table(t), "cell-e") == 0 {
		t.Error("cell-e got no tenants after its migration passed")
	}
}
