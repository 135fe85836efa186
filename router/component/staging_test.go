package component_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/router/canary"
	"github.com/cellctl/cellctl/router/component"
	"github.com/cellctl/cellctl/stacks"
)

const typePolicy = "aws:cloudfront/continuousDeploymentPolicy:ContinuousDeploymentPolicy"

// primary is the router's primary distribution (the one viewers reach).
func (r *routerRun) primary(t *testing.T) *offline.Resource {
	t.Helper()
	return r.distribution(t, false)
}

func (r *routerRun) staging(t *testing.T) *offline.Resource {
	t.Helper()
	return r.distribution(t, true)
}

func (r *routerRun) distribution(t *testing.T, staging bool) *offline.Resource {
	t.Helper()
	var hits []*offline.Resource
	for _, d := range r.rec.ByType(typeDistribution) {
		if in(d, "staging").IsBool() && in(d, "staging").BoolValue() == staging || !in(d, "staging").IsBool() && !staging {
			hits = append(hits, d)
		}
	}
	if len(hits) != 1 {
		t.Fatalf("the router stack declares %d distributions with staging=%v, want exactly 1", len(hits), staging)
	}
	return hits[0]
}

func withTraffic(t *testing.T, tr *canary.Traffic) *fleet.Fleet {
	t.Helper()
	f := demoFleet(t)
	r := *f.Router
	r.Traffic = tr
	// A canary step runs on a deployed router: its policy is attached.
	r.AttachDeploymentPolicy = true
	f.Router = &r
	return f
}

func lambdaArn(d *offline.Resource) string {
	as := arr(in(d, "defaultCacheBehavior", "lambdaFunctionAssociations"))
	if len(as) != 1 {
		return ""
	}
	return str(get(as[0], "lambdaArn"))
}

// attached is f as the engine's second pass (and every later up) renders
// it: the primary is deployed, its policy attached.
func attached(f *fleet.Fleet) *fleet.Fleet {
	r := *f.Router
	r.AttachDeploymentPolicy = true
	f.Router = &r
	return f
}

func TestFirstCreateRendersThePrimaryWithoutItsPolicy(t *testing.T) {
	r := mustRunRouter(t, demoFleet(t))
	if got := str(in(r.primary(t), "continuousDeploymentPolicyId")); got != "" {
		t.Errorf("a first create sends the primary with continuousDeploymentPolicyId %q: CloudFront refuses a policy during distribution creation", got)
	}
	r.one(t, typePolicy) // the policy and staging exist from the first pass
	if got := r.outputs["attachedDeploymentPolicyId"]; got.Value != "" {
		t.Errorf("attachedDeploymentPolicyId = %v after the first pass, want \"\"", got.Value)
	}
}

func TestPolicyOnThePrimarysCreateIsRefused(t *testing.T) {
	// The shape the router rendered before the create/attach sequence: the
	// mocks (like CloudFront) refuse it when the primary is created.
	f := attached(demoFleet(t))
	model := awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: "123456789012", Region: f.Router.Region})
	for _, c := range f.Cells {
		model.SetStackOutputs(c.ID, resource.PropertyMap{"dnsName": resource.NewStringProperty(albDNS(c.ID)),
			"albArnSuffix": resource.NewStringProperty("app/x/1"), "targetGroupArnSuffix": resource.NewStringProperty("targetgroup/x/1")})
	}
	key := f.ConfigKey(fleet.OriginVerifyKey)
	_, _, err := offline.Run(offline.Options{Project: f.Project, Stack: fleet.RouterStack,
		Config: map[string]string{key: testSecret}, SecretKeys: []string{key}}, model, stacks.Program(f))
	if err == nil || !strings.Contains(err.Error(), "not supported during distribution creation") {
		t.Fatalf("creating the primary with its policy: err = %v, want CloudFront's InvalidArgument refusal", err)
	}
}

