package component

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudfront"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/router/canary"
)

// Continuous deployment: every router change is canaried.
//
// The router keeps, next to its primary distribution, a CloudFront staging
// distribution and a continuous deployment policy that links them. The two
// distributions are rendered by one function (distributionArgs) and differ
// only in the edge function version they run, so "promote the staging
// configuration" (AWS's UpdateDistributionWithStagingConfig) is, in Pulumi
// terms, the primary's function association taking the staging one's
// version in an ordinary update — declarative, previewable, and the state
// never disagrees with the cloud. Between canaries the staging
// distribution runs what the primary runs and the policy is disabled.
//
// CloudFront refuses continuous deployment on a distribution that supports
// HTTP/3 (Developer Guide, "Quotas and other considerations for continuous
// deployment"), so both distributions serve HTTP/2 and HTTP/1.1 only. The
// trade: viewers on lossy mobile networks lose QUIC's faster handshakes
// and loss recovery; in exchange no routing table or handler ever reaches
// 100 % of tenants without first passing a smoke test and a ≤ 15 % canary.

// HTTPVersion is what both distributions serve (see above).
const HTTPVersion = "http2"

// distributions creates the staging distribution, the policy and the
// primary distribution, in that order: the policy names the staging
// distribution's domain and the primary names the policy.
func (r *Router) distributions(ctx *pulumi.Context, name string, args *RouterArgs, secret, viewerCert pulumi.StringOutput, tags pulumi.StringMap, parent pulumi.ResourceOption) error {
	t := stableTraffic(args.Traffic)
	primaryArn := r.Function.QualifiedArn
	if t.PrimaryFunctionArn != "" {
		primaryArn = pulumi.String(t.PrimaryFunctionArn).ToStringOutput()
	}
	stagingArn := primaryArn
	if t.Phase != canary.Stable {
		stagingArn = r.Function.QualifiedArn // the candidate: the newest version
	}

	var err error
	sargs := distributionArgs(args, secret, viewerCert, tags, stagingArn)
	sargs.Staging = pulumi.Bool(true)
	sargs.Comment = pulumi.String("cellctl router staging: canary of the edge function")
	// Viewers never reach a staging distribution by name; CloudFront
	// routes to it from the primary. It has no aliases of its own.
	sargs.Aliases = pulumi.StringArray{}
	// The staging distribution is linked for as long as it exists (the
	// policy names it), so CloudFront refuses every change of its locked
	// settings (awsfacts.CloudFrontCDLockedFields): it keeps the ones it
	// was created with. Viewers reach it only through the primary, whose
	// settings they see; a new price class or certificate goes to the
	// primary alone, by the unlink sequence (internal/engine/routerseq.go).
	locked := pulumi.IgnoreChanges(awsfacts.CloudFrontCDLockedFields)
	r.StagingDistribution, err = cloudfront.NewDistribution(ctx, name+"-cdn-staging", sargs, parent, locked)
	if err != nil {
		return err
	}
	r.DeploymentPolicy, err = cloudfront.NewContinuousDeploymentPolicy(ctx, name+"-cdn-policy", &cloudfront.ContinuousDeploymentPolicyArgs{
		Enabled: pulumi.Bool(t.Phase != canary.Stable),
		StagingDistributionDnsNames: &cloudfront.ContinuousDeploymentPolicyStagingDistributionDnsNamesArgs{
			Items:    pulumi.StringArray{r.StagingDistribution.DomainName},
			Quantity: pulumi.Int(1),
		},
		TrafficConfig: trafficConfig(t),
	}, parent)
	if err != nil {
		return err
	}
	pargs := distributionArgs(args, secret, viewerCert, tags, primaryArn)
	// CloudFront refuses the policy on CreateDistribution: a first up
	// creates the primary without it, a second pass attaches it.
	// Detached, the id is rendered empty rather than left out: the
	// provider keeps an absent continuousDeploymentPolicyId as it was
	// (hashicorp/terraform-provider-aws#34511) and CloudFront detaches only
	// on an explicit empty id (aws/aws-sdk-js-v3#7417).
	attached := pulumi.String("").ToStringOutput()
	pargs.ContinuousDeploymentPolicyId = attached
	if args.AttachPolicy {
		attached = r.DeploymentPolicy.ID().ToStringOutput()
		pargs.ContinuousDeploymentPolicyId = attached
	}
	popts := []pulumi.ResourceOption{parent}
	if args.HoldLinkedFields {
		popts = append(popts, pulumi.IgnoreChanges(awsfacts.CloudFrontCDLockedFields))
	}
	r.Distribution, err = cloudfront.NewDistribution(ctx, PrimaryDistributionName(name), pargs, popts...)
	r.attachedPolicy = attached
	r.primaryArn, r.stagingArn = primaryArn, stagingArn
	return err
}

