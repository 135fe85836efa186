//go:build e2e

package provider_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/elasticache"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/lambda"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optrefresh"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// smokeProgram: a VPC and subnet in the stack's region, a queue, a secret,
// and a Lambda@Edge-style function through an explicit us-east-1 provider.
func smokeProgram(ctx *pulumi.Context) error {
	azs, err := aws.GetAvailabilityZones(ctx, &aws.GetAvailabilityZonesArgs{State: pulumi.StringRef("available")})
	if err != nil {
		return err
	}
	vpc, err := ec2.NewVpc(ctx, "smoke-vpc", &ec2.VpcArgs{CidrBlock: pulumi.String("10.42.0.0/16"), Tags: pulumi.StringMap{"cell": pulumi.String("smoke")}})
	if err != nil {
		return err
	}
	if _, err := ec2.NewSubnet(ctx, "smoke-subnet", &ec2.SubnetArgs{VpcId: vpc.ID(), CidrBlock: pulumi.String("10.42.1.0/24"), AvailabilityZone: pulumi.String(azs.Names[0])}); err != nil {
		return err
	}
	q, err := sqs.NewQueue(ctx, "smoke-q", &sqs.QueueArgs{})
	if err != nil {
		return err
	}
	if _, err := elasticache.NewUser(ctx, "smoke-user", &elasticache.UserArgs{
		UserId: pulumi.String("smoke-app"), UserName: pulumi.String("app"), Engine: pulumi.String("redis"), AccessString: pulumi.String("on ~* +@all"),
		Passwords: pulumi.ToSecret(pulumi.StringArray{pulumi.String("correct-horse-battery-staple")}).(pulumi.StringArrayOutput),
	}); err != nil {
		return err
	}
	edge, err := aws.NewProvider(ctx, "edge", &aws.ProviderArgs{Region: pulumi.String("us-east-1")})
	if err != nil {
		return err
	}
	role, err := iam.NewRole(ctx, "smoke-edge-role", &iam.RoleArgs{AssumeRolePolicy: pulumi.String(simtest.AssumeRole)})
	if err != nil {
		return err
	}
	fn, err := lambda.NewFunction(ctx, "smoke-edge", &lambda.FunctionArgs{
		Role: role.Arn, Runtime: pulumi.String("nodejs24.x"), Handler: pulumi.String("index.handler"), Publish: pulumi.Bool(true),
		Code: pulumi.NewAssetArchive(map[string]interface{}{
			"index.js":    pulumi.NewStringAsset("exports.handler = async (e) => e.Records[0].cf.request"),
			"config.json": pulumi.NewStringAsset(`{"version":1}`),
		}),
	}, pulumi.Provider(edge))
	if err != nil {
		return err
	}
	ctx.Export("vpcArn", vpc.Arn)
	ctx.Export("queueUrl", q.Url)
	ctx.Export("edgeArn", fn.QualifiedArn)
	return nil
}

