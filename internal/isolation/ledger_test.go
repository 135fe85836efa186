package isolation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/offline"
)

const topic = "arn:aws:sns:us-east-1:123456789012:fleet-events"

// taskDef is a cell's task definition whose container environment names
// the given values (as cellmodule writes containerDefinitions: JSON).
func taskDef(cell string, env map[string]string) *offline.Resource {
	var vars []map[string]string
	for k, v := range env {
		vars = append(vars, map[string]string{"name": k, "value": v})
	}
	defs, _ := json.Marshal([]map[string]any{{"name": "app", "image": "registry.example.com/shop/api:1.4.2", "environment": vars}})
	return res(cell, "aws:ecs/taskDefinition:TaskDefinition", cell+"-task", map[string]any{"containerDefinitions": string(defs)},
		map[string]any{"arn": "arn:aws:ecs:us-east-1:123456789012:task-definition/" + cell + "-task:1"})
}

func stack(cell, region string, rs ...*offline.Resource) LedgerStack {
	return LedgerStack{Name: cell, Cell: cell, Region: region, Resources: rs}
}

func find(parts []Part, kind, id string) *Part {
	for i := range parts {
		if parts[i].Kind == kind && parts[i].ID == id {
			return &parts[i]
		}
	}
	return nil
}

var halves = map[string]TenantShare{"cell-a": {Share: 0.5, Pinned: 1}, "cell-b": {Share: 0.25}, "cell-c": {Share: 0.25}}

// Two cells whose tasks name the same SNS topic share it: the ledger
// lists it with both cells and their tenants; a topic only one cell names
// is that cell's.
func TestATopicTwoCellsNameIsASharedPart(t *testing.T) {
	parts := DeriveLedger(LedgerInput{
		Cells: []LedgerStack{
			stack("cell-a", "us-east-1", taskDef("cell-a", map[string]string{"EVENTS": topic})),
			stack("cell-b", "us-east-1", taskDef("cell-b", map[string]string{"EVENTS": topic})),
			stack("cell-c", "us-east-1", taskDef("cell-c", map[string]string{"AUDIT": "arn:aws:sns:us-east-1:123456789012:cell-c-audit"})),
		},
		Shares: halves, PlaceholderAccount: "123456789012",
	})
	p := find(parts, "sns-topic", topic)
	if p == nil {
		t.Fatalf("no sns-topic part in %+v", parts)
	}
	if strings.Join(p.Cells, ",") != "cell-a,cell-b" || p.TenantShare != 0.75 || p.Pinned != 1 || p.Plane != RequestPath || p.Why != unclassifiedWhy {
		t.Errorf("part = %+v", p)
	}
	if len(p.Uses) == 0 || p.Uses[0].Resource != "cell-a-task" || p.Uses[0].Property != "containerDefinitions" {
		t.Errorf("uses = %+v", p.Uses)
	}
	if find(parts, "sns-topic", "arn:aws:sns:us-east-1:123456789012:cell-c-audit") != nil {
		t.Error("a topic named after one cell is listed as shared")
	}
	for _, want := range [][2]string{{KindImageRepository, "registry.example.com/shop/api"}, {KindAccount, CurrentAccount}, {KindRegion, "us-east-1"}} {
		if q := find(parts, want[0], want[1]); q == nil || len(q.Cells) != 3 {
			t.Errorf("%s %s: %+v", want[0], want[1], q)
		}
	}
}

