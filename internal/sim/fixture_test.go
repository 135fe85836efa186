package sim

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var updateFixture = flag.Bool("update", false, "regenerate testdata/sim/fleet-small")

const fixtureDir = "../../testdata/sim/fleet-small"

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
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.Resources(Filter{})
	if err != nil || len(rs) != 20 {
		t.Fatalf("fixture resources = %d, %v", len(rs), err)
	}
	if a, _ := c.Resources(Filter{Stack: "a", Type: "ec2/subnet"}); len(a) != 3 {
		t.Errorf("cell-a subnets = %d", len(a))
	}
	states, _ := c.AlarmStates("cell-b")
	if states["cell-b-5xx"] != AlarmAlarm {
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
	h := harnessOn(t, Options{Dir: dir, Stack: "cell-a"}, "us-east-1")
	cache, _ := c.Resources(Filter{Stack: "a", Name: "cell-a-cache", Type: "elasticache/replicationGroup"})
	if len(cache) != 1 || cache[0].Inputs["authToken"] != "[secret]" {
		t.Fatalf("cache = %+v", cache)
	}
	outs, _, _, err := h.cloud.read(cache[0].Stack, cache[0].Type, cache[0].ID)
	if err != nil || s(outs, "authToken") != "fixture-token-0123456789" {
		t.Errorf("secret read back: %v %v", s(outs, "authToken"), err)
	}
}

func buildFixture(t *testing.T, dir string) {
	now := func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }
	for _, cell := range []struct{ id, region, cidr string }{{"a", "us-east-1", "10.1.0.0/16"}, {"b", "eu-west-1", "10.2.0.0/16"}} {
		h := harnessOn(t, Options{Dir: dir, Stack: "cell-" + cell.id, Now: now}, cell.region)
		_, subnets := h.network("cell-"+cell.id, cell.cidr, 3)
		eip := h.create(tEIP, "cell-"+cell.id+"-nat-eip", pm("domain", "vpc"))
		h.create("aws:ec2/natGateway:NatGateway", "cell-"+cell.id+"-nat", pm("subnetId", subnets[0].id, "allocationId", eip.id))
		h.create(tAlarm, "cell-"+cell.id+"-5xx", pm("comparisonOperator", "GreaterThanThreshold", "evaluationPeriods", 1,
			"metricName", "HTTPCode_Target_5XX_Count", "namespace", "AWS/ApplicationELB", "statistic", "Sum", "period", 60, "threshold", 5))
		sg := h.create("aws:elasticache/subnetGroup:SubnetGroup", "cell-"+cell.id+"-cache", pm("subnetIds", []any{subnets[1].id, subnets[2].id}))
		in := pm("description", "cell cache", "nodeType", "cache.t4g.small", "subnetGroupName", s(sg.out, "name"), "transitEncryptionEnabled", true)
		in["authToken"] = secretString("fixture-token-0123456789")
		h.create("aws:elasticache/replicationGroup:ReplicationGroup", "cell-"+cell.id+"-cache", in)
	}
	r := harnessOn(t, Options{Dir: dir, Stack: "router", Now: now}, "us-east-1")
	role := r.create(tRole, "router-edge-role", pm("assumeRolePolicy", assumeRole))
	fn := edgeFunction(s(role.out, "arn"), "1")
	code, _ := newArchive(map[string]string{"index.js": "exports.handler = require('./handler')", "routing.json": `{"version":1,"buckets":1024}`})
	fn["code"] = code
	r.create(tFn, "router-edge", fn)
	c, _ := Open(dir)
	c.SetAlarm("b", "cell-b-5xx", AlarmAlarm, "fixture")
	c.AddFault(Fault{Stack: "b", Op: OpCreate, Type: "rds/cluster", Message: "fixture fault"})
	c.SetLatency(Latency{Op: OpCreate, Duration: Duration(200 * time.Millisecond)})
	c.SetQuota("eu-west-1", "ec2/L-0263D0A3", 2)
	os.Remove(filepath.Join(dir, lockFile))
}