func TestE2EAttachToRealEngine(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	if _, err := os.Stat(filepath.Join(root, "bin", "pulumi")); err != nil {
		t.Skip("bin/pulumi not built")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	srv, err := provider.Start(ctx, provider.Options{Dir: filepath.Join(tmp, "sim"), Stack: "smoke", Log: testWriter{t},
		Latency: []store.Latency{{Op: store.OpCreate, Duration: store.Duration(20 * time.Millisecond)}, {Op: store.OpRead, Duration: store.Duration(5 * time.Millisecond)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()

	cmd, err := auto.NewPulumiCommand(&auto.PulumiCommandOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	backend := filepath.Join(tmp, "state")
	os.MkdirAll(backend, 0o755)
	stack, err := auto.UpsertStackInlineSource(ctx, "smoke", "simsmoke", smokeProgram,
		auto.Pulumi(cmd),
		auto.Project(workspace.Project{Name: "simsmoke", Runtime: workspace.NewProjectRuntimeInfo("go", nil),
			Backend: &workspace.ProjectBackend{URL: "file://" + backend}}),
		auto.SecretsProvider("passphrase"),
		auto.EnvVars(map[string]string{
			"PULUMI_DEBUG_PROVIDERS":   srv.DebugProviders(),
			"PULUMI_SKIP_UPDATE_CHECK": "true",
			"PULUMI_CONFIG_PASSPHRASE": "sim-e2e",
			"PULUMI_HOME":              filepath.Join(tmp, "home"),
			"PULUMI_BACKEND_URL":       "file://" + backend,
		}))
	if err != nil {
		t.Fatal(err)
	}
	if err := stack.SetConfig(ctx, "aws:region", auto.ConfigValue{Value: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	up, err := stack.Up(ctx)
	if err != nil {
		t.Fatalf("up: %v\n%s", err, up.StdErr)
	}
	t.Logf("first up: %s, %v", time.Since(start).Round(time.Millisecond), up.Summary.ResourceChanges)
	if arn := up.Outputs["vpcArn"].Value.(string); !strings.HasPrefix(arn, "arn:aws:ec2:eu-west-1:123456789012:vpc/vpc-0") {
		t.Errorf("vpcArn %s", arn)
	}
	if arn := up.Outputs["edgeArn"].Value.(string); !strings.HasPrefix(arn, "arn:aws:lambda:us-east-1:123456789012:function:smoke-edge-") || !strings.HasSuffix(arn, ":1") {
		t.Errorf("edgeArn %s (want the explicit provider's region)", arn)
	}
	files, err := srv.Cloud().FunctionCode("smoke-edge")
	if err != nil || files["config.json"] != `{"version":1}` {
		t.Errorf("function code %v %v", files, err)
	}

	start = time.Now()
	up2, err := stack.Up(ctx)
	if err != nil {
		t.Fatalf("second up: %v", err)
	}
	t.Logf("second up: %s, %v", time.Since(start).Round(time.Millisecond), up2.Summary.ResourceChanges)
	for op, n := range *up2.Summary.ResourceChanges {
		if op != "same" && n > 0 {
			t.Errorf("second up changed things: %v", up2.Summary.ResourceChanges)
		}
	}

	// Refresh (preview) of an untouched stack: no drift.
	pr, err := stack.PreviewRefresh(ctx)
	if err != nil {
		t.Fatalf("preview refresh: %v", err)
	}
	if pr.ChangeSummary[apitype.OpUpdate] != 0 || pr.ChangeSummary[apitype.OpDelete] != 0 {
		t.Errorf("clean refresh shows changes: %v\n%s", pr.ChangeSummary, pr.StdOut)
	}

	// Someone edits the VPC's tags in the console.
	if _, err := srv.Cloud().Edit("smoke", "smoke-vpc", "tags.owner", `"someone"`); err != nil {
		t.Fatal(err)
	}
	evs := make(chan events.EngineEvent)
	var diffs []string
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for e := range evs {
			for _, md := range []*apitype.StepEventMetadata{metaOf(e.ResourcePreEvent), metaOfOut(e.ResOutputsEvent)} {
				if md != nil && md.Op == apitype.OpUpdate {
					diffs = append(diffs, md.URN+" "+strings.Join(md.Diffs, ","))
				}
			}
		}
	}()
	pr, err = stack.PreviewRefresh(ctx, optrefresh.EventStreams(evs), optrefresh.Diff())
	if err != nil {
		t.Fatalf("preview refresh after edit: %v", err)
	}
	select {
	case <-collected:
	case <-time.After(10 * time.Second):
		t.Fatal("event stream not closed")
	}
	t.Logf("refresh after edit: %v; diffs %v", pr.ChangeSummary, diffs)
	if pr.ChangeSummary[apitype.OpUpdate] != 1 || len(diffs) != 1 || !strings.HasSuffix(diffs[0], "smoke-vpc tags") || !strings.Contains(pr.StdOut, `+ owner: "someone"`) {
		t.Errorf("drift not shown: %v %v\n%s", pr.ChangeSummary, diffs, pr.StdOut)
	}

	// up --refresh puts the program's tags back.
	up3, err := stack.Up(ctx, optup.Refresh())
	if err != nil {
		t.Fatalf("up --refresh: %v", err)
	}
	t.Logf("up --refresh: %v", up3.Summary.ResourceChanges)
	rs, _ := srv.Cloud().Resources(store.Filter{Name: "smoke-vpc"})
	if len(rs) != 1 || rs[0].Outputs["tags"].(map[string]any)["owner"] != nil {
		t.Errorf("drift not reconciled: %v", rs)
	}

	if _, err := stack.Destroy(ctx); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if rs, _ := srv.Cloud().Resources(store.Filter{}); len(rs) != 0 {
		t.Errorf("after destroy: %d resources left", len(rs))
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func metaOf(e *apitype.ResourcePreEvent) *apitype.StepEventMetadata {
	if e == nil {
		return nil
	}
	return &e.Metadata
}

func metaOfOut(e *apitype.ResOutputsEvent) *apitype.StepEventMetadata {
	if e == nil {
		return nil
	}
	return &e.Metadata
}
