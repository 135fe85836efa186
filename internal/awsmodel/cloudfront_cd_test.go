package awsmodel

import (
	"errors"
	"fmt"
	"strings"
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
	cert := func(arn, tls string) resource.PropertyValue {
		return pv(map[string]any{"acmCertificateArn": arn, "sslSupportMethod": "sni-only", "minimumProtocolVersion": tls})
	}
	const certA, certB = "arn:aws:acm:us-east-1:123456789012:certificate/0a1b", "arn:aws:acm:us-east-1:123456789012:certificate/0c2d"
	attachedPrimary := resource.PropertyMap{"continuousDeploymentPolicyId": pv("p-1"), "httpVersion": pv("http2"),
		"aliases": pv([]string{"app.example.com"}), "viewerCertificate": cert(certA, "TLSv1.2_2021"), "comment": pv("v1")}
	// existing creates the policy the maps name (cd-policy-exists would
	// refuse a made-up id first) and writes its id into each of them.
	existing := func(maps ...resource.PropertyMap) func(t *testing.T, m *Mock) {
		return func(t *testing.T, m *Mock) {
			id, _, err := m.NewResource(tCDPolicy, "pol", resource.PropertyMap{"enabled": pv(false)}, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, mp := range maps {
				if _, ok := mp["continuousDeploymentPolicyId"]; ok && str(mp, "continuousDeploymentPolicyId") != "" {
					mp["continuousDeploymentPolicyId"] = pv(id)
				}
			}
		}
	}
	onCreate := resource.PropertyMap{"continuousDeploymentPolicyId": pv("p-1"), "httpVersion": pv("http2")}
	certChange := with(attachedPrimary, "viewerCertificate", cert(certB, "TLSv1.2_2021"))
	commentChange := with(attachedPrimary, "comment", pv("v2"))
	tlsAndHTTP := with(attachedPrimary, "viewerCertificate", cert(certA, "TLSv1.2_2025"), "httpVersion", pv("http1.1"))
	origins := func(n int) resource.PropertyMap {
		var os []map[string]any
		for i := 0; i < n; i++ {
			os = append(os, map[string]any{"originId": fmt.Sprintf("o%d", i), "domainName": fmt.Sprintf("c%d.example.com", i)})
		}
		return resource.PropertyMap{"origins": pv(os)}
	}
	return []ruleCase{
		{rule: "cloudfront.origins-per-distribution", typ: tDistribution,
			bad: origins(MaxOriginsPerDistribution + 1), ok: origins(MaxOriginsPerDistribution), contains: "more origins"},
		{rule: "cloudfront.cd-policy-not-on-create", typ: tDistribution, setup: existing(onCreate),
			bad:      onCreate,
			ok:       resource.PropertyMap{"httpVersion": pv("http2")},
			contains: "not supported during distribution creation"},
		// A linked primary may not rotate its viewer certificate, raise the
		// minimum TLS version or change its HTTP version.
		{rule: "cloudfront.cd-linked-locked-fields", typ: tDistribution, op: OpUpdate, old: attachedPrimary,
			setup:    existing(attachedPrimary, certChange, commentChange),
			bad:      certChange,
			ok:       commentChange,
			contains: "viewerCertificate"},
		{rule: "cloudfront.cd-linked-locked-fields", typ: tDistribution, op: OpUpdate, old: attachedPrimary,
			setup:    existing(attachedPrimary, tlsAndHTTP),
			bad:      tlsAndHTTP,
			contains: "httpVersion, viewerCertificate"},
		// A staging distribution is linked too.
		{rule: "cloudfront.cd-linked-locked-fields", typ: tDistribution, op: OpUpdate,
			old:      resource.PropertyMap{"staging": pv(true), "priceClass": pv("PriceClass_100")},
			bad:      resource.PropertyMap{"staging": pv(true), "priceClass": pv("PriceClass_All")},
			ok:       resource.PropertyMap{"staging": pv(true), "priceClass": pv("PriceClass_100")},
			contains: "priceClass"},
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

// The router's sequence, as CloudFront judges each call: the primary is
// created without its policy, an update attaches it, later updates of what
// a linked pair may change pass; detached, anything may change again.
func TestPrimaryCreateThenAttachSequence(t *testing.T) {
	m := NewMock(Env{})
	base := resource.PropertyMap{"enabled": pv(true), "httpVersion": pv("http2"), "comment": pv("v1"),
		"origins":              pv([]map[string]any{{"originId": "o", "domainName": "a.example.com"}}),
		"defaultCacheBehavior": pv(map[string]any{"targetOriginId": "o", "viewerProtocolPolicy": "https-only"}),
		"restrictions":         pv(map[string]any{"geoRestriction": map[string]any{"restrictionType": "none"}}),
		"viewerCertificate":    pv(map[string]any{"cloudfrontDefaultCertificate": true})}
	policy := mustCreate(t, m, tCDPolicy, "pol", resource.PropertyMap{"enabled": pv(false)})
	pid := str(policy, "id")
	if pid == "" {
		pid = "p-1"
	}
	withPolicy := base.Copy()
	withPolicy["continuousDeploymentPolicyId"] = pv(pid)
	req := func(in, old resource.PropertyMap) error {
		_, _, err := Outputs(Request{Type: tDistribution, Name: "cdn", Inputs: in, Old: old, Seed: []byte("s"), Now: MockTime})
		return err
	}
	var ae *APIError
	if err := req(withPolicy, nil); !errors.As(err, &ae) || ae.Code != "InvalidArgument" || ae.Operation != "CreateDistributionWithTags" {
		t.Fatalf("create with the policy: %v, want InvalidArgument from CreateDistributionWithTags", err)
	}
	_, created, err := Outputs(Request{Type: tDistribution, Name: "cdn", Inputs: base, Seed: []byte("s"), Now: MockTime})
	if err != nil {
		t.Fatalf("create without the policy: %v", err)
	}
	if err := req(withPolicy, created); err != nil {
		t.Fatalf("attaching the policy in an update: %v", err)
	}
	linked := withPolicy.Copy()
	next := withPolicy.Copy()
	next["comment"] = pv("v2")
	if err := req(next, linked); err != nil {
		t.Fatalf("a linked primary's comment change: %v", err)
	}
	next = withPolicy.Copy()
	next["httpVersion"] = pv("http1.1")
	if err := req(next, linked); !errors.As(err, &ae) || ae.Code != "IllegalUpdate" || !strings.Contains(ae.Message, "httpVersion") {
		t.Fatalf("a linked primary's httpVersion change: %v, want IllegalUpdate naming httpVersion", err)
	}
	// An absent input compares as the default AWS reports: omitting
	// isIpv6Enabled (false) on a primary deployed with false is no change.
	if err := req(withPolicy, with(linked, "isIpv6Enabled", pv(false))); err != nil {
		t.Fatalf("an omitted input equal to its default counted as a change: %v", err)
	}
	if err := req(next, created); err != nil {
		t.Fatalf("an unlinked primary's httpVersion change: %v", err)
	}
}

func with(m resource.PropertyMap, kv ...any) resource.PropertyMap {
	out := m.Copy()
	for i := 0; i < len(kv); i += 2 {
		out[resource.PropertyKey(kv[i].(string))] = kv[i+1].(resource.PropertyValue)
	}
	return out
}
