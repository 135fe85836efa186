// Package component is the router stack's Pulumi ComponentResource: the
// fleet bucket in which every cell owns cells/<id>/, the Lambda@Edge
// function that maps tenant → cell from a routing table baked into its
// package, and the CloudFront distribution with one origin whose domain
// the function sets per request to the tenant's cell. It lives apart from package router so the routing table code never
// compiles the AWS SDK.
package component

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/acm"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudfront"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/kms"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/lambda"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/route53"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/s3"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/policy"
	"github.com/cellctl/cellctl/router/canary"
	"github.com/cellctl/cellctl/router/edge"
)

// TypeToken is the component's Pulumi type.
const TypeToken = "cellctl:index:Router"

// EdgeRegion is where Lambda@Edge functions must live.
const EdgeRegion = "us-east-1"

// AWS-managed CloudFront policies: an API must not cache tenant traffic,
// and the edge function needs the viewer's Host (tenant fallback) and the
// tenant header.
const (
	CachingDisabledPolicyID = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad" // Managed-CachingDisabled
	AllViewerRequestPolicy  = "216adef6-5c7f-47e4-b989-5492eafa07d3" // Managed-AllViewer
)

// Origin is one cell the edge function may send requests to (its DNS name
// is baked into config.json; the distribution has one origin for all).
type Origin struct {
	Cell string
	// DNSName is the cell's own DNS name, <cell id>.<fleetDomain> (its
	// dnsName stack output): the name the cell's ALB certificate covers,
	// so CloudFront's HTTPS connection to it validates.
	DNSName pulumi.StringInput
}

// CodeFunc builds the edge function's files from the cells' origin domain
// names (cell id → DNS name). The routing table is baked in by it.
type CodeFunc func(origins map[string]string) (map[string]string, error)

// RouterArgs are the router's inputs.
type RouterArgs struct {
	// BucketName is the fleet bucket (cells/<id>/ per cell).
	BucketName string
	// CellGrants are the cells in other accounts than the router's that
	// still have a stack (routed, draining or drained): each gets an
	// access point whose policy grants its own prefix (the bucket policy
	// delegates to the account's access points), and the key policy the
	// bucket's key through S3. The bucket is encrypted with that key whatever the list.
	CellGrants []CellGrant
	// Origins are the routable cells (active and draining), in table order.
	Origins []Origin
	// Code builds the function package.
	Code CodeFunc
	// TableVersion is the routing table version baked into the code,
	// TableChecksum its content checksum (router.Table.Checksum) and
	// TableGeneratedAt its generated_at: the function's description and
	// the stack's outputs carry them, so an operator can tell which table
	// each distribution serves.
	TableVersion     int64
	TableChecksum    string
	TableGeneratedAt string
	// PriceClass of the distribution.
	PriceClass string
	// OriginVerifySecret is sent to every origin in X-Origin-Verify; the
	// cells' ALBs forward only requests carrying it. A Pulumi secret.
	OriginVerifySecret pulumi.StringInput
	// Tags for every taggable child.
	Tags map[string]string
	// MemoryMB of the edge function (0: 128); the fleet loader checks the
	// routing table fits it.
	MemoryMB int
	// EdgeProvider holds the stack's aws:* settings for the explicit
	// us-east-1 provider (see EdgeProviderArgs); nil: region only.
	EdgeProvider *aws.ProviderArgs
	// ViewerDomains are the tenant-facing names (CloudFront aliases).
	// Empty: viewers reach only the distribution's *.cloudfront.net name.
	ViewerDomains []string
	// ViewerHostedZoneID is the Route 53 zone of the viewer domains' alias
	// records (and of the certificate's validation records).
	ViewerHostedZoneID string
	// ViewerCertificateArn is an existing us-east-1 certificate covering
	// every viewer domain; empty: the router requests a DNS-validated one.
	ViewerCertificateArn string
	// Traffic is the split between the primary and the staging
	// distribution for this run (a router canary step); nil: stable, both
	// run the function's newest version.
	Traffic *canary.Traffic
	// AttachPolicy attaches the continuous deployment policy to the
	// primary distribution. False on the router's first create: CloudFront
	// refuses a policy during distribution creation, so the primary is
	// created without it and the engine's second pass attaches it
	// (docs/ARCHITECTURE.md, "The router's create/update sequence").
	AttachPolicy bool
	// HoldLinkedFields keeps the primary distribution's settings CloudFront
	// locks on a linked distribution (awsfacts.CloudFrontCDLockedFields) as
	// they are deployed (Pulumi ignoreChanges): the pass that detaches the
	// policy, and the one that attaches it again after a failed change,
	// change nothing CloudFront would refuse (docs/ARCHITECTURE.md,
	// "Changing a linked distribution").
	HoldLinkedFields bool
	// Dashboard is the fleet's CloudWatch dashboard (dashboard.go); nil:
	// none.
	Dashboard *DashboardArgs
}

