package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/netpath"
	"github.com/cellctl/cellctl/internal/offline"
)

func renderNetwork(t *testing.T, f *fleet.Fleet) (*Report, netpath.Report) {
	t.Helper()
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep, networkOf(t, rep, f)
}

func networkOf(t *testing.T, rep *Report, f *fleet.Fleet) netpath.Report {
	t.Helper()
	n, err := rep.NetworkPaths(f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// networkFindings are a report's findings by path.
func networkFindings(r netpath.Report) map[string]netpath.Result {
	out := map[string]netpath.Result{}
	for _, x := range r.Findings() {
		out[x.Path] = x
	}
	return out
}

// Every network path a demo cell needs is open, and none between cells or
// from the internet to its tasks and data is: per cell CloudFront → ALB,
// ALB → task, the task to its database, cache, SQS, ECR, CloudWatch Logs
// and S3, the migrator to the database, ECR, Logs and S3; every ordered
// pair of cells' VPCs.
func TestDemoFleetNetworkPathsHold(t *testing.T) {
	for _, overlay := range [][]string{nil, {fleettest.TwoAccounts}} {
		f := fleettest.Load(t, fleettest.Demo(t, overlay...))
		_, n := renderNetwork(t, f)
		for _, x := range n.Findings() {
			t.Errorf("%v: %s: %s", overlay, x.Path, x.Reason)
		}
		allowed, required, denied, forbidden := n.Counts()
		t.Logf("%v: required %d/%d allowed, forbidden %d/%d denied", overlay, allowed, required, denied, forbidden)
		cells := len(f.Cells)
		migrators := 0
		for _, c := range f.Cells {
			if c.RunsMigrations() {
				migrators++
			}
		}
		if required != 8*cells+4*migrators || forbidden != cells*(cells-1)+7*cells+migrators {
			t.Errorf("%v: %d required, %d forbidden paths for %d cells (%d with a migrator)", overlay, required, forbidden, cells, migrators)
		}
		for _, p := range []string{"cell-a: CloudFront → ALB:443", "cell-a: ALB → task:8080", "cell-a: task → database:5432",
			"cell-a: task → cache:6379", "cell-a: task → S3:443 (gateway endpoint)", "cell-d: task → SQS:443"} {
			found := false
			for _, x := range n.Required {
				found = found || (x.Path == p && x.Allowed)
			}
			if !found {
				t.Errorf("%v: no allowed path %q", overlay, p)
			}
		}
	}
}

// remove drops a rendered resource of a stack.
func remove(t *testing.T, rep *Report, stack, name string) {
	t.Helper()
	s := stackNamed(rep, stack)
	for i, r := range s.recorded {
		if r.Name == name {
			s.recorded = append(s.recorded[:i:i], s.recorded[i+1:]...)
			return
		}
	}
	t.Fatalf("%s has no %s", stack, name)
}

func idOf(t *testing.T, rep *Report, stack, name string) string {
	t.Helper()
	return recordedNamed(t, rep, stack, name).ID
}

// addRule adds a standalone security group rule to a rendered stack.
func addResource(rep *Report, stack, typ, name string, in map[string]any) {
	s := stackNamed(rep, stack)
	s.recorded = append(s.recorded, &offline.Resource{Type: typ, Name: name, Custom: true, ID: name + "-id",
		Inputs: resource.NewPropertyMapFromMap(in), Outputs: resource.PropertyMap{}})
}

// The three changes the network model must catch, each in a render of
// the demo fleet: the service no longer admits its ALB, the database
// admits the internet, a cell routes to another cell's range. Each is a
// finding naming its path and the rule or route, and the apply path's
// gate refuses it (exit 2, nothing changed).
func TestDoctoredRendersBreakTheirNetworkPaths(t *testing.T) {
	f := fleettest.Load(t, fleettest.Demo(t))
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, rep *Report)
		path   string
		reason string
	}{
		{"the service's ingress from the ALB is removed", func(t *testing.T, rep *Report) {
			remove(t, rep, "cell-a", "cell-a-service-in-alb")
		}, "cell-a: ALB → task:8080", "no ingress rule of cell-a-service-sg admits the ALB (cell-a-alb-sg"},
		{"the database admits 0.0.0.0/0", func(t *testing.T, rep *Report) {
			addResource(rep, "cell-a", "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "cell-a-db-in-anywhere", map[string]any{
				"securityGroupId": idOf(t, rep, "cell-a", "cell-a-db-sg"), "ipProtocol": "tcp", "fromPort": 5432, "toPort": 5432, "cidrIpv4": "0.0.0.0/0"})
		}, "cell-a: internet → database", "cell-a-db-in-anywhere (cell-a-db-sg ingress tcp 5432 from 0.0.0.0/0) admits internet addresses"},
		{"a route to another cell's range", func(t *testing.T, rep *Report) {
			addResource(rep, "cell-a", "aws:ec2/route:Route", "cell-a-to-cell-b", map[string]any{
				"routeTableId": idOf(t, rep, "cell-a", "cell-a-private-1a-rt"), "destinationCidrBlock": f.Cell("cell-b").CIDR(),
				"transitGatewayId": "tgw-0123456789abcdef0"})
		}, "cell-a → cell-b: VPC to VPC", "cell-a-to-cell-b routes 10.2.0.0/16, which holds cell-b's VPC (10.2.0.0/16), to a transit gateway"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Render(context.Background(), f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := RefuseBrokenPaths(rep, f); err != nil {
				t.Fatalf("the demo fleet as rendered: %v", err)
			}
			tc.change(t, rep)
			got := networkFindings(networkOf(t, rep, f))
			x, ok := got[tc.path]
			if !ok || !strings.Contains(x.Reason, tc.reason) || len(got) != 1 {
				t.Fatalf("want one finding on %q naming %q; got %+v", tc.path, tc.reason, got)
			}
			err = RefuseBrokenPaths(rep, f)
			if exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), "nothing was changed") ||
				!strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("the gate: %v", err)
			}
		})
	}
}

// The migrator's network is the one its migration output hands RunTask:
// a migration output naming the cache's group, which neither leaves for
// the database nor for HTTPS, breaks every migrator path and nothing else.
func TestTheMigratorRunsWithItsOutputsNetwork(t *testing.T) {
	f := fleettest.Load(t, fleettest.Demo(t))
	rep, n := renderNetwork(t, f)
	if len(n.Findings()) > 0 {
		t.Fatalf("findings: %+v", n.Findings())
	}
	mig := stackNamed(rep, "cell-a").Outputs["migration"].(map[string]any)
	mig["securityGroups"] = []any{idOf(t, rep, "cell-a", "cell-a-cache-sg")}
	got := networkFindings(networkOf(t, rep, f))
	x, ok := got["cell-a: migrator → database:5432"]
	if !ok || !strings.Contains(x.Reason, "no egress rule of cell-a-cache-sg allows tcp 5432 to the database") ||
		!strings.Contains(x.Reason, "no ingress rule of cell-a-db-sg admits the migrator (cell-a-cache-sg") {
		t.Fatalf("got %+v", got)
	}
	for p := range got {
		if !strings.HasPrefix(p, "cell-a: migrator → ") {
			t.Errorf("unexpected finding on %s", p)
		}
	}
	if len(got) != 4 {
		t.Errorf("want the migrator's 4 paths broken, got %d", len(got))
	}
}
