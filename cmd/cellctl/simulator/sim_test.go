package simulator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/sim"
)

// simFixture is a copy of the repository's fleet and of the small
// simulated fleet in testdata (two cells, a router, a fault, a latency
// rule, a quota override), so a test's commands change only its own cloud.
type simFixture struct {
	t      *testing.T
	fleet  string
	simDir string
}

func newSimFixture(t *testing.T) *simFixture {
	t.Helper()
	fx := &simFixture{t: t, fleet: t.TempDir(), simDir: t.TempDir()}
	if err := os.CopyFS(fx.simDir, os.DirFS("../../../testdata/sim/fleet-small")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(cloud.SimDirEnv, fx.simDir)
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("../../../Pulumi.yaml", filepath.Join(fx.fleet, "Pulumi.yaml"))
	os.MkdirAll(filepath.Join(fx.fleet, "stacks"), 0o755)
	files, _ := filepath.Glob("../../../stacks/*.yaml")
	for _, f := range append(files, "../../../stacks/routing.json") {
		copyFile(f, filepath.Join(fx.fleet, "stacks", filepath.Base(f)))
	}
	return fx
}

// run runs `cellctl sim ARGS…` with -o output.
func (fx *simFixture) run(output string, args ...string) (string, error) {
	fx.t.Helper()
	io, _, out, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Dir, f.Global.Output = fx.fleet, output
	defer f.Close()
	root := &cobra.Command{Use: "cellctl", PersistentPreRunE: func(*cobra.Command, []string) error { return nil }, SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(NewCmdSim(f))
	root.SetArgs(append([]string{"sim"}, args...))
	err := root.Execute()
	return out.String(), err
}

func (fx *simFixture) must(output string, args ...string) string {
	fx.t.Helper()
	out, err := fx.run(output, args...)
	if err != nil {
		fx.t.Fatalf("sim %v: %v", args, err)
	}
	return out
}

// cloud opens the simulated cloud the commands changed, to read it back.
func (fx *simFixture) cloud() *sim.Cloud {
	fx.t.Helper()
	c, err := sim.Open(fx.simDir)
	if err != nil {
		fx.t.Fatal(err)
	}
	return c
}

// Faults: add one for this fleet's cell (qualified by the fleet's
// project, so another fleet in a shared account is not hit), list and
// clear them; a --cell that is not the fleet's is refused.
func TestSimFaultAddListClear(t *testing.T) {
	fx := newSimFixture(t)
	out := fx.must("table", "fault", "add", "--cell", "cell-c", "--type", "rds/cluster", "--op", "create", "--times", "2")
	if !strings.Contains(out, "cells/cell-c") || !strings.Contains(out, "rds/cluster") {
		t.Errorf("add printed:\n%s", out)
	}
	fx.must("table", "fault", "add", "--cell", "cell-b", "--name", "cell-b-alb*", "--always")
	faults, err := fx.cloud().Faults()
	if err != nil || len(faults) != 3 {
		t.Fatalf("faults = %+v, %v (the fixture's and two new)", faults, err)
	}
	added := faults[1]
	if added.Stack != "cells/cell-c" || added.Op != "create" || added.Type != "rds/cluster" || added.Times != 2 || added.Always {
		t.Errorf("added fault = %+v", added)
	}
	list := fx.must("table", "fault", "list")
	if !strings.Contains(list, "always") || !strings.Contains(list, "cell-b-alb*") || !strings.Contains(list, "*") {
		t.Errorf("list:\n%s", list)
	}
	var doc struct{ Faults []sim.Fault }
	if err := json.Unmarshal([]byte(fx.must("json", "fault", "list")), &doc); err != nil || len(doc.Faults) != 3 {
		t.Errorf("list -o json: %+v %v", doc, err)
	}
	fx.must("table", "fault", "clear", added.ID)
	if faults, _ := fx.cloud().Faults(); len(faults) != 2 {
		t.Errorf("after clearing %s: %+v", added.ID, faults)
	}
	fx.must("table", "fault", "clear")
	if faults, _ := fx.cloud().Faults(); len(faults) != 0 {
		t.Errorf("after clearing all: %+v", faults)
	}
	if out := fx.must("table", "fault", "list"); strings.TrimSpace(out) != "(none)" {
		t.Errorf("an empty list prints %q", out)
	}
	if _, err := fx.run("table", "fault", "add", "--cell", "cell-zz"); err == nil {
		t.Error("a fault for a cell the fleet lacks was accepted")
	}
}

// Latency rules: set, list, replace with a bad duration refused, clear.
func TestSimLatency(t *testing.T) {
	fx := newSimFixture(t)
	fx.must("table", "latency", "set", "350ms", "--cell", "cell-a", "--op", "create", "--type", "rds/cluster")
	ls, err := fx.cloud().Latencies()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range ls {
		if l.Stack == "cells/cell-a" && l.Op == "create" && l.Type == "rds/cluster" && time.Duration(l.Duration) == 350*time.Millisecond {
			found = true
		}
	}
	if !found {
		t.Fatalf("latency rules = %+v", ls)
	}
	if out := fx.must("table", "latency", "list"); !strings.Contains(out, "350ms") || !strings.Contains(out, "cells/cell-a") {
		t.Errorf("list:\n%s", out)
	}
	for _, bad := range []string{"soon", "-1s"} {
		if _, err := fx.run("table", "latency", "set", "--", bad); err == nil || !strings.Contains(err.Error(), "invalid duration") {
			t.Errorf("latency set %s: %v", bad, err)
		}
	}
	fx.must("table", "latency", "clear")
	if ls, _ := fx.cloud().Latencies(); len(ls) != 0 {
		t.Errorf("after clear: %+v", ls)
	}
}

// An alarm set by the sim is what the wave gates then read.
func TestSimAlarmSetAndList(t *testing.T) {
	fx := newSimFixture(t)
	out := fx.must("table", "alarm", "set", "cell-b", "cell-b-5xx", "alarm", "--reason", "drill")
	if !strings.Contains(out, "ALARM") {
		t.Errorf("set printed:\n%s", out)
	}
	as, err := fx.cloud().Alarms("cell-b")
	if err != nil || len(as) == 0 {
		t.Fatalf("alarms = %v %v", as, err)
	}
	for _, a := range as {
		if a.Name == "cell-b-5xx" && (a.State != "ALARM" || a.Reason != "drill") {
			t.Errorf("cell-b-5xx = %+v", a)
		}
	}
	if out := fx.must("table", "alarm", "list", "cell-b"); !strings.Contains(out, "drill") {
		t.Errorf("list:\n%s", out)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"alarm", "set", "cell-b", "cell-b-5xx", "RED"}},
		{[]string{"alarm", "set", "cell-b", "no-such-alarm", "OK"}},
	} {
		if _, err := fx.run("table", tc.args...); err == nil {
			t.Errorf("%v was accepted", tc.args)
		}
	}
}

