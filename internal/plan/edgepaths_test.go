package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/props"
)

// dnsRoleDemo is the demo fleet with cell-b's records written through a
// DNS role (cells:dnsAssumeRole) in the zone's account, rendered.
func dnsRoleDemo(t *testing.T) (*fleet.Fleet, *Report) {
	t.Helper()
	dir := fleettest.Demo(t)
	fleettest.Edit(t, dir, "stacks/Pulumi.cell-b.yaml", func(s string) string {
		return s + "  cells:dnsAssumeRole:\n    roleArn: arn:aws:iam::123456789012:role/cellctl-dns-cell-b\n"
	})
	f := fleettest.Load(t, dir)
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f, rep
}

// A cell's DNS role, with the policy its stack exports, changes the cell's
// own name and validation name in its zone and reads the zone; it changes
// no other cell's record nor the router's (each a forbidden path, denied).
// Loosened to the whole fleet domain, the role reaches the other cells'
// records (the demo's four cells share the zone):
// each a finding naming the statement that allows it, and the apply
// path's gate refuses the render (exit 2).
func TestTheDNSRoleChangesOnlyItsCellsNames(t *testing.T) {
	f, rep := dnsRoleDemo(t)
	paths, m, err := rep.Paths(f, sharedOf(t, f))
	if err != nil {
		t.Fatal(err)
	}
	if !paths.OK() {
		t.Fatalf("findings: %+v %v", paths.Findings(), paths.Problems())
	}
	var dns []access.Result
	for _, r := range paths.Required {
		if r.Path.Principal == access.DNSRoleLabel("cell-b") {
			dns = append(dns, r)
		}
	}
	if len(dns) != 4 {
		t.Fatalf("the DNS role's required paths: %+v", dns)
	}
	zone := access.HostedZoneARN("aws", "Z0123456789ABCDEFGHIJ")
	for _, name := range []string{"cell-a.cells.example.com", "_31d3b706ec6afe7f40b61c810acd3d57.cell-a.cells.example.com.", "App.Example.com.", "*.app.example.com"} {
		for _, z := range []string{zone, access.HostedZoneARN("aws", "Z0987654321ZYXWVUTSRQ")} {
			v := m.Evaluate(access.Request{Principal: access.DNSRoleLabel("cell-b"), Action: "route53:ChangeResourceRecordSets", Resource: z,
				Context: map[string][]string{access.NormalizedRecordNamesKey: {name}}})
			if !v.Decision.Denied() {
				t.Errorf("cell-b's DNS role changes %s in %s: %s", name, z, v.Decision)
			}
		}
	}

	// Loosened: *.cells.example.com.
	loose := cellmodule.DNSRecordDocument("aws", "Z0123456789ABCDEFGHIJ", "cell-b.cells.example.com")
	loose.Statement[0].Condition["ForAllValues:StringLike"][access.NormalizedRecordNamesKey] = []string{"*.cells.example.com"}
	doc, err := loose.JSON()
	if err != nil {
		t.Fatal(err)
	}
	stackNamed(rep, "cell-b").Outputs[cellmodule.DNSRecordPolicyOutput] = doc
	paths, _, err = rep.Paths(f, sharedOf(t, f))
	if err != nil {
		t.Fatal(err)
	}
	var hit []string
	for _, x := range paths.Forbidden.Findings {
		if x.Path.Principal != access.DNSRoleLabel("cell-b") || len(x.Deciding) == 0 || x.Deciding[0].Sid != "CellRecordsOnly" {
			t.Errorf("finding %+v", x)
		}
		hit = append(hit, x.Path.Name)
	}
	if len(hit) != 6 || !strings.Contains(strings.Join(hit, "\n"), "cell-b/dns-role must not change cell-a's record cell-a.cells.example.com") {
		t.Fatalf("loosened: findings %q, want the two records of each other cell in the zone", hit)
	}
	err = RefuseBrokenPaths(rep, f)
	if exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), "cell-a's record _31d3b706ec6afe7f40b61c810acd3d57.cell-a.cells.example.com") {
		t.Fatalf("the apply path's gate: %v", err)
	}

	// No exported policy: nothing allows the role its own paths.
	delete(stackNamed(rep, "cell-b").Outputs, cellmodule.DNSRecordPolicyOutput)
	paths, _, _ = rep.Paths(f, sharedOf(t, f))
	if n := len(paths.Findings()); n != 4 {
		t.Fatalf("without the policy: %d findings %+v, want its four paths", n, paths.Findings())
	}
}

// editInputs rewrites a recorded resource's inputs as plain values.
func editInputs(t *testing.T, rep *Report, stack, name string, fn func(in map[string]any)) {
	t.Helper()
	r := recordedNamed(t, rep, stack, name)
	in := props.Plain(r.Inputs)
	fn(in)
	r.Inputs = resource.NewPropertyMapFromMap(in)
}

