package provider_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/awssts"
	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

const (
	cellAccount = "222233334444"
	cellRole    = "arn:aws:iam::222233334444:role/cellctl-deploy"
)

// homeWithRole is a cloud whose second account holds cellctl-deploy
// (trusting the home account) and guarded (requiring an external id).
func homeWithRole(t *testing.T) (string, *store.Cloud) {
	t.Helper()
	dir := t.TempDir()
	c, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddRole(cellAccount, "cellctl-deploy", nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddRole(cellAccount, "guarded", nil, "fleet-7f3a"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddRole(cellAccount, "vendor-only", []string{"999988887777"}, ""); err != nil {
		t.Fatal(err)
	}
	return dir, c
}

func configure(h *simtest.Harness, cfg resource.PropertyMap) error {
	_, err := h.P.Configure(h.Ctx, plugin.ConfigureRequest{Inputs: cfg})
	return err
}

// A provider configured with aws:assumeRole works in the role's account:
// what it creates lands in that account's store with that account's id
// in its ARNs, reads and deletes there, and the home account is
// untouched.
func TestAProviderThatAssumesARoleWorksInItsAccount(t *testing.T) {
	for _, shape := range []struct {
		name string
		role resource.PropertyValue
	}{
		{"object", resource.NewObjectProperty(simtest.PM("roleArn", cellRole, "sessionName", "cell-a", "duration", "1h"))},
		{"JSON text", resource.NewStringProperty(`{"roleArn":"` + cellRole + `","sessionName":"cell-a"}`)},
	} {
		t.Run(shape.name, func(t *testing.T) {
			dir, home := homeWithRole(t)
			h := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a"}, "")
			if err := configure(h, resource.PropertyMap{"region": resource.NewStringProperty("eu-west-1"), "assumeRole": shape.role}); err != nil {
				t.Fatal(err)
			}
			q := h.Create(simtest.TQueue, "cell-a-jobs", simtest.PM())
			if arn := simtest.S(q.Out, "arn"); !strings.Contains(arn, ":"+cellAccount+":") {
				t.Errorf("queue ARN %s does not carry the assumed account", arn)
			}
			second, err := home.Account(cellAccount)
			if err != nil {
				t.Fatal(err)
			}
			if rs, _ := second.Resources(store.Filter{Stack: "cell-a"}); len(rs) != 1 {
				t.Errorf("second account's resources = %+v", rs)
			}
			if rs, _ := home.Resources(store.Filter{}); len(rs) != 0 {
				t.Errorf("home account gained %+v", rs)
			}
			if rd := h.Read(q); rd.Outputs == nil {
				t.Error("the queue does not read back from its account")
			}
			if err := h.Delete(q); err != nil {
				t.Fatal(err)
			}
			if rs, _ := second.Resources(store.Filter{}); len(rs) != 0 {
				t.Errorf("deleted queue still in the second account: %+v", rs)
			}
			inv, err := h.P.Invoke(h.Ctx, plugin.InvokeRequest{Tok: "aws:index/getCallerIdentity:getCallerIdentity", Args: simtest.PM()})
			if err == nil && simtest.S(inv.Properties, "accountId") != "" && simtest.S(inv.Properties, "accountId") != cellAccount {
				t.Errorf("getCallerIdentity in the assumed account = %v", inv.Properties)
			}
		})
	}
}

// A role the home account may not assume fails Configure with
// pulumi-aws's wording and STS's AccessDenied, before any resource.
func TestConfigureFailsWhenTheRoleCannotBeAssumed(t *testing.T) {
	dir, _ := homeWithRole(t)
	caller := "arn:aws:iam::" + awsmodel.DefaultAccount + ":user/" + store.HomeUser
	for _, c := range []struct {
		what string
		role resource.PropertyMap
		want string
	}{
		{"a role nobody registered", simtest.PM("roleArn", "arn:aws:iam::222233334444:role/nobody"),
			awssts.AssumeRoleDenied(caller, "arn:aws:iam::222233334444:role/nobody")},
		{"an untrusting role", simtest.PM("roleArn", "arn:aws:iam::222233334444:role/vendor-only"),
			awssts.AssumeRoleDenied(caller, "arn:aws:iam::222233334444:role/vendor-only")},
		{"a missing external id", simtest.PM("roleArn", "arn:aws:iam::222233334444:role/guarded"),
			awssts.AssumeRoleDenied(caller, "arn:aws:iam::222233334444:role/guarded")},
		{"a wrong external id", simtest.PM("roleArn", "arn:aws:iam::222233334444:role/guarded", "externalId", "fleet-0000"),
			awssts.AssumeRoleDenied(caller, "arn:aws:iam::222233334444:role/guarded")},
		{"a 5-minute session", simtest.PM("roleArn", cellRole, "duration", "5m"), awssts.STSValidation},
	} {
		h := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a"}, "")
		err := configure(h, resource.PropertyMap{"region": resource.NewStringProperty("us-east-1"), "assumeRole": resource.NewObjectProperty(c.role)})
		if err == nil || !strings.HasPrefix(err.Error(), "IAM Role ("+c.role["roleArn"].StringValue()+") cannot be assumed.") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.what, err)
		}
	}
	h := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a"}, "")
	if err := configure(h, resource.PropertyMap{"assumeRole": resource.NewObjectProperty(simtest.PM("roleArn", "arn:aws:iam::222233334444:role/guarded", "externalId", "fleet-7f3a"))}); err != nil {
		t.Errorf("the right external id: %v", err)
	}
	if err := configure(h, resource.PropertyMap{"assumeRole": resource.NewObjectProperty(simtest.PM("roleArn", "not-an-arn"))}); err == nil || !strings.Contains(err.Error(), "is not an IAM role ARN") {
		t.Errorf("a malformed role ARN: %v", err)
	}
}