// Quotas: a value set is the limit the quota list (and the quota audit)
// reads; a value that is not a number is refused.
func TestSimQuota(t *testing.T) {
	fx := newSimFixture(t)
	fx.must("table", "quota", "set", "us-east-1", "ec2/L-0263D0A3", "10")
	qs, err := fx.cloud().Quotas("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	got := -1.0
	for _, q := range qs {
		if q.Code == "ec2/L-0263D0A3" {
			got = q.Value
		}
	}
	if got != 10 {
		t.Fatalf("ec2/L-0263D0A3 in us-east-1 = %v, want 10", got)
	}
	if out := fx.must("table", "quota", "list", "us-east-1"); !strings.Contains(out, "ec2/L-0263D0A3") {
		t.Errorf("list:\n%s", out)
	}
	if _, err := fx.run("table", "quota", "set", "us-east-1", "ec2/L-0263D0A3", "ten"); err == nil || !strings.Contains(err.Error(), "invalid quota value") {
		t.Errorf("a non-number: %v", err)
	}
}

// Resources: list with filters; edit one behind Pulumi's back (drift),
// which the resource then records; reset empties the cloud.
func TestSimResourcesEditReset(t *testing.T) {
	fx := newSimFixture(t)
	out := fx.must("table", "resources", "--cell", "cell-b", "--type", "ec2/subnet")
	if n := strings.Count(out, "cell-b-subnet-"); n != 3 {
		t.Errorf("cell-b's subnets listed %d times:\n%s", n, out)
	}
	var doc struct{ Resources []sim.Resource }
	if err := json.Unmarshal([]byte(fx.must("json", "resources", "--cell", "cell-a")), &doc); err != nil || len(doc.Resources) == 0 {
		t.Fatalf("resources -o json: %v", err)
	}
	for _, r := range doc.Resources {
		if r.Stack != "cell-a" {
			t.Errorf("--cell cell-a listed %s's %s", r.Stack, r.Name)
		}
	}
	if out := fx.must("table", "edit", "cell-b", "cell-b-vpc", "tags.owner", `"mallory"`); !strings.Contains(out, "cell-b-vpc") || !strings.Contains(out, "tags") {
		t.Errorf("edit printed:\n%s", out)
	}
	rs, err := fx.cloud().Resources(sim.Filter{Stack: "cell-b", Name: "cell-b-vpc"})
	if err != nil || len(rs) != 1 || strings.Join(rs[0].Edited, ",") != "tags" {
		t.Fatalf("edited vpc = %+v %v", rs, err)
	}
	if tags, _ := rs[0].Outputs["tags"].(map[string]any); tags["owner"] != "mallory" {
		t.Errorf("the live vpc's tags = %v, want owner mallory", rs[0].Outputs["tags"])
	}
	if _, err := fx.run("table", "edit", "cell-b", "no-such-resource", "tags.owner", "x"); err == nil {
		t.Error("editing a resource that does not exist was accepted")
	}
	fx.must("table", "reset")
	if rs, _ := fx.cloud().Resources(sim.Filter{}); len(rs) != 0 {
		t.Errorf("after reset %d resources remain", len(rs))
	}
	if fs, _ := fx.cloud().Faults(); len(fs) != 0 {
		t.Errorf("after reset %d faults remain", len(fs))
	}
}

// function-code prints a published function's files, or one of them.
func TestSimFunctionCode(t *testing.T) {
	fx := newSimFixture(t)
	files, err := fx.cloud().FunctionCode("router-edge-70ebf3f")
	if err != nil || len(files) == 0 {
		t.Fatalf("fixture function: %v %v", files, err)
	}
	var name string
	for n := range files {
		name = n
	}
	if out := fx.must("table", "function-code", "router-edge-70ebf3f"); !strings.Contains(out, name+" (") {
		t.Errorf("listing lacks %s:\n%s", name, out)
	}
	if out := fx.must("table", "function-code", "router-edge-70ebf3f", name); out != files[name] {
		t.Errorf("file content differs")
	}
	var doc map[string]string
	if err := json.Unmarshal([]byte(fx.must("json", "function-code", "router-edge-70ebf3f")), &doc); err != nil || doc[name] != files[name] {
		t.Errorf("-o json: %v", err)
	}
	if _, err := fx.run("table", "function-code", "router-edge-70ebf3f", "nope.js"); err == nil || !strings.Contains(err.Error(), `has no file "nope.js"`) {
		t.Errorf("a missing file: %v", err)
	}
}

// Hosted zones and retired engine versions are what the simulated AWS
// then enforces; both are listed.
func TestSimZonesAndEngineVersions(t *testing.T) {
	fx := newSimFixture(t)
	fx.must("table", "zone", "add", "Z0TEST", "cells.example.com")
	zs, err := fx.cloud().Zones()
	found := false
	for _, z := range zs {
		found = found || (z.ID == "Z0TEST" && strings.TrimSuffix(z.Name, ".") == "cells.example.com")
	}
	if err != nil || !found {
		t.Fatalf("zones = %+v %v", zs, err)
	}
	if out := fx.must("table", "zone", "list"); !strings.Contains(out, "Z0TEST") {
		t.Errorf("zone list:\n%s", out)
	}
	fx.must("table", "engine-version", "retire", "aurora-postgresql", "15.8")
	if vs, _ := fx.cloud().RetiredEngineVersions(); strings.Join(vs, ",") != "aurora-postgresql 15.8" {
		t.Errorf("retired = %v", vs)
	}
	if out := fx.must("table", "engine-version", "list"); !strings.Contains(out, "aurora-postgresql") || !strings.Contains(out, "15.8") {
		t.Errorf("list:\n%s", out)
	}
	fx.must("table", "engine-version", "retire", "aurora-postgresql", "15.8", "--restore")
	if vs, _ := fx.cloud().RetiredEngineVersions(); len(vs) != 0 {
		t.Errorf("after --restore: %v", vs)
	}
}

// KMS keys: create, disable, deny; each state is what a stack's awskms://
// secrets provider then meets.
func TestSimKMS(t *testing.T) {
	fx := newSimFixture(t)
	out := fx.must("table", "kms", "create", "--alias", "cells", "--region", "us-east-1")
	if !strings.Contains(out, "alias/cells") {
		t.Errorf("create printed:\n%s", out)
	}
	fx.must("table", "kms", "disable", "alias/cells")
	fx.must("table", "kms", "deny", "alias/cells")
	keys, err := fx.cloud().KMSKeys()
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys = %+v %v", keys, err)
	}
	if !keys[0].Denied || !strings.EqualFold(keys[0].State, "Disabled") {
		t.Errorf("key = %+v, want disabled and denied", keys[0])
	}
	if out := fx.must("table", "kms", "list"); !strings.Contains(out, "(callers denied)") {
		t.Errorf("list:\n%s", out)
	}
	if _, err := fx.run("table", "kms", "enable", "alias/nope"); err == nil {
		t.Error("acting on a key that does not exist was accepted")
	}
}