// PrimaryDistributionName is the logical name of the router's primary
// distribution (the engine looks for it in the router's state).
func PrimaryDistributionName(router string) string { return router + "-cdn" }

// stableTraffic is t, or the stable split when t is nil.
func stableTraffic(t *canary.Traffic) canary.Traffic {
	if t == nil {
		return canary.Traffic{Phase: canary.Stable}
	}
	return *t
}

// trafficConfig is the policy's traffic configuration. A disabled policy
// still needs one; the stable one is the smoke header, which sends no
// traffic while the policy is disabled.
func trafficConfig(t canary.Traffic) *cloudfront.ContinuousDeploymentPolicyTrafficConfigArgs {
	if t.Phase == canary.Weight {
		w := &cloudfront.ContinuousDeploymentPolicyTrafficConfigSingleWeightConfigArgs{Weight: pulumi.Float64(t.Weight)}
		if t.IdleTTL > 0 || t.MaximumTTL > 0 {
			w.SessionStickinessConfig = &cloudfront.ContinuousDeploymentPolicyTrafficConfigSingleWeightConfigSessionStickinessConfigArgs{
				IdleTtl:    pulumi.Int(t.IdleTTL),
				MaximumTtl: pulumi.Int(t.MaximumTTL),
			}
		}
		return &cloudfront.ContinuousDeploymentPolicyTrafficConfigArgs{Type: pulumi.String("SingleWeight"), SingleWeightConfig: w}
	}
	value := t.HeaderValue
	if value == "" {
		value = "off"
	}
	return &cloudfront.ContinuousDeploymentPolicyTrafficConfigArgs{
		Type: pulumi.String("SingleHeader"),
		SingleHeaderConfig: &cloudfront.ContinuousDeploymentPolicyTrafficConfigSingleHeaderConfigArgs{
			Header: pulumi.String(canary.DefaultHeader),
			Value:  pulumi.String(value),
		},
	}
}

// canaryOutputs are the stack outputs the canary flow reads: which
// version each distribution runs, and where the staging metrics live.
func (r *Router) canaryOutputs(args *RouterArgs) pulumi.Map {
	t := stableTraffic(args.Traffic)
	return pulumi.Map{
		"primaryFunctionArn":           r.primaryArn,
		"stagingFunctionArn":           r.stagingArn,
		"stagingDistributionId":        r.StagingDistribution.ID(),
		"stagingDistributionDomain":    r.StagingDistribution.DomainName,
		"continuousDeploymentPolicyId": r.DeploymentPolicy.ID(),
		// "" until the second pass of the router's first up attached it.
		"attachedDeploymentPolicyId": r.attachedPolicy,
		"canaryPhase":                pulumi.String(string(t.Phase)),
		"functionName":               r.Function.Name,
		"servedTables":               r.servedTables(args),
	}
}