func TestStableRouterHasAnIdleStagingPairAndNoHTTP3(t *testing.T) {
	r := mustRunRouter(t, attached(demoFleet(t)))
	p, s, fn := r.primary(t), r.staging(t), r.one(t, typeFunction)
	pol := r.one(t, typePolicy)
	for _, d := range []*offline.Resource{p, s} {
		if got := str(in(d, "httpVersion")); got != "http2" {
			t.Errorf("%s: httpVersion %q: CloudFront refuses continuous deployment with HTTP/3, want http2", d.Name, got)
		}
	}
	if got := str(in(p, "continuousDeploymentPolicyId")); got == "" || got != pol.ID {
		t.Errorf("primary continuousDeploymentPolicyId = %q, want the policy's id %q", got, pol.ID)
	}
	if got := str(in(s, "continuousDeploymentPolicyId")); got != "" {
		t.Errorf("staging distribution has a continuous deployment policy %q: only the primary has one", got)
	}
	if n := len(arr(in(s, "aliases"))); n != 0 {
		t.Errorf("staging distribution has %d aliases: viewers never reach it by name", n)
	}
	if b := in(pol, "enabled"); !b.IsBool() || b.BoolValue() {
		t.Errorf("policy enabled = %v between canaries, want false (the primary serves every request)", b)
	}
	names := arr(in(pol, "stagingDistributionDnsNames", "items"))
	if len(names) != 1 || str(names[0]) != str(out(s, "domainName")) {
		t.Errorf("policy staging names = %v, want exactly the staging distribution's domain %q", names, str(out(s, "domainName")))
	}
	q := plain(in(pol, "stagingDistributionDnsNames", "quantity"))
	if !q.IsNumber() || q.NumberValue() != 1 {
		t.Errorf("policy staging quantity = %v, want 1", q)
	}
	qualified := str(out(fn, "qualifiedArn"))
	if lambdaArn(p) != qualified || lambdaArn(s) != qualified {
		t.Errorf("stable: primary runs %q, staging %q; want both on the newest version %q", lambdaArn(p), lambdaArn(s), qualified)
	}
	if r.outputs["canaryPhase"].Value != "stable" || r.outputs["primaryFunctionArn"].Value != qualified {
		t.Errorf("outputs canaryPhase=%v primaryFunctionArn=%v, want stable and %q", r.outputs["canaryPhase"].Value, r.outputs["primaryFunctionArn"].Value, qualified)
	}
	if got, want := fmt.Sprint(r.outputs["stagingDistributionId"].Value), s.ID; got != want || want == "" {
		t.Errorf("output stagingDistributionId = %v, want %q (the gate reads its metrics)", got, want)
	}
}

// The two distributions are one rendering: promoting the staging
// configuration can only ever change the primary's function version.
func TestStagingDistributionDiffersOnlyInItsFunctionVersion(t *testing.T) {
	r := mustRunRouter(t, demoFleet(t))
	p, s := r.primary(t), r.staging(t)
	skip := map[string]bool{"staging": true, "continuousDeploymentPolicyId": true, "comment": true, "aliases": true, "defaultCacheBehavior": true, "viewerCertificate": true}
	for k, v := range p.Inputs {
		if skip[string(k)] {
			continue
		}
		if !plain(v).DeepEquals(plain(s.Inputs[k])) {
			t.Errorf("input %s differs between primary (%v) and staging (%v)", k, v, s.Inputs[k])
		}
	}
	pb, sb := in(p, "defaultCacheBehavior").ObjectValue().Copy(), in(s, "defaultCacheBehavior").ObjectValue().Copy()
	delete(pb, "lambdaFunctionAssociations")
	delete(sb, "lambdaFunctionAssociations")
	if !resource.NewObjectProperty(pb).DeepEquals(resource.NewObjectProperty(sb)) {
		t.Errorf("cache behaviours differ beyond the function association")
	}
}

func TestHeaderPhaseSendsOnlyTheSmokeHeaderToTheCandidate(t *testing.T) {
	old := "arn:aws:lambda:us-east-1:123456789012:function:router-edge-0a1b2c:1"
	r := mustRunRouter(t, withTraffic(t, &canary.Traffic{Phase: canary.Header, PrimaryFunctionArn: old, HeaderValue: "tok123"}))
	p, s, fn, pol := r.primary(t), r.staging(t), r.one(t, typeFunction), r.one(t, typePolicy)
	if lambdaArn(p) != old {
		t.Errorf("primary runs %q during the smoke test, want the version it ran before %q", lambdaArn(p), old)
	}
	if got, want := lambdaArn(s), str(out(fn, "qualifiedArn")); got != want {
		t.Errorf("staging runs %q, want the candidate %q", got, want)
	}
	if b := in(pol, "enabled"); !b.IsBool() || !b.BoolValue() {
		t.Errorf("policy not enabled in the header phase")
	}
	// The primary still runs the earlier version: which table it serves
	// is that version's (its description names it), not this run's.
	served, _ := r.outputs["servedTables"].Value.(map[string]any)
	primary, _ := served["primary"].(map[string]any)
	staging, _ := served["staging"].(map[string]any)
	if primary["functionArn"] != old || primary["version"] != nil || staging["version"] == nil || staging["checksum"] == "" {
		t.Errorf("servedTables during the smoke test: primary %v, staging %v", primary, staging)
	}
	tc := in(pol, "trafficConfig")
	if str(get(tc, "type")) != "SingleHeader" || str(get(tc, "singleHeaderConfig", "header")) != canary.DefaultHeader || str(get(tc, "singleHeaderConfig", "value")) != "tok123" {
		t.Errorf("traffic config %v, want SingleHeader %s: tok123", tc, canary.DefaultHeader)
	}
}