// CloudFront, the origins' caller: each distribution runs a published
// version of the edge function and reaches the routed cells over HTTPS
// only, each cell's certificate covering its name. A $LATEST or
// unqualified association, an origin over HTTP, an origin no cell's name,
// and a certificate for another name are each a finding the apply path's
// gate refuses (exit 2).
func TestCloudFrontReachesEveryCellOverHTTPS(t *testing.T) {
	association := func(arn func(string) string) func(t *testing.T, rep *Report) {
		return func(t *testing.T, rep *Report) {
			editInputs(t, rep, "router", "router-cdn", func(in map[string]any) {
				a := in["defaultCacheBehavior"].(map[string]any)["lambdaFunctionAssociations"].([]any)[0].(map[string]any)
				a["lambdaArn"] = arn(a["lambdaArn"].(string))
			})
		}
	}
	origin := func(key, value string) func(t *testing.T, rep *Report) {
		return func(t *testing.T, rep *Report) {
			editInputs(t, rep, "router", "router-cdn-staging", func(in map[string]any) {
				o := in["origins"].([]any)[0].(map[string]any)
				if key == "domainName" {
					o[key] = value
				} else {
					o["customOriginConfig"].(map[string]any)[key] = value
				}
			})
		}
	}
	unqualified := func(arn string) string { return arn[:strings.LastIndex(arn, ":")] }
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, rep *Report)
		want   string // "" for no finding
	}{
		{"as rendered", func(*testing.T, *Report) {}, ""},
		{"$LATEST", association(func(arn string) string { return unqualified(arn) + ":$LATEST" }),
			"router/cdn's origin-request association names arn:aws:lambda:us-east-1:123456789012:function:router-edge-fefdba0:$LATEST ($LATEST), not a published version"},
		{"unqualified", association(unqualified), "(unqualified), not a published version"},
		{"an alias", association(func(arn string) string { return unqualified(arn) + ":live" }), "(alias live), not a published version"},
		{"another published version", association(func(arn string) string { return unqualified(arn) + ":7" }), ""},
		// The primary runs what the canary promoted: the deployed
		// function's version, whose auto-named physical name the
		// render's mocks do not know (TestDocExamples' router canary).
		{"the deployed function's version", association(func(string) string { return "arn:aws:lambda:us-east-1:123456789012:function:router-edge-f89bec2:1" }), ""},
		{"an origin over HTTP", origin("originProtocolPolicy", "match-viewer"), `router/cdn-staging's origin cells connects with originProtocolPolicy "match-viewer"`},
		{"an origin that is no cell's name", origin("domainName", "cell-a.elsewhere.example.com"),
			"router/cdn-staging's origin cells is cell-a.elsewhere.example.com, no routed cell's DNS name"},
		{"a certificate for another name", func(t *testing.T, rep *Report) {
			editInputs(t, rep, "cell-a", "cell-a-cert", func(in map[string]any) { in["domainName"] = "cell-a.other.example.com" })
		}, "router: CloudFront reaches cell-a at cell-a.cells.example.com over HTTPS: cell-a/https's certificate arn:aws:acm:us-east-1:123456789012:certificate/3f049c59-6e67-4cac-99c1-9fcbc0afc193 is for cell-a.other.example.com, not cell-a.cells.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problemCase(t, tc.change, func(r access.Report) []string { return r.Edge }, "edge", tc.want)
		})
	}
}

// One DNS role for every cell (the baseline's cells:dnsAssumeRole) is one
// role needing every cell's names: each cell's records are within the
// role's reach from another cell, forbidden-path findings the apply
// path's gate refuses.
func TestOneDNSRoleForEveryCellIsAFinding(t *testing.T) {
	dir := fleettest.Demo(t)
	fleettest.Edit(t, dir, "Pulumi.yaml", func(s string) string {
		return strings.Replace(s, "\nconfig:\n", "\nconfig:\n  cells:dnsAssumeRole:\n    value:\n      roleArn: arn:aws:iam::123456789012:role/cellctl-dns\n", 1)
	})
	f := fleettest.Load(t, dir)
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	paths, _, err := rep.Paths(f, sharedOf(t, f))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range paths.Forbidden.Findings {
		names = append(names, x.Path.Name)
	}
	if len(paths.Findings()) == 0 || !strings.Contains(strings.Join(names, "\n"), "must not change cell-b's record cell-b.cells.example.com") {
		t.Fatalf("findings %q", names)
	}
	if err := RefuseBrokenPaths(rep, f); exitcode.Of(err) != exitcode.Findings {
		t.Fatalf("the apply path's gate: %v", err)
	}
}
