package awsmodel

import (
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// cdCases feed each continuous deployment rule a violating input and the
// same input fixed (TestEveryRuleRefusesAViolation runs them).
func cdCases() []ruleCase {
	weight := func(w float64, sticky map[string]any) resource.PropertyMap {
		cfg := map[string]any{"weight": w}
		if sticky != nil {
			cfg["sessionStickinessConfig"] = sticky
		}
		return resource.PropertyMap{"enabled": pv(true), "trafficConfig": pv(map[string]any{"type": "SingleWeight", "singleWeightConfig": cfg})}
	}
	header := func(name, value string) resource.PropertyMap {
		return resource.PropertyMap{"enabled": pv(true), "trafficConfig": pv(map[string]any{"type": "SingleHeader",
			"singleHeaderConfig": map[string]any{"header": name, "value": value}})}
	}
	names := func(q int, items ...string) resource.PropertyMap {
		return resource.PropertyMap{"enabled": pv(true), "stagingDistributionDnsNames": pv(map[string]any{"items": items, "quantity": q})}
	}
	return []ruleCase{
		{rule: "cloudfront.cd-no-http3", typ: tDistribution,
			bad:      resource.PropertyMap{"staging": pv(true), "httpVersion": pv("http2and3")},
			ok:       resource.PropertyMap{"staging": pv(true), "httpVersion": pv("http2")},
			contains: "HTTP/3"},
		{rule: "cloudfront.cd-no-http3", typ: tDistribution,
			bad:      resource.PropertyMap{"continuousDeploymentPolicyId": pv("p-1"), "httpVersion": pv("http3")},
			ok:       resource.PropertyMap{"httpVersion": pv("http3")}, // no continuous deployment: HTTP/3 is fine
			contains: "HTTP/3"},
		{rule: "cloudfront.cd-staging-shape", typ: tDistribution,
			bad: resource.PropertyMap{"staging": pv(true), "aliases": pv([]string{"app.example.com"}),
				"viewerCertificate": pv(map[string]any{"acmCertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/0a1b", "sslSupportMethod": "sni-only"})},
			ok:       resource.PropertyMap{"staging": pv(true), "aliases": pv([]string{})},
			contains: "alternate domain names"},
		{rule: "cloudfront.cd-staging-shape", typ: tDistribution,
			bad:      resource.PropertyMap{"staging": pv(true), "continuousDeploymentPolicyId": pv("p-1")},
			ok:       resource.PropertyMap{"staging": pv(true)},
			contains: "cannot be attached"},
		{rule: "cloudfront.cd-policy-exists", typ: tDistribution,
			setup: func(t *testing.T, m *Mock) {
				mustCreate(t, m, tCDPolicy, "exists", resource.PropertyMap{"enabled": pv(false)})
			},
			bad:      resource.PropertyMap{"continuousDeploymentPolicyId": pv("00000000-0000-4000-8000-000000000000")},
			contains: "does not exist"},
		{rule: "cloudfront.cd-staging-dns-names", typ: tCDPolicy,
			bad:      names(2, "d111111abcdef8.cloudfront.net", "d222222abcdef8.cloudfront.net"),
			ok:       names(1, "d111111abcdef8.cloudfront.net"),
			contains: "exactly one staging distribution"},
		{rule: "cloudfront.cd-staging-dns-names", typ: tCDPolicy,
			bad:      names(1, "staging.example.com"),
			ok:       names(1, "d111111abcdef8.cloudfront.net"),
			contains: "not a CloudFront distribution domain"},
		{rule: "cloudfront.cd-traffic-config", typ: tCDPolicy,
			bad: resource.PropertyMap{"enabled": pv(true), "trafficConfig": pv(map[string]any{"type": "SingleHeader",
				"singleWeightConfig": map[string]any{"weight": 0.1}})},
			ok:       header("aws-cf-cd-smoke", "1"),
			contains: "needs a SingleHeaderConfig"},
		{rule: "cloudfront.cd-weight", typ: tCDPolicy,
			bad: weight(0.16, nil), ok: weight(0.15, nil), contains: "between 0 and 0.15"},
		{rule: "cloudfront.cd-session-stickiness", typ: tCDPolicy,
			bad: weight(0.1, map[string]any{"idleTtl": 60, "maximumTtl": 600}), ok: weight(0.1, map[string]any{"idleTtl": 300, "maximumTtl": 600}),
			contains: "IdleTTL 60 is out of range"},
		{rule: "cloudfront.cd-session-stickiness", typ: tCDPolicy,
			bad: weight(0.1, map[string]any{"idleTtl": 900, "maximumTtl": 600}), ok: weight(0.1, map[string]any{"idleTtl": 600, "maximumTtl": 900}),
			contains: "less than or equal to MaximumTTL"},
		{rule: "cloudfront.cd-header", typ: tCDPolicy,
			bad: header("x-canary", "1"), ok: header("aws-cf-cd-canary", "1"), contains: "must begin with aws-cf-cd-"},
		{rule: "cloudfront.cd-header", typ: tCDPolicy,
			bad: header("aws-cf-cd-canary", ""), ok: header("aws-cf-cd-canary", "on"), contains: "must not be empty"},
	}
}

// A policy that exists satisfies the primary's reference to it.
func TestPrimaryDistributionNamesAnExistingPolicy(t *testing.T) {
	m := NewMock(Env{})
	id, _, err := m.NewResource(tCDPolicy, "p", resource.PropertyMap{"enabled": pv(false)}, "")
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := RuleByID("cloudfront.cd-policy-exists")
	if msg := rule.check(ruleInput{typ: tDistribution, in: resource.PropertyMap{"continuousDeploymentPolicyId": pv(id)}, cloud: m}); msg != "" {
		t.Fatalf("existing policy %s refused: %s", id, msg)
	}
}