// Router is the global stack's component.
type Router struct {
	pulumi.ResourceState

	Bucket       *s3.BucketV2
	BucketPolicy *s3.BucketPolicy
	// AccessPoints are the bucket's access points, one per CellGrant in
	// its order: each cross-account cell's way to its prefix.
	AccessPoints []*s3.AccessPoint
	// BucketKey is the bucket's customer managed key, its default
	// encryption (protected and retained: see bucketKey).
	BucketKey    *kms.Key
	EdgeProvider *aws.Provider
	EdgeRole     *iam.Role
	Function     *lambda.Function
	Distribution *cloudfront.Distribution
	// StagingDistribution and DeploymentPolicy are the continuous
	// deployment pair every router change is canaried through (staging.go).
	StagingDistribution *cloudfront.Distribution
	DeploymentPolicy    *cloudfront.ContinuousDeploymentPolicy
	// ViewerCertificate and its validation exist when the router requests
	// the viewer certificate itself; ViewerRecords are the alias records.
	ViewerCertificate           *acm.Certificate
	ViewerCertificateValidation *acm.CertificateValidation
	ViewerRecords               []*route53.Record
	// Dashboard is the fleet dashboard (nil without DashboardArgs).
	Dashboard *cloudwatch.Dashboard
	Outputs   pulumi.Map

	primaryArn, stagingArn pulumi.StringOutput
	attachedPolicy         pulumi.StringOutput
}

