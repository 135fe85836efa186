package awsmodel

import (
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsfacts"
)

// CloudFront continuous deployment: the staging distribution, the policy
// that links it to the primary, and the rules AWS enforces on both. The
// limits themselves are defined once, in router/canary, with their
// sources; the router canary flow checks its flags against the same
// numbers before anything runs.

const tCDPolicy = "aws:cloudfront/continuousDeploymentPolicy:ContinuousDeploymentPolicy"

func init() {
	register(&typeSpec{
		token:     tCDPolicy,
		api:       apiInfo{"CloudFront", "CloudFront Continuous Deployment Policy", ops("CreateContinuousDeploymentPolicy", "UpdateContinuousDeploymentPolicy", "DeleteContinuousDeploymentPolicy", "GetContinuousDeploymentPolicy")},
		required:  []string{"enabled"},
		recompute: []string{"etag", "lastModifiedTime"},
		compute: func(c *calc) error {
			c.id = c.r.UUID("cd-policy-id")
			c.set("arn", c.env.ARN("cloudfront", "", c.env.Account, "continuous-deployment-policy/"+c.id))
			c.set("etag", "E"+newRand([]byte(c.now.String()+c.id)).Chars("etag", 13, upperAlnum))
			c.set("lastModifiedTime", c.now.UTC().Format("2006-01-02T15:04:05Z"))
			return nil
		},
		validate: func(v *validator) {
			tc := object(v.in, "trafficConfig")
			if tc != nil {
				v.enumValue("trafficConfig.type", str(tc, "type"), "SingleWeight", "SingleHeader")
			}
		},
	})
	rules = append(rules, cdRules...)
}

// CDLockedFields are the distribution settings CloudFront refuses to
// change while the distribution is linked by a continuous deployment
// policy (the primary with its policy attached, or its staging
// distribution): awsfacts.CloudFrontCDLockedFields, with its sources.
var CDLockedFields = awsfacts.CloudFrontCDLockedFields

// MaxOriginsPerDistribution is CloudFront's default quota "Origins per
// distribution" (Developer Guide, Quotas, General quotas on distributions:
// 100, "Request a higher quota" — adjustable in Service Quotas; accounts
// that predate the raise may still hold 25). More origins are refused with
// TooManyOrigins ("You cannot create more origins for the distribution").
const MaxOriginsPerDistribution = 100

// cdLinked reports whether a distribution's deployed outputs link it to a
// continuous deployment policy.
func cdLinked(old resource.PropertyMap) bool {
	if old == nil {
		return false
	}
	staging, _ := boolean(old, "staging")
	return staging || str(old, "continuousDeploymentPolicyId") != ""
}

// cdLockedChanges lists the locked fields an update changes; a field
// absent from the inputs compares as the default AWS reports.
func cdLockedChanges(in, old resource.PropertyMap) []string {
	spec := specs[tDistribution]
	var changed []string
	for _, f := range CDLockedFields {
		k := resource.PropertyKey(f)
		nv, hasNew := in[k]
		if !hasNew || nv.IsNull() {
			d, ok := spec.outDefaults[f]
			if !ok {
				continue
			}
			nv = resource.NewPropertyValue(d)
		}
		if nv.ContainsUnknowns() {
			continue
		}
		ov, hasOld := old[k]
		if !hasOld || ov.IsNull() {
			d, ok := spec.outDefaults[f]
			if !ok {
				continue
			}
			ov = resource.NewPropertyValue(d)
		}
		if !cdValueEqual(nv, ov) {
			changed = append(changed, f)
		}
	}
	return changed
}

// cdValueEqual compares two property values ignoring secret wrapping and
// treating an empty array and an absent one alike.
func cdValueEqual(a, b resource.PropertyValue) bool {
	strip := func(v resource.PropertyValue) any {
		return v.MapRepl(nil, func(v resource.PropertyValue) (any, bool) {
			if v.IsSecret() {
				return v.SecretValue().Element.Mappable(), true
			}
			return nil, false
		})
	}
	return fmt.Sprint(strip(a)) == fmt.Sprint(strip(b))
}

