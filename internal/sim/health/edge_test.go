package health_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	readers "github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/sim/awsapi"
	"github.com/cellctl/cellctl/internal/sim/health"
	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// The router's edge through the provider, as the router component builds
// it; a bad routing table on the staging distribution shows in its
// CloudFront metrics and nowhere else.
func TestEdgeMetricsFollowTheBuildEachDistributionRuns(t *testing.T) {
	clk := simtest.NewClock()
	dir := t.TempDir()
	h := simtest.On(t, provider.Options{Dir: dir, Stack: "router", Now: clk.Now, DependencyTimeout: 300 * time.Millisecond}, "us-east-1")
	role := h.Create("aws:iam/role:Role", "edge-role", simtest.PM("assumeRolePolicy", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["edgelambda.amazonaws.com","lambda.amazonaws.com"]},"Action":"sts:AssumeRole"}]}`))
	fnIn := simtest.PM("runtime", "nodejs24.x", "handler", "index.handler", "role", simtest.S(role.Out, "arn"), "publish", true, "timeout", 5)
	fnIn["code"] = simtest.EdgeCode(t, 7)
	fn := h.Create(simtest.TFn, "edge", fnIn)
	v1 := simtest.S(fn.Out, "qualifiedArn")
	staging := h.Create(simtest.TDistribution, "cdn-staging", simtest.DistInputs(v1, "staging", true))
	policyIn := func(enabled bool, weight float64) resource.PropertyMap {
		return simtest.PM("enabled", enabled,
			"stagingDistributionDnsNames", map[string]any{"items": []any{simtest.S(staging.Out, "domainName")}, "quantity": 1},
			"trafficConfig", map[string]any{"type": "SingleWeight", "singleWeightConfig": map[string]any{"weight": weight}})
	}
	policy := h.Create(simtest.TCDPolicy, "cdn-policy", policyIn(false, 0.1))
	// CloudFront refuses the policy on the primary's create: it is
	// attached by an update, as the router's second pass does.
	primary := h.Create(simtest.TDistribution, "cdn", simtest.DistInputs(v1))
	if _, err := h.TryCreate(simtest.TDistribution, "cdn-with-policy", simtest.DistInputs(v1, "continuousDeploymentPolicyId", policy.ID)); err == nil || !strings.Contains(err.Error(), "InvalidArgument") {
		t.Fatalf("the simulator created a primary with its policy attached (%v): CloudFront refuses that", err)
	}
	primary, err := h.TryUpdate(primary, simtest.DistInputs(v1, "continuousDeploymentPolicyId", policy.ID))
	if err != nil {
		t.Fatalf("attaching the policy in an update: %v", err)
	}

	// A new table is published and canaried at 10 %.
	clk.Advance(time.Minute)
	fnIn2 := fnIn.Copy()
	fnIn2["code"] = simtest.EdgeCode(t, 8)
	fn2, err := h.TryUpdate(fn, fnIn2)
	if err != nil {
		t.Fatal(err)
	}
	v2 := simtest.S(fn2.Out, "qualifiedArn")
	if v2 == v1 {
		t.Fatalf("no new version published")
	}
	if _, err := h.TryUpdate(staging, simtest.DistInputs(v2, "staging", true)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.TryUpdate(policy, policyIn(true, 0.1)); err != nil {
		t.Fatal(err)
	}
	cloud := clk.Cloud(h.Cloud)
	bad, fnErr := 0.2, 0.05
	if err := health.SetEdge(cloud, health.EdgeTarget{TableVersion: 8}, health.EdgeProfile{ErrorRate: &bad, FunctionErrorRate: &fnErr}); err != nil {
		t.Fatal(err)
	}
	start := clk.Now()
	clk.Advance(3 * time.Minute)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	endpoint, stop, err := awsapi.Serve(ctx, cloud)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cw, err := readers.NewCloudWatch(ctx, readers.Sim(endpoint, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(dist, metric, stat string) []float64 {
		t.Helper()
		got, err := cw.MetricData(ctx, []readers.Query{{ID: "m", Namespace: "AWS/CloudFront", Metric: metric, Stat: stat, Period: time.Minute,
			Dimensions: map[string]string{"DistributionId": dist, "Region": "Global"}}}, start, clk.Now())
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
	near("staging Requests", read(staging.ID, "Requests", "Sum"), 240)
	near("staging 5xxErrorRate", read(staging.ID, "5xxErrorRate", "Average"), 25)
	near("staging LambdaExecutionError", read(staging.ID, "LambdaExecutionError", "Sum"), 12)
	near("primary Requests", read(primary.ID, "Requests", "Sum"), 2160)
	near("primary 5xxErrorRate", read(primary.ID, "5xxErrorRate", "Average"), 100*2.0/2160) // table 7: the default 0.1 %, 2 of 2160
	if vs := read(primary.ID, "LambdaExecutionError", "Sum"); len(vs) != 0 {
		t.Fatalf("primary LambdaExecutionError %v: its build (table 7) is healthy", vs)
	}

	// Discarded: the policy off, the staging distribution gets nothing.
	if _, err := h.TryUpdate(policy, policyIn(false, 0.1)); err != nil {
		t.Fatal(err)
	}
	start = clk.Now()
	clk.Advance(2 * time.Minute)
	if vs := read(staging.ID, "Requests", "Sum"); len(vs) != 0 {
		t.Fatalf("staging Requests %v with the policy disabled, want none", vs)
	}
	near("primary Requests after the discard", read(primary.ID, "Requests", "Sum"), 2400)
	if err := health.ClearEdge(cloud, health.EdgeTarget{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := health.EdgeProfiles(cloud); len(got) != 0 {
		t.Fatalf("edge profiles after clear: %v", got)
	}
}

func TestEdgeHealthRefusesWhatItCannotApply(t *testing.T) {
	c, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := 0.5
	for _, tc := range []struct {
		t    health.EdgeTarget
		p    health.EdgeProfile
		want string
	}{
		{health.EdgeTarget{}, health.EdgeProfile{ErrorRate: &r}, "name the edge build"},
		{health.EdgeTarget{TableVersion: 3, CodeSha256: "x"}, health.EdgeProfile{ErrorRate: &r}, "not both"},
		{health.EdgeTarget{TableVersion: 3}, health.EdgeProfile{}, "nothing to set"},
	} {
		if err := health.SetEdge(c, tc.t, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v %+v: got %v, want %q", tc.t, tc.p, err, tc.want)
		}
	}
}