// allowedAccountIds applies to the account the provider works in.
func TestAllowedAccountIDsApplyToTheAssumedAccount(t *testing.T) {
	dir, _ := homeWithRole(t)
	role := resource.NewObjectProperty(simtest.PM("roleArn", cellRole))
	h := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a"}, "")
	if err := configure(h, resource.PropertyMap{"assumeRole": role, "allowedAccountIds": resource.NewArrayProperty([]resource.PropertyValue{resource.NewStringProperty(cellAccount)})}); err != nil {
		t.Errorf("the assumed account allowed: %v", err)
	}
	err := configure(h, resource.PropertyMap{"assumeRole": role, "allowedAccountIds": resource.NewArrayProperty([]resource.PropertyValue{resource.NewStringProperty(awsmodel.DefaultAccount)})})
	if err == nil || !strings.Contains(err.Error(), "AWS account ID not allowed: "+cellAccount) {
		t.Errorf("only the home account allowed: %v", err)
	}
	chk, err := h.P.CheckConfig(h.Ctx, plugin.CheckConfigRequest{News: resource.PropertyMap{"assumeRole": role,
		"allowedAccountIds": resource.NewArrayProperty([]resource.PropertyValue{resource.NewStringProperty(cellAccount)})}})
	if err != nil || len(chk.Failures) != 0 {
		t.Errorf("CheckConfig = %+v, %v", chk.Failures, err)
	}
	dc, _ := h.P.DiffConfig(h.Ctx, plugin.DiffConfigRequest{OldInputs: resource.PropertyMap{}, NewInputs: resource.PropertyMap{"assumeRole": role}})
	if len(dc.ReplaceKeys) != 1 || dc.ReplaceKeys[0] != "assumeRole" {
		t.Errorf("moving a provider to another account does not replace it: %+v", dc)
	}
}

// Through the gRPC server, as the engine attaches: the stack's default
// provider assumes the cell's role while an explicit one (a DNS or
// us-east-1 provider) stays in the home account; each connection keeps
// its account.
func TestServerKeepsTheAccountPerConnection(t *testing.T) {
	dir, home := homeWithRole(t)
	srv, err := provider.Start(context.Background(), provider.Options{Dir: dir, Stack: "cell-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ctx := context.Background()
	marshal := func(m resource.PropertyMap) *structpb.Struct {
		s, err := plugin.MarshalProperties(m, plugin.MarshalOptions{KeepSecrets: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	open := func(name string, cfg resource.PropertyMap) pulumirpc.ResourceProviderClient {
		conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		c := pulumirpc.NewResourceProviderClient(conn)
		urn := "urn:pulumi:cell-a::cells::pulumi:providers:aws::" + name
		if _, err := c.Configure(ctx, &pulumirpc.ConfigureRequest{Args: marshal(cfg), AcceptSecrets: true, AcceptResources: true, Urn: &urn}); err != nil {
			t.Fatalf("configure %s: %v", name, err)
		}
		return c
	}
	create := func(c pulumirpc.ResourceProviderClient, name string) string {
		urn := "urn:pulumi:cell-a::cells::" + simtest.TQueue + "::" + name
		chk, err := c.Check(ctx, &pulumirpc.CheckRequest{Urn: urn, Name: name, Type: simtest.TQueue, News: marshal(simtest.PM()), RandomSeed: []byte(name)})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Create(ctx, &pulumirpc.CreateRequest{Urn: urn, Name: name, Type: simtest.TQueue, Properties: chk.Inputs})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return resp.Properties.Fields["arn"].GetStringValue()
	}
	cell := open("default_6_83_4", simtest.PM("region", "eu-west-1", "assumeRole", map[string]any{"roleArn": cellRole}))
	dns := open("dns", simtest.PM("region", "us-east-1"))
	inCell, inHome := create(cell, "cell-a-jobs"), create(dns, "cell-a-dns-jobs")
	if !strings.Contains(inCell, ":eu-west-1:"+cellAccount+":") || !strings.Contains(inHome, ":us-east-1:"+awsmodel.DefaultAccount+":") {
		t.Errorf("ARNs %s, %s", inCell, inHome)
	}
	second, _ := home.Account(cellAccount)
	if rs, _ := second.Resources(store.Filter{}); len(rs) != 1 || rs[0].Name != "cell-a-jobs" {
		t.Errorf("second account = %+v", rs)
	}
	if rs, _ := home.Resources(store.Filter{}); len(rs) != 1 || rs[0].Name != "cell-a-dns-jobs" {
		t.Errorf("home account = %+v", rs)
	}
}