// A cell's own resources, its prefix of the fleet bucket, and constants
// every cell spells the same are not shared parts; the bucket is.
func TestOwnResourcesAndPrefixesAreNotSharedButTheBucketIs(t *testing.T) {
	policy := func(cell string) *offline.Resource {
		return res(cell, "aws:iam/rolePolicy:RolePolicy", cell+"-task-policy", map[string]any{
			"policy": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::fleet-bucket/cells/` + cell + `/*"},` +
				`{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"` + queue(cell).Outputs["arn"].StringValue() + `"}]}`,
		}, nil)
	}
	parts := DeriveLedger(LedgerInput{Cells: []LedgerStack{
		stack("cell-a", "us-east-1", queue("cell-a"), policy("cell-a")),
		stack("cell-b", "us-west-2", queue("cell-b"), policy("cell-b")),
	}})
	for _, p := range parts {
		if p.Kind == "sqs-queue" {
			t.Errorf("a cell's own queue is listed: %+v", p)
		}
	}
	b := find(parts, KindBucket, "fleet-bucket")
	if b == nil || len(b.Cells) != 2 || b.Plane != RequestPath {
		t.Fatalf("bucket part = %+v in %+v", b, parts)
	}
	if find(parts, KindRegion, "us-east-1") != nil {
		t.Error("two cells in two regions share a region")
	}
}

// The router's distributions and edge function are every routed cell's
// request path; the staging distribution reaches at most CloudFront's
// continuous-deployment weight of it. What the router references outside
// itself (the viewer zone) is every routed cell's too, and a router
// resource the cells reference (the fleet bucket) is owned by the router
// and homed in its region — which makes the region a part of every cell
// that reads it.
func TestTheRouterIsSharedByEveryRoutedCell(t *testing.T) {
	router := LedgerStack{Name: "router", Region: "us-east-1", Resources: []*offline.Resource{
		res("router", "aws:s3/bucketV2:BucketV2", "router-bucket", map[string]any{"bucket": "fleet-bucket"},
			map[string]any{"arn": "arn:aws:s3:::fleet-bucket", "bucket": "fleet-bucket"}),
		res("router", "aws:lambda/function:Function", "router-edge", map[string]any{"runtime": "nodejs24.x"}, nil),
		res("router", "aws:cloudfront/distribution:Distribution", "router-cdn", map[string]any{}, nil),
		res("router", "aws:cloudfront/distribution:Distribution", "router-cdn-staging", map[string]any{"staging": true}, nil),
		res("router", "aws:route53/record:Record", "router-viewer", map[string]any{"zoneId": "Z0987654321ZYXWVUTSRQ",
			"aliases": []any{map[string]any{"zoneId": "Z2FDTNDATAQYW2"}}}, nil),
	}}
	reads := func(cell string) *offline.Resource {
		return res(cell, "aws:iam/rolePolicy:RolePolicy", cell+"-task-policy", map[string]any{
			"policy": `{"Statement":[{"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::fleet-bucket"}]}`}, nil)
	}
	parts := DeriveLedger(LedgerInput{
		Cells:  []LedgerStack{stack("cell-a", "us-east-1", reads("cell-a")), stack("cell-b", "us-east-1"), stack("cell-d", "us-west-2", reads("cell-d"))},
		Router: &router, Routed: []string{"cell-a", "cell-b", "cell-d"},
		Shares: map[string]TenantShare{"cell-a": {Share: 0.5}, "cell-b": {Share: 0.25}, "cell-d": {Share: 0.25}},
	})
	for _, id := range []string{"router-cdn", "router-cdn-staging"} {
		p := find(parts, KindDistribution, id)
		if p == nil || len(p.Cells) != 3 || p.Owner != OwnerRouter || p.Plane != RequestPath {
			t.Fatalf("%s = %+v", id, p)
		}
	}
	if p := find(parts, KindDistribution, "router-cdn"); p.TenantShare != 1 {
		t.Errorf("primary reaches %v of tenants, want all", p.TenantShare)
	}
	if p := find(parts, KindDistribution, "router-cdn-staging"); p.TenantShare > 0.15+1e-9 || p.Detail == "" {
		t.Errorf("staging = %+v", p)
	}
	if p := find(parts, KindEdgeFunction, "router-edge"); p == nil || p.TenantShare != 1 {
		t.Errorf("edge = %+v", p)
	}
	if p := find(parts, KindDNSZone, "Z0987654321ZYXWVUTSRQ"); p == nil || len(p.Cells) != 3 {
		t.Errorf("viewer zone = %+v", p)
	}
	if find(parts, KindDNSZone, "Z2FDTNDATAQYW2") != nil {
		t.Error("an alias target's service zone is listed as a hosted zone")
	}
	b := find(parts, KindBucket, "fleet-bucket")
	if b == nil || b.Owner != OwnerRouter || b.Region != "us-east-1" || strings.Join(b.Cells, ",") != "cell-a,cell-d" {
		t.Fatalf("bucket = %+v", b)
	}
	r := find(parts, KindRegion, "us-east-1")
	if r == nil || strings.Join(r.Cells, ",") != "cell-a,cell-b,cell-d" {
		t.Fatalf("us-east-1 = %+v: cell-d reads the bucket there", r)
	}
}

// The origin-verify secret is found by its value in secret inputs; the
// value is matched, never reported, and other secrets are not it.
func TestTheFleetSecretIsFoundByItsValue(t *testing.T) {
	rule := func(cell, value string) *offline.Resource {
		r := res(cell, "aws:lb/listenerRule:ListenerRule", cell+"-forward", nil, nil)
		r.Inputs = resource.PropertyMap{"conditions": resource.NewArrayProperty([]resource.PropertyValue{
			resource.NewObjectProperty(resource.PropertyMap{"values": resource.MakeSecret(resource.NewStringProperty(value))}),
		})}
		return r
	}
	in := LedgerInput{
		Cells:   []LedgerStack{stack("cell-a", "", rule("cell-a", "placeholder")), stack("cell-b", "", rule("cell-b", "placeholder")), stack("cell-c", "", rule("cell-c", "other"))},
		Secrets: map[string]string{"placeholder": "cells:originVerifySecret"},
	}
	parts := DeriveLedger(in)
	p := find(parts, KindSecret, "cells:originVerifySecret")
	if p == nil || strings.Join(p.Cells, ",") != "cell-a,cell-b" || p.Plane != RequestPath {
		t.Fatalf("secret part = %+v", p)
	}
	out, _ := json.Marshal(parts)
	if strings.Contains(string(out), "placeholder") || strings.Contains(string(out), "other") {
		t.Errorf("a secret value reached the ledger: %s", out)
	}
}

// Every stack's state is in the one backend and its secrets under its
// file's provider: control-plane parts no render shows.
func TestTheBackendAndSecretsProviderAreControlPlane(t *testing.T) {
	parts := DeriveLedger(LedgerInput{
		Cells:            []LedgerStack{stack("cell-a", ""), stack("cell-b", ""), stack("cell-c", "")},
		Backend:          "s3://acme-state",
		SecretsProviders: map[string]string{"cell-a": "awskms://alias/fleet", "cell-b": "awskms://alias/fleet"},
	})
	be := find(parts, KindStateBackend, BackendID)
	if be == nil || be.Plane != ControlPlane || be.Detail != "s3://acme-state" || len(be.Cells) != 3 {
		t.Fatalf("backend = %+v", be)
	}
	if kms := find(parts, KindSecretsProvider, "awskms://alias/fleet"); kms == nil || len(kms.Cells) != 2 || kms.Plane != ControlPlane {
		t.Errorf("kms = %+v", kms)
	}
	if find(parts, KindSecretsProvider, DefaultSecretsProvider) != nil {
		t.Error("one cell on the default provider is listed as shared")
	}
	if parts[len(parts)-1].Plane != ControlPlane || parts[0].Plane != RequestPath && len(parts) > 2 {
		t.Errorf("request path is not first: %+v", parts)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"awskms://alias/fleet?region=us-east-1": "awskms://alias/fleet",
		"hashivault://user:pw@vault/key":        "hashivault://vault/key",
		"passphrase":                            "passphrase",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
