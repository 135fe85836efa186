package provider_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/sim/health"
	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

var updateFixture = flag.Bool("update", false, "regenerate testdata/sim/fleet-small")

const fixtureDir = "../../../testdata/sim/fleet-small"

// The fixture is a small simulated fleet on disk (two cells in two
// regions, a router with its edge function, an alarm firing, a fault, a
// latency rule and a quota override) for tests of code that reads a sim
// dir: `cellctl sim …`, the quota audit, wave gates. Regenerate with
// go test ./internal/sim -run TestFixture -update.
func TestFixture(t *testing.T) {
	if *updateFixture {
		os.RemoveAll(fixtureDir)
		buildFixture(t, fixtureDir)
	}
	// Work on a copy so the test never changes the fixture.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixtureDir)); err != nil {
		t.Fatalf("copying fixture (run with -update to create it): %v", err)
	}
	c, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.Resources(store.Filter{})
	if err != nil || len(rs) != 20 {
		t.Fatalf("fixture resources = %d, %v", len(rs), err)
	}
	if a, _ := c.Resources(store.Filter{Stack: "a", Type: "ec2/subnet"}); len(a) != 3 {
		t.Errorf("cell-a subnets = %d", len(a))
	}
	states, _ := health.AlarmStates(c, "cell-b")
	if states["cell-b-5xx"] != store.AlarmAlarm {
		t.Errorf("cell-b alarm states = %v", states)
	}
	usage, _ := c.Usage("eu-west-1")
	for _, u := range usage {
		if u.Code == "ec2/L-0263D0A3" && (u.Used != 1 || u.Limit != 2) {
			t.Errorf("eu-west-1 EIP usage = %+v", u)
		}
	}
	code, err := c.FunctionCode("router-edge")
	if err != nil || code["routing.json"] == "" {
		t.Errorf("router code = %v, %v", code, err)
	}
	if fs, _ := c.Faults(); len(fs) != 1 {
		t.Errorf("faults = %v", fs)
	}
	// A provider on the fixture reads a resource with a secret back.
	h := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a"}, "us-east-1")
	cache, _ := c.Resources(store.Filter{Stack: "a", Name: "cell-a-cache", Type: "elasticache/replicationGroup"})
	if len(cache) != 1 || cache[0].Inputs["authToken"] != "[secret]" {
		t.Fatalf("cache = %+v", cache)
	}
	outs, _, _, err := provider.ReadLive(h.Cloud, cache[0].Stack, cache[0].Type, cache[0].ID)
	if err != nil || simtest.S(outs, "authToken") != "fixture-token-0123456789" {
		t.Errorf("secret read back: %v %v", simtest.S(outs, "authToken"), err)
	}
}

func buildFixture(t *testing.T, dir string) {
	now := func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }
	for _, cell := range []struct{ id, region, cidr string }{{"a", "us-east-1", "10.1.0.0/16"}, {"b", "eu-west-1", "10.2.0.0/16"}} {
		h := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-" + cell.id, Now: now}, cell.region)
		_, subnets := h.Network("cell-"+cell.id, cell.cidr, 3)
		eip := h.Create(simtest.TEIP, "cell-"+cell.id+"-nat-eip", simtest.PM("domain", "vpc"))
		h.Create("aws:ec2/natGateway:NatGateway", "cell-"+cell.id+"-nat", simtest.PM("subnetId", subnets[0].ID, "allocationId", eip.ID))
		h.Create(simtest.TAlarm, "cell-"+cell.id+"-5xx", simtest.PM("comparisonOperator", "GreaterThanThreshold", "evaluationPeriods", 1,
			"metricName", "HTTPCode_Target_5XX_Count", "namespace", "AWS/ApplicationELB", "statistic", "Sum", "period", 60, "threshold", 5))
		sg := h.Create("aws:elasticache/subnetGroup:SubnetGroup", "cell-"+cell.id+"-cache", simtest.PM("subnetIds", []any{subnets[1].ID, subnets[2].ID}))
		in := simtest.PM("description", "cell cache", "nodeType", "cache.t4g.small", "subnetGroupName", simtest.S(sg.Out, "name"), "transitEncryptionEnabled", true)
		in["authToken"] = simtest.SecretString("fixture-token-0123456789")
		h.Create("aws:elasticache/replicationGroup:ReplicationGroup", "cell-"+cell.id+"-cache", in)
	}
	r := simtest.On(t, provider.Options{Dir: dir, Stack: "router", Now: now}, "us-east-1")
	role := r.Create(simtest.TRole, "router-edge-role", simtest.PM("assumeRolePolicy", simtest.AssumeRole))
	fn := simtest.EdgeFunction(simtest.S(role.Out, "arn"), "1")
	code, _ := simtest.NewArchive(map[string]string{"index.js": "exports.handler = require('./handler')", "routing.json": `{"version":1,"buckets":1024}`})
	fn["code"] = code
	r.Create(simtest.TFn, "router-edge", fn)
	c, _ := store.Open(dir)
	c.SetAlarm("b", "cell-b-5xx", store.AlarmAlarm, "fixture")
	c.AddFault(store.Fault{Stack: "b", Op: store.OpCreate, Type: "rds/cluster", Message: "fixture fault"})
	c.SetLatency(store.Latency{Op: store.OpCreate, Duration: store.Duration(200 * time.Millisecond)})
	c.SetQuota("eu-west-1", "ec2/L-0263D0A3", 2)
	os.Remove(filepath.Join(dir, store.LockFile))
}