var cdRules = []Rule{
	{
		ID:      "cloudfront.cd-no-http3",
		Doc:     "Amazon CloudFront Developer Guide, Quotas and other considerations for continuous deployment: HTTP/3 — continuous deployment cannot be used with a distribution that supports HTTP/3",
		Code:    "InvalidArgument",
		applies: types(tDistribution),
		check: func(r ruleInput) string {
			staging, _ := boolean(r.in, "staging")
			if !staging && str(r.in, "continuousDeploymentPolicyId") == "" && !unknown(r.in, "continuousDeploymentPolicyId") {
				return ""
			}
			if v := str(r.in, "httpVersion"); v == "http3" || v == "http2and3" {
				return fmt.Sprintf("Continuous deployment is not supported for a distribution with HTTP/3 enabled (httpVersion %s); use http2 or http1.1.", v)
			}
			return ""
		},
	},
	{
		ID:      "cloudfront.cd-staging-shape",
		Doc:     "Amazon CloudFront Developer Guide, Learn how continuous deployment works: viewers cannot reach a staging distribution by DNS name or CNAME, and only the primary distribution is attached to a continuous deployment policy",
		Code:    "InvalidArgument",
		applies: types(tDistribution),
		check: func(r ruleInput) string {
			if staging, _ := boolean(r.in, "staging"); !staging {
				return ""
			}
			if n := len(strings_(r.in, "aliases")); n > 0 {
				return fmt.Sprintf("A staging distribution cannot have alternate domain names (CNAMEs); it has %d.", n)
			}
			if id := str(r.in, "continuousDeploymentPolicyId"); id != "" {
				return fmt.Sprintf("A staging distribution cannot be attached to a continuous deployment policy (%s); attach the policy to the primary distribution.", id)
			}
			return ""
		},
	},
	{
		ID:      "cloudfront.cd-policy-exists",
		Doc:     "Amazon CloudFront API Reference, DistributionConfig.ContinuousDeploymentPolicyId: the identifier of an existing continuous deployment policy",
		Code:    "NoSuchContinuousDeploymentPolicy",
		applies: types(tDistribution),
		check: func(r ruleInput) string {
			id := str(r.in, "continuousDeploymentPolicyId")
			if id == "" || r.cloud == nil {
				return ""
			}
			if typ, _, ok := r.lookup(id); !ok || typ != tCDPolicy {
				return fmt.Sprintf("The continuous deployment policy does not exist: %s", id)
			}
			return ""
		},
	},
	{
		ID:      "cloudfront.cd-staging-dns-names",
		Doc:     "Amazon CloudFront API Reference, StagingDistributionDnsNames: the CloudFront domain name of the staging distribution (one name, Quantity equal to the number of Items)",
		Code:    "InvalidArgument",
		applies: types(tCDPolicy),
		check: func(r ruleInput) string {
			sd := object(r.in, "stagingDistributionDnsNames")
			if sd == nil || unknown(sd, "items") {
				return ""
			}
			items := strings_(sd, "items")
			q, hasQ := number(sd, "quantity")
			switch {
			case len(items) != 1:
				return fmt.Sprintf("A continuous deployment policy names exactly one staging distribution; it names %d.", len(items))
			case hasQ && int(q) != len(items):
				return fmt.Sprintf("StagingDistributionDnsNames Quantity %d does not match its %d items.", int(q), len(items))
			case known(sd, "items") && !strings.HasSuffix(items[0], ".cloudfront.net"):
				return fmt.Sprintf("%s is not a CloudFront distribution domain name (dXXXXXXXXXXXXX.cloudfront.net).", items[0])
			}
			return ""
		},
	},
	{
		ID:      "cloudfront.cd-traffic-config",
		Doc:     "Amazon CloudFront API Reference, TrafficConfig: Type SingleWeight takes a SingleWeightConfig, SingleHeader a SingleHeaderConfig",
		Code:    "InvalidArgument",
		applies: types(tCDPolicy),
		check: func(r ruleInput) string {
			tc := object(r.in, "trafficConfig")
			if tc == nil || !known(tc, "type") {
				return ""
			}
			weight, header := object(tc, "singleWeightConfig") != nil, object(tc, "singleHeaderConfig") != nil
			switch str(tc, "type") {
			case "SingleWeight":
				if !weight || header {
					return "TrafficConfig of type SingleWeight needs a SingleWeightConfig and no SingleHeaderConfig."
				}
			case "SingleHeader":
				if !header || weight {
					return "TrafficConfig of type SingleHeader needs a SingleHeaderConfig and no SingleWeightConfig."
				}
			}
			return ""
		},
	},
	{
		ID:      "cloudfront.cd-weight",
		Doc:     "Amazon CloudFront API Reference, ContinuousDeploymentSingleWeightConfig: Weight, a decimal number between 0 and 0.15 (Developer Guide quotas: at most 15% of traffic to a staging distribution)",
		Code:    "InvalidArgument",
		applies: types(tCDPolicy),
		check: func(r ruleInput) string {
			w := object(object(r.in, "trafficConfig"), "singleWeightConfig")
			if w == nil {
				return ""
			}
			if v, ok := number(w, "weight"); ok && (v < 0 || v > awsfacts.CloudFrontCDMaxWeight) {
				return fmt.Sprintf("The weight %g is out of range: a staging distribution receives between 0 and %g of the traffic.", v, awsfacts.CloudFrontCDMaxWeight)
			}
			return ""
		},
	},
	{
		ID:      "cloudfront.cd-session-stickiness",
		Doc:     "Amazon CloudFront Developer Guide, Quotas and other considerations for continuous deployment (session stickiness idle duration 300–3600 seconds) and API Reference, SessionStickinessConfig (MaximumTTL 300–3600, at least IdleTTL)",
		Code:    "InvalidArgument",
		applies: types(tCDPolicy),
		check: func(r ruleInput) string {
			s := object(object(object(r.in, "trafficConfig"), "singleWeightConfig"), "sessionStickinessConfig")
			if s == nil {
				return ""
			}
			idle, okI := number(s, "idleTtl")
			maxT, okM := number(s, "maximumTtl")
			for _, f := range []struct {
				name string
				v    float64
				ok   bool
			}{{"IdleTTL", idle, okI}, {"MaximumTTL", maxT, okM}} {
				if f.ok && (f.v < awsfacts.CloudFrontCDMinStickyTTL || f.v > awsfacts.CloudFrontCDMaxStickyTTL) {
					return fmt.Sprintf("%s %g is out of range: %d to %d seconds.", f.name, f.v, awsfacts.CloudFrontCDMinStickyTTL, awsfacts.CloudFrontCDMaxStickyTTL)
				}
			}
			if okI && okM && idle > maxT {
				return fmt.Sprintf("IdleTTL %g must be less than or equal to MaximumTTL %g.", idle, maxT)
			}
			return ""
		},
	},
	{
		ID:      "cloudfront.cd-header",
		Doc:     "Amazon CloudFront Developer Guide, Learn how continuous deployment works: headers routed to the staging distribution must contain the prefix aws-cf-cd-",
		Code:    "InvalidArgument",
		applies: types(tCDPolicy),
		check: func(r ruleInput) string {
			h := object(object(r.in, "trafficConfig"), "singleHeaderConfig")
			if h == nil || !known(h, "header") {
				return ""
			}
			name := str(h, "header")
			if !strings.HasPrefix(strings.ToLower(name), awsfacts.CloudFrontCDHeaderPrefix) || len(name) == len(awsfacts.CloudFrontCDHeaderPrefix) {
				return fmt.Sprintf("The header %q must begin with %s and name something after it.", name, awsfacts.CloudFrontCDHeaderPrefix)
			}
			if known(h, "value") && str(h, "value") == "" {
				return "The header value of a SingleHeaderConfig must not be empty."
			}
			return ""
		},
	},
	{
		ID:      "cloudfront.cd-policy-not-on-create",
		Doc:     "Amazon CloudFront API Reference, CreateDistribution and DistributionConfig.ContinuousDeploymentPolicyId (a policy is attached to an existing primary with UpdateDistribution; CreateDistribution answers \"Continuous deployment policy is not supported during distribution creation\"); pulumi-aws / terraform-provider-aws docs, aws_cloudfront_continuous_deployment_policy: attach the policy to the primary in a later update",
		Code:    "InvalidArgument",
		applies: types(tDistribution),
		check: func(r ruleInput) string {
			if r.op != OpCreate {
				return ""
			}
			if id := str(r.in, "continuousDeploymentPolicyId"); id != "" {
				return fmt.Sprintf("Continuous deployment policy is not supported during distribution creation (continuousDeploymentPolicyId %s): create the distribution without it, then attach the policy in an update.", id)
			}
			return ""
		},
	},
	{
		ID:      "cloudfront.cd-linked-locked-fields",
		Doc:     "Amazon CloudFront Developer Guide, Learn how continuous deployment works, Update primary and staging distributions (what may change while a policy links the pair: cache behaviors, origins, origin groups, custom error responses, geographic restrictions, default root object, logging, comment); aws/aws-cli#10446 (viewer certificate and minimum TLS version refused until the policy is detached)",
		Code:    "IllegalUpdate",
		applies: types(tDistribution),
		check: func(r ruleInput) string {
			if r.op != OpUpdate || !cdLinked(r.old) {
				return ""
			}
			changed := cdLockedChanges(r.in, r.old)
			if len(changed) == 0 {
				return ""
			}
			return fmt.Sprintf("One or more fields updated are not supported for continuous deployment (%s): detach the continuous deployment policy from the primary distribution, make the change, then attach it again.", strings.Join(changed, ", "))
		},
	},
	{
		ID:      "cloudfront.origins-per-distribution",
		Doc:     "Amazon CloudFront Developer Guide, Quotas, General quotas on distributions: Origins per distribution, default 100, adjustable; API Reference, CreateDistribution/UpdateDistribution errors: TooManyOrigins (You cannot create more origins for the distribution)",
		Code:    "TooManyOrigins",
		applies: types(tDistribution),
		check: func(r ruleInput) string {
			if unknown(r.in, "origins") {
				return ""
			}
			if n := len(objects(r.in, "origins")); n > MaxOriginsPerDistribution {
				return fmt.Sprintf("You cannot create more origins for the distribution: it has %d, the default quota (Origins per distribution) is %d; raise it in Service Quotas or route with fewer origins.", n, MaxOriginsPerDistribution)
			}
			return ""
		},
	},
}
