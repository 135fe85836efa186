package sim

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsapi"
)

// The router's edge through the provider, as the router component builds
// it; a bad routing table on the staging distribution shows in its
// CloudFront metrics and nowhere else.
func TestEdgeMetricsFollowTheBuildEachDistributionRuns(t *testing.T) {
	clk := newClock()
	dir := t.TempDir()
	h := harnessOn(t, Options{Dir: dir, Stack: "router", Now: clk.now, DependencyTimeout: 300 * time.Millisecond}, "us-east-1")
	role := h.create("aws:iam/role:Role", "edge-role", pm("assumeRolePolicy", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["edgelambda.amazonaws.com","lambda.amazonaws.com"]},"Action":"sts:AssumeRole"}]}`))
	fnIn := pm("runtime", "nodejs20.x", "handler", "index.handler", "role", s(role.out, "arn"), "publish", true, "timeout", 5)
	fnIn["code"] = edgeCode(t, 7)
	fn := h.create(tFn, "edge", fnIn)
	v1 := s(fn.out, "qualifiedArn")
	staging := h.create(tDistribution, "cdn-staging", distInputs(v1, "staging", true))
	policyIn := func(enabled bool, weight float64) resource.PropertyMap {
		return pm("enabled", enabled,
			"stagingDistributionDnsNames", map[string]any{"items": []any{s(staging.out, "domainName")}, "quantity": 1},
			"trafficConfig", map[string]any{"type": "SingleWeight", "singleWeightConfig": map[string]any{"weight": weight}})
	}
	policy := h.create(tCDPolicy, "cdn-policy", policyIn(false, 0.1))
	// CloudFront refuses the policy on the primary's create: it is
	// attached by an update, as the router's second pass does.
	primary := h.create(tDistribution, "cdn", distInputs(v1))
	if _, err := h.tryCreate(tDistribution, "cdn-with-policy", distInputs(v1, "continuousDeploymentPolicyId", policy.id)); err == nil || !strings.Contains(err.Error(), "InvalidArgument") {
		t.Fatalf("the simulator created a primary with its policy attached (%v): CloudFront refuses that", err)
	}
	primary, err := h.tryUpdate(primary, distInputs(v1, "continuousDeploymentPolicyId", policy.id))
	if err != nil {
		t.Fatalf("attaching the policy in an update: %v", err)
	}

	// A new table is published and canaried at 10 %.
	clk.advance(time.Minute)
	fnIn2 := fnIn.Copy()
	fnIn2["code"] = edgeCode(t, 8)
	fn2, err := h.tryUpdate(fn, fnIn2)
	if err != nil {
		t.Fatal(err)
	}
	v2 := s(fn2.out, "qualifiedArn")
	if v2 == v1 {
		t.Fatalf("no new version published")
	}
	if _, err := h.tryUpdate(staging, distInputs(v2, "staging", true)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.tryUpdate(policy, policyIn(true, 0.1)); err != nil {
		t.Fatal(err)
	}
	cloud := clk.cloud(h.cloud)
	bad, fnErr := 0.2, 0.05
	if err := cloud.SetEdgeHealth(EdgeTarget{TableVersion: 8}, EdgeProfile{ErrorRate: &bad, FunctionErrorRate: &fnErr}); err != nil {
		t.Fatal(err)
	}
	start := clk.now()
	clk.advance(3 * time.Minute)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	endpoint, stop, err := ServeAPI(ctx, cloud)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cw, err := awsapi.NewCloudWatch(ctx, awsapi.Sim(endpoint, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(dist, metric, stat string) []float64 {
		t.Helper()
		got, err := cw.MetricData(ctx, []awsapi.Query{{ID: "m", Namespace: "AWS/CloudFront", Metric: metric, Stat: stat, Period: time.Minute,
			Dimensions: map[string]string{"DistributionId": dist, "Region": "Global"}}}, start, clk.now())
		if err != nil {
			t.Fatal(err)
		}
		var vs []float64
		for _, p := range got["m"].Points {
			vs = append(vs, p.Value)
		}
		return vs
	}
	near := func(what string, vs []float64, want float64) {
		t.Helper()
		if len(vs) == 0 {
			t.Fatalf("%s: no datapoints", what)
		}
		for _, v := range vs {
			if math.Abs(v-want) > 0.01*math.Max(1, want) {
				t.Fatalf("%s = %v, want %g per minute", what, vs, want)
			}
		}
	}
	near("staging Requests", read(staging.id, "Requests", "Sum"), 240)
	near("staging 5xxErrorRate", read(staging.id, "5xxErrorRate", "Average"), 25)
	near("staging LambdaExecutionError", read(staging.id, "LambdaExecutionError", "Sum"), 12)
	near("primary Requests", read(primary.id, "Requests", "Sum"), 2160)
	near("primary 5xxErrorRate", read(primary.id, "5xxErrorRate", "Average"), 100*2.0/2160) // table 7: the default 0.1 %, 2 of 2160
	if vs := read(primary.id, "LambdaExecutionError", "Sum"); len(vs) != 0 {
		t.Fatalf("primary LambdaExecutionError %v: its build (table 7) is healthy", vs)
	}

	// Discarded: the policy off, the staging distribution gets nothing.
	if _, err := h.tryUpdate(policy, policyIn(false, 0.1)); err != nil {
		t.Fatal(err)
	}
	start = clk.now()
	clk.advance(2 * time.Minute)
	if vs := read(staging.id, "Requests", "Sum"); len(vs) != 0 {
		t.Fatalf("staging Requests %v with the policy disabled, want none", vs)
	}
	near("primary Requests after the discard", read(primary.id, "Requests", "Sum"), 2400)
	if err := cloud.ClearEdgeHealth(EdgeTarget{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := cloud.EdgeHealth(); len(got) != 0 {
		t.Fatalf("edge profiles after clear: %v", got)
	}
}

func TestEdgeHealthRefusesWhatItCannotApply(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := 0.5
	for _, tc := range []struct {
		t    EdgeTarget
		p    EdgeProfile
		want string
	}{
		{EdgeTarget{}, EdgeProfile{ErrorRate: &r}, "name the edge build"},
		{EdgeTarget{TableVersion: 3, CodeSha256: "x"}, EdgeProfile{ErrorRate: &r}, "not both"},
		{EdgeTarget{TableVersion: 3}, EdgeProfile{}, "nothing to set"},
	} {
		if err := c.SetEdgeHealth(tc.t, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v %+v: got %v, want %q", tc.t, tc.p, err, tc.want)
		}
	}
}