// NewRouter builds the router.
func NewRouter(ctx *pulumi.Context, name string, args *RouterArgs, opts ...pulumi.ResourceOption) (*Router, error) {
	if args == nil {
		return nil, errors.New("router: args are required")
	}
	if args.BucketName == "" || args.Code == nil || args.OriginVerifySecret == nil {
		return nil, errors.New("router: BucketName, Code and OriginVerifySecret are required")
	}
	if len(args.ViewerDomains) > 0 && args.ViewerHostedZoneID == "" {
		return nil, errors.New("router: viewer domains need ViewerHostedZoneID, the Route 53 zone of their alias records")
	}
	if len(args.Origins) == 0 {
		return nil, errors.New("router: no routable cell: CloudFront needs at least one origin (an active or draining cell in the routing table)")
	}
	if err := checkTraffic(args.Traffic); err != nil {
		return nil, err
	}
	r := &Router{}
	if err := ctx.RegisterComponentResource(TypeToken, name, r, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Parent(r)
	tags := pulumi.StringMap{"managed-by": pulumi.String(cellmodule.ManagedBy)}
	for k, v := range args.Tags {
		tags[k] = pulumi.String(v)
	}
	secret := pulumi.ToSecret(args.OriginVerifySecret.ToStringOutput()).(pulumi.StringOutput)

	if err := r.bucket(ctx, name, args, tags, parent); err != nil {
		return nil, err
	}
	if err := r.edgeFunction(ctx, name, args, tags, parent); err != nil {
		return nil, err
	}
	viewerCert, err := r.viewerCertificate(ctx, name, args, tags, parent)
	if err != nil {
		return nil, err
	}
	if err := r.distributions(ctx, name, args, secret, viewerCert, tags, parent); err != nil {
		return nil, err
	}
	if err := r.viewerRecords(ctx, name, args, parent); err != nil {
		return nil, err
	}
	if err := r.dashboard(ctx, name, args.Dashboard, parent); err != nil {
		return nil, err
	}
	r.Outputs = pulumi.Map{
		"distributionDomain": r.Distribution.DomainName,
		"distributionId":     r.Distribution.ID(),
		"tableVersion":       pulumi.Int(int(args.TableVersion)),
		"tableChecksum":      pulumi.String(args.TableChecksum),
		"tableGeneratedAt":   pulumi.String(args.TableGeneratedAt),
		"functionVersion":    r.Function.Version,
		"functionArn":        r.Function.QualifiedArn,
		"bucket":             r.Bucket.Bucket,
		"bucketKeyArn":       r.BucketKey.Arn,
		"origins":            pulumi.ToStringArray(originCells(args.Origins)),
		"viewerDomains":      pulumi.ToStringArray(append([]string{}, args.ViewerDomains...)),
	}
	for k, v := range r.canaryOutputs(args) {
		r.Outputs[k] = v
	}
	if r.Dashboard != nil {
		r.Outputs["dashboardName"] = r.Dashboard.DashboardName
	}
	if err := ctx.RegisterResourceOutputs(r, r.Outputs); err != nil {
		return nil, err
	}
	return r, nil
}

// FunctionDescription is the edge function's description, which every
// published version keeps: the routing table version and checksum it
// carries ("cellctl tenant router, routing table v7 sha256:1a2b…"), so
// `aws lambda get-function-configuration --qualifier N` names the table
// of any version a distribution runs.
func FunctionDescription(version int64, checksum string) string {
	d := fmt.Sprintf("cellctl tenant router, routing table v%d", version)
	if checksum != "" {
		d += " " + checksum
	}
	return d
}

func originCells(origins []Origin) []string {
	out := make([]string, len(origins))
	for i, o := range origins {
		out[i] = o.Cell
	}
	return out
}

// bucket is the fleet bucket: private, versioned, encrypted, TLS only.
func (r *Router) bucket(ctx *pulumi.Context, name string, args *RouterArgs, tags pulumi.StringMap, parent pulumi.ResourceOption) error {
	var err error
	r.Bucket, err = s3.NewBucketV2(ctx, name+"-bucket", &s3.BucketV2Args{
		Bucket: pulumi.String(args.BucketName),
		Tags:   tags,
	}, parent, pulumi.Protect(true))
	if err != nil {
		return err
	}
	if _, err := s3.NewBucketOwnershipControls(ctx, name+"-bucket-ownership", &s3.BucketOwnershipControlsArgs{
		Bucket: r.Bucket.ID(),
		Rule:   &s3.BucketOwnershipControlsRuleArgs{ObjectOwnership: pulumi.String("BucketOwnerEnforced")},
	}, parent); err != nil {
		return err
	}
	publicAccess, err := s3.NewBucketPublicAccessBlock(ctx, name+"-bucket-public-access", &s3.BucketPublicAccessBlockArgs{
		Bucket:                r.Bucket.ID(),
		BlockPublicAcls:       pulumi.Bool(true),
		BlockPublicPolicy:     pulumi.Bool(true),
		IgnorePublicAcls:      pulumi.Bool(true),
		RestrictPublicBuckets: pulumi.Bool(true),
	}, parent)
	if err != nil {
		return err
	}
	if _, err := s3.NewBucketVersioningV2(ctx, name+"-bucket-versioning", &s3.BucketVersioningV2Args{
		Bucket:                  r.Bucket.ID(),
		VersioningConfiguration: &s3.BucketVersioningV2VersioningConfigurationArgs{Status: pulumi.String("Enabled")},
	}, parent); err != nil {
		return err
	}
	where, err := r.locate(ctx)
	if err != nil {
		return err
	}
	roles := grantRoles(args.CellGrants)
	if r.BucketKey, err = r.bucketKey(ctx, name, where, roles, tags, parent); err != nil {
		return err
	}
	byDefault := &s3.BucketServerSideEncryptionConfigurationV2RuleApplyServerSideEncryptionByDefaultArgs{
		SseAlgorithm: pulumi.String("aws:kms"),
		// The key's ARN, not its id: S3 resolves a bare id in the
		// requester's account ("Using encryption for cross-account
		// operations", Amazon S3 User Guide).
		KmsMasterKeyId: r.BucketKey.Arn,
	}
	if _, err := s3.NewBucketServerSideEncryptionConfigurationV2(ctx, name+"-bucket-encryption", &s3.BucketServerSideEncryptionConfigurationV2Args{
		Bucket: r.Bucket.ID(),
		Rules: s3.BucketServerSideEncryptionConfigurationV2RuleArray{
			&s3.BucketServerSideEncryptionConfigurationV2RuleArgs{
				ApplyServerSideEncryptionByDefault: byDefault,
				BucketKeyEnabled:                   pulumi.Bool(true),
			},
		},
	}, parent); err != nil {
		return err
	}
	delegate := len(args.CellGrants) > 0
	policy := r.Bucket.Arn.ApplyT(func(arn string) (string, error) {
		statements := []policy.Statement{{
			Sid:       "DenyInsecureTransport",
			Effect:    policy.Deny,
			Principal: policy.Everyone(),
			Action:    policy.Values{"s3:*"},
			Resource:  policy.Values{arn, arn + "/*"},
			Condition: policy.Conditions{"Bool": {"aws:SecureTransport": {"false"}}},
			Scalar:    []string{"Action", "Condition"},
		}}
		// Cells in other accounts: one statement, whatever their number
		// (grants.go); a one-account fleet's policy is the TLS rule alone.
		if delegate {
			statements = append(statements, delegationStatement(where.partition, where.region, where.account, arn))
		}
		return routerPolicy(statements...).JSON()
	}).(pulumi.StringOutput)
	// The public access block must exist first: it does not stop this
	// Deny-only policy, but AWS evaluates both on every request.
	r.BucketPolicy, err = s3.NewBucketPolicy(ctx, name+"-bucket-policy", &s3.BucketPolicyArgs{
		Bucket: r.Bucket.ID(),
		Policy: policy,
	}, parent, pulumi.DependsOn([]pulumi.Resource{publicAccess}))
	if err != nil {
		return err
	}
	return r.accessPoints(ctx, name, args, where, parent)
}

// edgeFunction publishes the Lambda@Edge function with the routing table
// baked in. Lambda@Edge must live in us-east-1, whatever the stack's region.
func (r *Router) edgeFunction(ctx *pulumi.Context, name string, args *RouterArgs, tags pulumi.StringMap, parent pulumi.ResourceOption) error {
	var err error
	pargs := aws.ProviderArgs{}
	if args.EdgeProvider != nil {
		pargs = *args.EdgeProvider
	}
	pargs.Region = pulumi.String(EdgeRegion)
	r.EdgeProvider, err = aws.NewProvider(ctx, name+"-"+EdgeRegion, &pargs, parent)
	if err != nil {
		return err
	}
	trust, err := routerPolicy(policy.Statement{
		Effect:    policy.Allow,
		Principal: policy.ServicePrincipals("edgelambda.amazonaws.com", "lambda.amazonaws.com"),
		Action:    policy.Values{"sts:AssumeRole"},
		Scalar:    []string{"Action"},
	}).JSON()
	if err != nil {
		return err
	}
	r.EdgeRole, err = iam.NewRole(ctx, name+"-edge-role", &iam.RoleArgs{
		AssumeRolePolicy: pulumi.String(trust),
		Description:      pulumi.String("Lambda@Edge routing function of the cellctl router"),
		Tags:             tags,
	}, parent)
	if err != nil {
		return err
	}
	// Not the AWS managed AWSLambdaBasicExecutionRole: it allows writing
	// every log group of the account, the cells' included (the isolation
	// paths, internal/access, find it). The same actions on the edge
	// function's own groups: Lambda@Edge logs to
	// /aws/lambda/us-east-1.<function> in the region that ran it, and
	// Lambda to /aws/lambda/<function> ("Lambda@Edge CloudWatch metrics
	// and logs", CloudFront Developer Guide). Pulumi names the function
	// <name>-edge-<suffix>.
	logs, err := routerPolicy(policy.Statement{
		Sid:    "EdgeFunctionLogs",
		Effect: policy.Allow,
		Action: policy.Values{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"},
		Resource: policy.Values{
			"arn:aws:logs:*:*:log-group:/aws/lambda/" + EdgeRegion + "." + name + "-edge-*",
			"arn:aws:logs:*:*:log-group:/aws/lambda/" + name + "-edge-*",
		},
	}).JSON()
	if err != nil {
		return err
	}
	basic, err := iam.NewRolePolicy(ctx, name+"-edge-logs", &iam.RolePolicyArgs{
		Role:   r.EdgeRole.Name,
		Policy: pulumi.String(logs),
	}, parent)
	if err != nil {
		return err
	}
	dns := make([]any, len(args.Origins))
	for i, o := range args.Origins {
		dns[i] = o.DNSName
	}
	code := pulumi.All(dns...).ApplyT(func(vals []any) (pulumi.Archive, error) {
		origins := map[string]string{}
		for i, v := range vals {
			s, _ := v.(string)
			if s == "" {
				return nil, fmt.Errorf("cell %s has no DNS name (dnsName) in its stack outputs: run `cellctl up %s` first", args.Origins[i].Cell, args.Origins[i].Cell)
			}
			origins[args.Origins[i].Cell] = s
		}
		files, err := args.Code(origins)
		if err != nil {
			return nil, err
		}
		assets := map[string]any{}
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			assets[n] = pulumi.NewStringAsset(files[n])
		}
		return pulumi.NewAssetArchive(assets), nil
	}).(pulumi.ArchiveOutput)
	r.Function, err = lambda.NewFunction(ctx, name+"-edge", &lambda.FunctionArgs{
		Description: pulumi.String(FunctionDescription(args.TableVersion, args.TableChecksum)),
		Runtime:     pulumi.String(edge.Runtime),
		Handler:     pulumi.String(edge.Handler),
		Role:        r.EdgeRole.Arn,
		Code:        code,
		// Lambda@Edge: published versions only, no environment variables,
		// at most 5 s for viewer triggers and 30 s for origin triggers.
		Publish:    pulumi.Bool(true),
		Timeout:    pulumi.Int(5),
		MemorySize: pulumi.Int(max(args.MemoryMB, 128)),
		Tags:       tags,
		// CloudFront keeps replicas of every version it ran for hours after
		// the distribution stops using it, and Lambda refuses to delete a
		// replicated function. Replacing or destroying the function
		// therefore leaves it in AWS (Pulumi forgets it); the old versions
		// are deleted later by hand (docs/ARCHITECTURE.md, "Old edge
		// function versions").
		SkipDestroy: pulumi.Bool(true),
	}, parent, pulumi.Provider(r.EdgeProvider), pulumi.DependsOn([]pulumi.Resource{basic}))
	return err
}

// viewerCertificate returns the ARN of the certificate the distribution
// shows viewers: the configured one, or one the router requests in
// us-east-1 (CloudFront reads only there) and validates through DNS. ""
// without viewer domains.
func (r *Router) viewerCertificate(ctx *pulumi.Context, name string, args *RouterArgs, tags pulumi.StringMap, parent pulumi.ResourceOption) (pulumi.StringOutput, error) {
	if len(args.ViewerDomains) == 0 {
		return pulumi.String("").ToStringOutput(), nil
	}
	if args.ViewerCertificateArn != "" {
		return pulumi.String(args.ViewerCertificateArn).ToStringOutput(), nil
	}
	var err error
	r.ViewerCertificate, err = acm.NewCertificate(ctx, name+"-viewer-cert", &acm.CertificateArgs{
		DomainName:              pulumi.String(args.ViewerDomains[0]),
		SubjectAlternativeNames: pulumi.ToStringArray(args.ViewerDomains[1:]),
		ValidationMethod:        pulumi.String("DNS"),
		KeyAlgorithm:            pulumi.String("RSA_2048"),
		Tags:                    tags,
	}, parent, pulumi.Provider(r.EdgeProvider))
	if err != nil {
		return pulumi.StringOutput{}, err
	}
	// A wildcard and its base name share one validation record.
	var fqdns pulumi.StringArray
	seen := map[string]bool{}
	for _, d := range args.ViewerDomains {
		base := strings.TrimPrefix(d, "*.")
		if seen[base] {
			continue
		}
		seen[base] = true
		opt := r.ViewerCertificate.DomainValidationOptions.ApplyT(func(opts []acm.CertificateDomainValidationOption) (acm.CertificateDomainValidationOption, error) {
			for _, o := range opts {
				if o.DomainName != nil && strings.TrimPrefix(*o.DomainName, "*.") == base {
					return o, nil
				}
			}
			return acm.CertificateDomainValidationOption{}, fmt.Errorf("the viewer certificate reports no DNS validation record for %s", base)
		}).(acm.CertificateDomainValidationOptionOutput)
		rec, err := route53.NewRecord(ctx, name+"-viewer-validation-"+recordSuffix(base), &route53.RecordArgs{
			ZoneId:         pulumi.String(args.ViewerHostedZoneID),
			Name:           opt.ResourceRecordName().Elem(),
			Type:           opt.ResourceRecordType().Elem(),
			Records:        pulumi.StringArray{opt.ResourceRecordValue().Elem()},
			Ttl:            pulumi.Int(300),
			AllowOverwrite: pulumi.Bool(true),
		}, parent)
		if err != nil {
			return pulumi.StringOutput{}, err
		}
		fqdns = append(fqdns, rec.Fqdn)
	}
	r.ViewerCertificateValidation, err = acm.NewCertificateValidation(ctx, name+"-viewer-cert-validated", &acm.CertificateValidationArgs{
		CertificateArn:        r.ViewerCertificate.Arn,
		ValidationRecordFqdns: fqdns,
	}, parent, pulumi.Provider(r.EdgeProvider))
	if err != nil {
		return pulumi.StringOutput{}, err
	}
	return r.ViewerCertificateValidation.CertificateArn, nil
}

// recordSuffix turns a domain into a logical-name suffix ("*.app.example.com"
// → "wildcard-app-example-com").
func recordSuffix(domain string) string {
	return strings.ReplaceAll(strings.ReplaceAll(domain, "*", "wildcard"), ".", "-")
}

// viewerRecords points every viewer domain at the distribution (A and AAAA:
// the distribution serves IPv6).
func (r *Router) viewerRecords(ctx *pulumi.Context, name string, args *RouterArgs, parent pulumi.ResourceOption) error {
	for _, d := range args.ViewerDomains {
		for _, typ := range []string{"A", "AAAA"} {
			rec, err := route53.NewRecord(ctx, name+"-viewer-"+recordSuffix(d)+"-"+strings.ToLower(typ), &route53.RecordArgs{
				ZoneId: pulumi.String(args.ViewerHostedZoneID),
				Name:   pulumi.String(d),
				Type:   pulumi.String(typ),
				Aliases: route53.RecordAliasArray{route53.RecordAliasArgs{
					Name:                 r.Distribution.DomainName,
					ZoneId:               r.Distribution.HostedZoneId,
					EvaluateTargetHealth: pulumi.Bool(false),
				}},
			}, parent)
			if err != nil {
				return err
			}
			r.ViewerRecords = append(r.ViewerRecords, rec)
		}
	}
	return nil
}

func viewerCertificateArgs(args *RouterArgs, arn pulumi.StringOutput) *cloudfront.DistributionViewerCertificateArgs {
	if len(args.ViewerDomains) == 0 {
		return &cloudfront.DistributionViewerCertificateArgs{CloudfrontDefaultCertificate: pulumi.Bool(true)}
	}
	return &cloudfront.DistributionViewerCertificateArgs{
		AcmCertificateArn:      arn,
		SslSupportMethod:       pulumi.String("sni-only"),
		MinimumProtocolVersion: pulumi.String("TLSv1.2_2021"),
	}
}

// routerPolicy is a document of the router's: written with sorted keys
// and the single strings each statement's Scalar names, the text its
// documents have had since they were first deployed (built then as Go
// maps), so moving them to the typed document changed no deployed
// policy (internal/plan's TestRouterPoliciesRenderAsBefore).
func routerPolicy(statements ...policy.Statement) policy.Document {
	d := policy.New(statements...)
	d.Layout = policy.SortedKeys
	return d
}
