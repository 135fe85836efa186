package awsmodel_test

import (
	"strings"
	"testing"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/lambda"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/lb"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/offline"
)

var _ offline.Model = (*awsmodel.Mock)(nil)

// program is a miniature cell + edge: enough to see ids, ARNs, autonames,
// explicit-provider regions, invokes and stack references under mocks.
func program(ctx *pulumi.Context) error {
	azs, err := aws.GetAvailabilityZones(ctx, &aws.GetAvailabilityZonesArgs{State: pulumi.StringRef("available")})
	if err != nil {
		return err
	}
	vpc, err := ec2.NewVpc(ctx, "cell-a-vpc", &ec2.VpcArgs{CidrBlock: pulumi.String("10.1.0.0/16")})
	if err != nil {
		return err
	}
	sn1, err := ec2.NewSubnet(ctx, "cell-a-public-0", &ec2.SubnetArgs{VpcId: vpc.ID(), CidrBlock: pulumi.String("10.1.0.0/24"), AvailabilityZone: pulumi.String(azs.Names[0])})
	if err != nil {
		return err
	}
	sn2, err := ec2.NewSubnet(ctx, "cell-a-public-1", &ec2.SubnetArgs{VpcId: vpc.ID(), CidrBlock: pulumi.String("10.1.1.0/24"), AvailabilityZone: pulumi.String(azs.Names[1])})
	if err != nil {
		return err
	}
	eip, err := ec2.NewEip(ctx, "cell-a-nat-eip", &ec2.EipArgs{Domain: pulumi.String("vpc")})
	if err != nil {
		return err
	}
	nat, err := ec2.NewNatGateway(ctx, "cell-a-nat", &ec2.NatGatewayArgs{SubnetId: sn1.ID(), AllocationId: eip.AllocationId})
	if err != nil {
		return err
	}
	alb, err := lb.NewLoadBalancer(ctx, "cell-a-alb", &lb.LoadBalancerArgs{Subnets: pulumi.StringArray{sn1.ID(), sn2.ID()}})
	if err != nil {
		return err
	}
	q, err := sqs.NewQueue(ctx, "cell-a-jobs", &sqs.QueueArgs{})
	if err != nil {
		return err
	}
	edge, err := aws.NewProvider(ctx, "edge", &aws.ProviderArgs{Region: pulumi.String("us-east-1")})
	if err != nil {
		return err
	}
	role, err := iam.NewRole(ctx, "edge-role", &iam.RoleArgs{AssumeRolePolicy: pulumi.String(`{"Version":"2012-10-17","Statement":[]}`)})
	if err != nil {
		return err
	}
	fn, err := lambda.NewFunction(ctx, "router-edge", &lambda.FunctionArgs{
		Role: role.Arn, Runtime: pulumi.String("nodejs24.x"), Handler: pulumi.String("index.handler"), Publish: pulumi.Bool(true),
		Code: pulumi.NewAssetArchive(map[string]interface{}{"index.js": pulumi.NewStringAsset("exports.handler=async()=>{}")}),
	}, pulumi.Provider(edge))
	if err != nil {
		return err
	}
	ref, err := pulumi.NewStackReference(ctx, "cell-a", &pulumi.StackReferenceArgs{Name: pulumi.String("org/cells/cell-a")})
	if err != nil {
		return err
	}
	ctx.Export("albDns", alb.DnsName)
	ctx.Export("natIp", nat.PublicIp)
	ctx.Export("eipIp", eip.PublicIp)
	ctx.Export("queueUrl", q.Url)
	ctx.Export("queueName", q.Name)
	ctx.Export("fnArn", fn.QualifiedArn)
	ctx.Export("cellAlb", ref.GetStringOutput(pulumi.String("albDnsName")))
	ctx.Export("vpcArn", vpc.Arn)
	return nil
}

func runMock(t *testing.T) map[string]offline.Value {
	t.Helper()
	m := awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: "123456789012", Region: "eu-west-1"})
	m.SetStackOutputs("cell-a", resource.PropertyMap{"albDnsName": resource.NewStringProperty("cell-a-alb.example")})
	_, exports, err := offline.Run(offline.Options{Project: "cells", Stack: "router"}, m, program)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	vals, err := offline.AwaitAll(exports)
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

func TestMockRunsAProgram(t *testing.T) {
	vals := runMock(t)
	s := func(k string) string { return vals[k].Value.(string) }
	if !strings.HasPrefix(s("albDns"), "cell-a-alb-") || !strings.HasSuffix(s("albDns"), ".eu-west-1.elb.amazonaws.com") {
		t.Errorf("albDns = %q", s("albDns"))
	}
	if s("natIp") != s("eipIp") {
		t.Errorf("NAT public IP %q differs from its EIP's %q", s("natIp"), s("eipIp"))
	}
	if want := "https://sqs.eu-west-1.amazonaws.com/123456789012/" + s("queueName"); s("queueUrl") != want {
		t.Errorf("queueUrl = %q, want %q", s("queueUrl"), want)
	}
	if !strings.HasPrefix(s("fnArn"), "arn:aws:lambda:us-east-1:123456789012:function:router-edge-") || !strings.HasSuffix(s("fnArn"), ":1") {
		t.Errorf("function ARN %q: want the explicit provider's us-east-1 and version 1", s("fnArn"))
	}
	if !strings.HasPrefix(s("vpcArn"), "arn:aws:ec2:eu-west-1:123456789012:vpc/vpc-0") {
		t.Errorf("vpcArn = %q", s("vpcArn"))
	}
	if s("cellAlb") != "cell-a-alb.example" {
		t.Errorf("stack reference output = %q", s("cellAlb"))
	}
	// Deterministic: a second run prints the same values.
	again := runMock(t)
	for k, v := range vals {
		if again[k].Value != v.Value {
			t.Errorf("%s differs between runs: %v vs %v", k, v.Value, again[k].Value)
		}
	}
}