// Edge profiles: set by routing table version, shown, cleared; a bad
// percentage is refused before anything is written.
func TestSimEdge(t *testing.T) {
	fx := newSimFixture(t)
	out := fx.must("table", "edge", "set", "--router-table", "8", "--error-rate", "20%")
	if !strings.Contains(out, "table 8") {
		t.Errorf("set printed:\n%s", out)
	}
	got, err := fx.cloud().EdgeHealth()
	if err != nil || got["table:8"].ErrorRate == nil || *got["table:8"].ErrorRate != 0.2 {
		t.Fatalf("edge health = %+v %v", got, err)
	}
	if _, err := fx.run("table", "edge", "set", "--router-table", "9", "--function-errors", "lots"); err == nil || !strings.Contains(err.Error(), "--function-errors") {
		t.Errorf("a bad percentage: %v", err)
	}
	if got, _ := fx.cloud().EdgeHealth(); len(got) != 1 {
		t.Errorf("a refused set wrote a profile: %+v", got)
	}
	if out := fx.must("table", "edge", "show"); !strings.Contains(out, "table 8") {
		t.Errorf("show:\n%s", out)
	}
	fx.must("table", "edge", "clear")
	if got, _ := fx.cloud().EdgeHealth(); len(got) != 0 {
		t.Errorf("after clear: %+v", got)
	}
}

// The sim commands print tables or JSON, nothing else.
func TestSimRefusesOtherOutputs(t *testing.T) {
	fx := newSimFixture(t)
	if _, err := fx.run("markdown", "fault", "list"); err == nil || !strings.Contains(err.Error(), `--output "markdown" is not supported here`) {
		t.Fatalf("err = %v", err)
	}
}