func TestWeightPhaseRendersWeightAndStickiness(t *testing.T) {
	old := "arn:aws:lambda:us-east-1:123456789012:function:router-edge-0a1b2c:1"
	r := mustRunRouter(t, withTraffic(t, &canary.Traffic{Phase: canary.Weight, PrimaryFunctionArn: old, Weight: 0.1, IdleTTL: 300, MaximumTTL: 600}))
	tc := in(r.one(t, typePolicy), "trafficConfig")
	w := plain(get(tc, "singleWeightConfig", "weight"))
	if str(get(tc, "type")) != "SingleWeight" || !w.IsNumber() || w.NumberValue() != 0.1 {
		t.Errorf("traffic config %v, want SingleWeight 0.1", tc)
	}
	idle := plain(get(tc, "singleWeightConfig", "sessionStickinessConfig", "idleTtl"))
	if !idle.IsNumber() || idle.NumberValue() != 300 {
		t.Errorf("session stickiness idle TTL %v, want 300", idle)
	}
	if lambdaArn(r.primary(t)) != old {
		t.Errorf("primary changed during the weighted canary")
	}
}

func TestRouterRefusesAWeightAboveCloudFrontsCap(t *testing.T) {
	old := "arn:aws:lambda:us-east-1:123456789012:function:router-edge-0a1b2c:1"
	_, err := runRouterProgram(t, withTraffic(t, &canary.Traffic{Phase: canary.Weight, PrimaryFunctionArn: old, Weight: 0.2}))
	if err == nil || !strings.Contains(err.Error(), "at most 0.15") {
		t.Fatalf("weight 0.2: error %v, want one naming the 0.15 cap", err)
	}
	if component.HTTPVersion != "http2" {
		t.Fatalf("HTTPVersion %q", component.HTTPVersion)
	}
}

// TestLinkedSettingsAreHeldWhereCloudFrontLocksThem: the staging
// distribution, linked for as long as it exists, never sends a change of
// the settings CloudFront locks on a linked distribution (Pulumi
// ignoreChanges); the primary holds them only in the passes of the unlink
// sequence that detach or re-attach the policy — the pass that applies a
// new price class sends it. The detached primary sends an explicit empty
// policy id (an absent one leaves the attachment as it is).
func TestLinkedSettingsAreHeldWhereCloudFrontLocksThem(t *testing.T) {
	locked := strings.Join(awsfacts.CloudFrontCDLockedFields, ",")
	r := mustRunRouter(t, attached(demoFleet(t)))
	if got := strings.Join(r.staging(t).IgnoreChanges, ","); got != locked {
		t.Errorf("the staging distribution ignores changes of %q, want %q", got, locked)
	}
	if got := r.primary(t).IgnoreChanges; len(got) != 0 {
		t.Errorf("an attached primary ignores changes of %v: a change of its settings would never be sent", got)
	}
	f := demoFleet(t)
	rt := *f.Router
	rt.HoldLinkedFields = true
	f.Router = &rt
	r = mustRunRouter(t, f)
	p := r.primary(t)
	if got := strings.Join(p.IgnoreChanges, ","); got != locked {
		t.Errorf("the detach pass's primary ignores changes of %q, want %q", got, locked)
	}
	if v := in(p, "continuousDeploymentPolicyId"); !v.IsString() || v.StringValue() != "" {
		t.Errorf("the detached primary sends continuousDeploymentPolicyId %v, want an explicit \"\"", v)
	}
}