// servedTables says which routing table each distribution serves: the
// table of this run (version, checksum, generated_at) when it runs the
// function's newest version, else only the version it runs (an earlier
// one, kept through a canary or a discard; its description names its
// table). `cellctl status` and `cellctl route` show it.
func (r *Router) servedTables(args *RouterArgs) pulumi.MapOutput {
	return pulumi.All(r.primaryArn, r.stagingArn, r.Function.QualifiedArn).ApplyT(func(v []any) (map[string]any, error) {
		newest, _ := v[2].(string)
		out := map[string]any{}
		for i, name := range []string{"primary", "staging"} {
			arn, _ := v[i].(string)
			d := map[string]any{"functionArn": arn}
			if arn == newest {
				d["version"], d["checksum"], d["generatedAt"] = float64(args.TableVersion), args.TableChecksum, args.TableGeneratedAt
			}
			out[name] = d
		}
		return out, nil
	}).(pulumi.MapOutput)
}

// distributionArgs renders a distribution of the router: one HTTPS-only
// custom origin for the whole fleet, the edge function version lambdaArn on
// origin requests, no caching. The primary and the staging distribution are
// both built here, so they cannot drift apart.
//
// One origin, not one per cell: origins per distribution is a quota
// (default 100, older accounts 25; TooManyOrigins, awsmodel
// cloudfront.origins-per-distribution) and the fleet's cap is 256 cells.
// The origin-request function replaces the origin's domainName with the
// tenant's cell's DNS name and sets Host to match — CloudFront Developer
// Guide, "Lambda@Edge event structure › Dynamic origin selection": in the
// origin request event a function may update the origin object to route
// the request to a different origin, which need not be defined in the
// distribution. What the function does not touch stays as configured here:
// protocol, port, TLS versions and the customHeaders, so X-Origin-Verify
// (a Pulumi secret) stays in the distribution config and never enters the
// function package. The origin's own domain is the first routable cell's
// DNS name: CloudFront checks the configured name, and a request the
// function answers itself (400, 503) never reaches it.
func distributionArgs(args *RouterArgs, secret, viewerCert pulumi.StringOutput, tags pulumi.StringMap, lambdaArn pulumi.StringInput) *cloudfront.DistributionArgs {
	origins := cloudfront.DistributionOriginArray{
		&cloudfront.DistributionOriginArgs{
			OriginId:   pulumi.String(cellmodule.RouterOriginID),
			DomainName: args.Origins[0].DNSName,
			CustomOriginConfig: &cloudfront.DistributionOriginCustomOriginConfigArgs{
				HttpPort:             pulumi.Int(80),
				HttpsPort:            pulumi.Int(443),
				OriginProtocolPolicy: pulumi.String("https-only"),
				OriginSslProtocols:   pulumi.ToStringArray([]string{"TLSv1.2"}),
			},
			CustomHeaders: cloudfront.DistributionOriginCustomHeaderArray{
				&cloudfront.DistributionOriginCustomHeaderArgs{
					Name:  pulumi.String(cellmodule.OriginVerifyHeader),
					Value: secret,
				},
			},
		},
	}
	return &cloudfront.DistributionArgs{
		Enabled:       pulumi.Bool(true),
		Comment:       pulumi.String("cellctl router: tenant → cell"),
		IsIpv6Enabled: pulumi.Bool(true),
		HttpVersion:   pulumi.String(HTTPVersion),
		PriceClass:    pulumi.String(priceClassOf(args.PriceClass)),
		Origins:       origins,
		DefaultCacheBehavior: &cloudfront.DistributionDefaultCacheBehaviorArgs{
			// The edge function points every forwarded request at its
			// tenant's cell (see above).
			TargetOriginId:        pulumi.String(cellmodule.RouterOriginID),
			ViewerProtocolPolicy:  pulumi.String("https-only"),
			AllowedMethods:        pulumi.ToStringArray([]string{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"}),
			CachedMethods:         pulumi.ToStringArray([]string{"GET", "HEAD"}),
			CachePolicyId:         pulumi.String(CachingDisabledPolicyID),
			OriginRequestPolicyId: pulumi.String(AllViewerRequestPolicy),
			Compress:              pulumi.Bool(true),
			LambdaFunctionAssociations: cloudfront.DistributionDefaultCacheBehaviorLambdaFunctionAssociationArray{
				&cloudfront.DistributionDefaultCacheBehaviorLambdaFunctionAssociationArgs{
					EventType:   pulumi.String("origin-request"),
					LambdaArn:   lambdaArn,
					IncludeBody: pulumi.Bool(false),
				},
			},
		},
		Restrictions: &cloudfront.DistributionRestrictionsArgs{
			GeoRestriction: &cloudfront.DistributionRestrictionsGeoRestrictionArgs{RestrictionType: pulumi.String("none")},
		},
		Aliases:           pulumi.ToStringArray(append([]string{}, args.ViewerDomains...)),
		ViewerCertificate: viewerCertificateArgs(args, viewerCert),
		Tags:              tags,
	}
}

// checkTraffic refuses a traffic split before anything is registered.
func checkTraffic(t *canary.Traffic) error {
	if t == nil {
		return nil
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("router: %w", err)
	}
	return nil
}

// ServedTable is the routing table one distribution serves, as the router
// stack's servedTables output says.
type ServedTable struct {
	Distribution string `json:"distribution"` // "primary" or "staging"
	FunctionArn  string `json:"functionArn"`
	// Version, Checksum and GeneratedAt are the table's when the
	// distribution runs the function's newest version; Known is false
	// when it runs an earlier one (its description names its table).
	Known       bool   `json:"known"`
	Version     int64  `json:"version,omitempty"`
	Checksum    string `json:"checksum,omitempty"`
	GeneratedAt string `json:"generatedAt,omitempty"`
}

// ReadServedTables reads the servedTables output of a deployed router
// (nil for a router deployed before it existed).
func ReadServedTables(outputs map[string]any) []ServedTable {
	m, _ := outputs["servedTables"].(map[string]any)
	if m == nil {
		return nil
	}
	var out []ServedTable
	for _, d := range []string{"primary", "staging"} {
		e, _ := m[d].(map[string]any)
		if e == nil {
			continue
		}
		s := ServedTable{Distribution: d}
		s.FunctionArn, _ = e["functionArn"].(string)
		if v, ok := e["version"].(float64); ok {
			s.Known, s.Version = true, int64(v)
			s.Checksum, _ = e["checksum"].(string)
			s.GeneratedAt, _ = e["generatedAt"].(string)
		}
		out = append(out, s)
	}
	return out
}

// priceClassOf is the price class the distributions render for the
// configured one ("": PriceClass_100).
func priceClassOf(configured string) string {
	if configured == "" {
		return "PriceClass_100"
	}
	return configured
}

// PrimaryLinkedSettings are the values the router renders for the primary
// distribution's settings CloudFront locks on a linked distribution
// (awsfacts.CloudFrontCDLockedFields), as Pulumi input names and plain
// values — what the engine compares with the deployed primary to tell a
// change that needs the unlink sequence. A certificate the router
// requests itself is known only once deployed: its viewerCertificate is
// left out (a new one comes with new aliases, which are compared).
func PrimaryLinkedSettings(priceClass string, viewerDomains []string, certificateArn string) map[string]any {
	aliases := make([]any, 0, len(viewerDomains))
	for _, d := range viewerDomains {
		aliases = append(aliases, d)
	}
	out := map[string]any{
		"enabled":       true,
		"isIpv6Enabled": true,
		"httpVersion":   HTTPVersion,
		"priceClass":    priceClassOf(priceClass),
		"aliases":       aliases,
	}
	switch {
	case len(viewerDomains) == 0:
		out["viewerCertificate"] = map[string]any{"cloudfrontDefaultCertificate": true}
	case certificateArn != "":
		out["viewerCertificate"] = map[string]any{"acmCertificateArn": certificateArn}
	}
	return out
}
