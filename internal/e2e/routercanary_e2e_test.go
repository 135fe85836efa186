package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

// edgeState is what the router's two distributions run and how the
// policy splits traffic, read from the simulated cloud itself.
type edgeState struct {
	primary, staging string // lambdaArn of each distribution
	policyEnabled    bool
	primaryHTTP      string
	// primaryPriceClass and primaryPolicy: the primary's price class and
	// the continuous deployment policy it is attached to ("": none).
	primaryPriceClass, primaryPolicy string
}

func readEdge(t *testing.T, dir string) edgeState {
	t.Helper()
	cloud, err := sim.Open(filepath.Join(dir, ".cellctl", "sim"))
	if err != nil {
		t.Fatal(err)
	}
	dists, err := cloud.Resources(sim.Filter{Stack: "router", Type: "cloudfront/distribution"})
	if err != nil {
		t.Fatal(err)
	}
	var st edgeState
	n := 0
	for _, d := range dists {
		arn := lambdaArnOf(d.Inputs)
		if staging, _ := d.Inputs["staging"].(bool); staging {
			st.staging = arn
		} else {
			st.primary = arn
			st.primaryHTTP, _ = d.Inputs["httpVersion"].(string)
			st.primaryPriceClass, _ = d.Inputs["priceClass"].(string)
			st.primaryPolicy, _ = d.Outputs["continuousDeploymentPolicyId"].(string)
		}
		n++
	}
	if n != 2 || st.primary == "" || st.staging == "" {
		t.Fatalf("router distributions: %d, primary %q, staging %q; want a primary and a staging distribution", n, st.primary, st.staging)
	}
	pols, err := cloud.Resources(sim.Filter{Stack: "router", Type: "cloudfront/continuousDeploymentPolicy"})
	if err != nil || len(pols) != 1 {
		t.Fatalf("continuous deployment policies: %d (%v), want 1", len(pols), err)
	}
	st.policyEnabled, _ = pols[0].Inputs["enabled"].(bool)
	return st
}

func lambdaArnOf(in map[string]any) string {
	b, _ := in["defaultCacheBehavior"].(map[string]any)
	as, _ := b["lambdaFunctionAssociations"].([]any)
	if len(as) != 1 {
		return ""
	}
	a, _ := as[0].(map[string]any)
	s, _ := a["lambdaArn"].(string)
	return s
}

var versionRe = regexp.MustCompile(`"version":\s*(\d+)`)

// bumpTable gives stacks/routing.json a new version (a new edge function
// build) and returns it.
func bumpTable(t *testing.T, dir string) int {
	t.Helper()
	return setTableVersion(t, dir, func(v int) int { return v + 1 })
}

// setTableVersion rewrites the version of the fleet's stacks/routing.json
// to next(its version), in place (the rest of the file byte for byte),
// and returns the new version.
func setTableVersion(t *testing.T, dir string, next func(int) int) int {
	t.Helper()
	path := filepath.Join(dir, "stacks", "routing.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := versionRe.FindSubmatchIndex(data)
	if m == nil {
		t.Fatalf("%s has no version", path)
	}
	v, _ := strconv.Atoi(string(data[m[2]:m[3]]))
	v = next(v)
	out := append(append(append([]byte{}, data[:m[2]]...), strconv.Itoa(v)...), data[m[3]:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRouterCanaryCatchesABadTableAndPromotesAGoodOne: the router is
// shipped through its staging distribution. A routing table the
// simulator's edge model makes fail (20 % 5xx on the distribution that
// runs it) is caught in the smoke phase and never reaches the primary
// (exit 3, primary unchanged, staging reverted, policy off); the next,
// healthy table passes the smoke and the weighted phase and is promoted.
func TestRouterCanaryCatchesABadTableAndPromotesAGoodOne(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	before := readEdge(t, dir)
	if before.primary != before.staging || before.policyEnabled || before.primaryHTTP != "http2" {
		t.Fatalf("after up: %+v; want the staging distribution idle on the primary's version, policy off, HTTP/2", before)
	}

	// A table with nothing to canary: promoted trivially, nothing changes.
	r := mustRun(t, dir, "router", "canary", "--bake-scale", "0.01")
	if !strings.Contains(r.stdout, "router canary: unchanged") {
		t.Errorf("unchanged table:\n%s", r)
	}

	bad := bumpTable(t, dir)
	mustRun(t, dir, "sim", "edge", "set", "--router-table", strconv.Itoa(bad), "--error-rate", "20%")
	r = cellctl(t, dir, "router", "canary", "--bake-scale", "0.01", "--weight-min-requests", "100")
	if r.code != 3 {
		t.Fatalf("bad table v%d: want exit 3, got %s", bad, r)
	}
	t.Logf("the halted canary:\n%s", r)
	if !strings.Contains(r.stderr, "header phase") || !strings.Contains(r.stderr, "edge_error_rate_5xx") || !strings.Contains(r.stderr, "never ran") {
		t.Errorf("the halt must name the phase, the signal and that the primary never ran it:\n%s", r)
	}
	after := readEdge(t, dir)
	if after.primary != before.primary || after.staging != before.primary || after.policyEnabled {
		t.Fatalf("after the discarded canary: %+v; want primary and staging on %s, policy off", after, before.primary)
	}

	good := bumpTable(t, dir)
	r = mustRun(t, dir, "router", "canary", "--bake-scale", "0.01", "--weight-min-requests", "100", "-o", "json")
	var res struct {
		Outcome   string `json:"outcome"`
		Primary   string `json:"primaryFunctionArn"`
		Candidate string `json:"candidateFunctionArn"`
		Steps     []struct {
			Phase    string `json:"phase"`
			Decision string `json:"decision"`
			Polls    []any  `json:"polls"`
		} `json:"steps"`
	}
	decode(t, r, &res)
	if res.Outcome != "promoted" || len(res.Steps) != 2 || res.Steps[0].Phase != "header" || res.Steps[1].Phase != "weight" ||
		res.Steps[0].Decision != "pass" || res.Steps[1].Decision != "pass" || len(res.Steps[0].Polls) == 0 || len(res.Steps[1].Polls) == 0 {
		t.Fatalf("good table v%d: %+v\n%s", good, res, r)
	}
	promoted := readEdge(t, dir)
	if promoted.primary != res.Candidate || promoted.primary == before.primary || promoted.staging != promoted.primary || promoted.policyEnabled {
		t.Fatalf("after the promotion: %+v; want both distributions on the candidate %s, policy off", promoted, res.Candidate)
	}
	var status struct {
		Stacks []struct {
			Name    string         `json:"name"`
			Outputs map[string]any `json:"outputs"`
		} `json:"stacks"`
	}
	decode(t, mustRun(t, dir, "status", "-o", "json"), &status)
	for _, s := range status.Stacks {
		if s.Name == "router" && s.Outputs != nil {
			if got := s.Outputs["tableVersion"]; got != nil && strconv.Itoa(int(got.(float64))) != strconv.Itoa(good) {
				t.Errorf("router tableVersion %v, want %d", got, good)
			}
		}
	}
}
