package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cellctl/cellctl/internal/edgeversions"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router/canary"
)

const edgeFn = "arn:aws:lambda:us-east-1:123456789012:function:router-edge-7f3a9c1"

// routerState is a router's deployed resources in the middle of a canary:
// the staging distribution runs the candidate (version 30), the primary the
// version before (29), and an ordered behavior of the primary an older one.
func routerState(t *testing.T) *deployment {
	t.Helper()
	raw := `{"resources": [
	  {"urn": "urn:pulumi:router::cells::cells:router:Router$aws:lambda/function:Function::router-edge", "type": "aws:lambda/function:Function",
	   "inputs": {"publish": true}, "outputs": {"name": "router-edge-7f3a9c1", "arn": "` + edgeFn + `", "version": "30"}},
	  {"urn": "urn:pulumi:router::cells::cells:router:Router$aws:lambda/function:Function::other", "type": "aws:lambda/function:Function",
	   "inputs": {"publish": false}, "outputs": {"name": "unpublished", "arn": "arn:aws:lambda:us-east-1:123456789012:function:unpublished"}},
	  {"urn": "urn:pulumi:router::cells::cells:router:Router$aws:cloudfront/distribution:Distribution::router-cdn", "type": "aws:cloudfront/distribution:Distribution", "id": "E1PRIMARY",
	   "outputs": {"defaultCacheBehavior": {"lambdaFunctionAssociations": [{"eventType": "origin-request", "lambdaArn": "` + edgeFn + `:29"}]},
	               "orderedCacheBehaviors": [{"lambdaFunctionAssociations": [{"eventType": "origin-request", "lambdaArn": "` + edgeFn + `:12"}]}]}},
	  {"urn": "urn:pulumi:router::cells::cells:router:Router$aws:cloudfront/distribution:Distribution::router-cdn-staging", "type": "aws:cloudfront/distribution:Distribution", "id": "E2STAGING",
	   "outputs": {"defaultCacheBehavior": {"lambdaFunctionAssociations": [{"eventType": "origin-request", "lambdaArn": "` + edgeFn + `:30"}]}}}
	]}`
	var d deployment
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

func TestTheVersionsTheDistributionsRunAreReadFromTheDeployedState(t *testing.T) {
	u := edgeUseOf(routerState(t), stackrun.Request{Stack: "router", Op: stackrun.OpUp})
	if !reflect.DeepEqual(u.functions, []string{"router-edge-7f3a9c1"}) {
		t.Fatalf("published functions %v (an unpublished function has no versions to prune)", u.functions)
	}
	want := []edgeversions.Reference{
		{ARN: edgeFn + ":29", By: "primary distribution router-cdn (E1PRIMARY)"},
		{ARN: edgeFn + ":12", By: "primary distribution router-cdn (E1PRIMARY)"},
		{ARN: edgeFn + ":30", By: "staging distribution router-cdn-staging (E2STAGING)"},
	}
	if got := u.refs[edgeFn]; !reflect.DeepEqual(got, want) {
		t.Fatalf("references\n got %+v\nwant %+v", got, want)
	}
}

func TestAVersionOnlyTheStagingDistributionRunsIsKept(t *testing.T) {
	d := routerState(t)
	// The staging distribution still runs version 5 (a canary candidate
	// left from long ago), far below the newest-N window.
	d.Resources[3].Outputs["defaultCacheBehavior"] = map[string]any{"lambdaFunctionAssociations": []any{map[string]any{"eventType": "origin-request", "lambdaArn": edgeFn + ":5"}}}
	// And the run pins the primary to version 8 (a canary's rollback).
	req := stackrun.Request{Stack: "router", Op: stackrun.OpUp, Inputs: stackrun.Inputs{Router: &canary.Traffic{Phase: canary.Header, PrimaryFunctionArn: edgeFn + ":8", HeaderValue: "t"}}}
	u := edgeUseOf(d, req)
	var all []int
	for v := 1; v <= 30; v++ {
		all = append(all, v)
	}
	dec, err := edgeversions.Decide(all, u.refs[edgeFn], 3)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[int]string{}
	for _, k := range dec.Keep {
		kept[k.Version] = k.Why
	}
	for v, why := range map[int]string{5: "staging distribution router-cdn-staging (E2STAGING)", 8: "the canary's primary (its rollback target)", 12: "primary distribution router-cdn (E1PRIMARY)", 29: "primary distribution router-cdn (E1PRIMARY), one of the 3 newest"} {
		if kept[v] != why {
			t.Errorf("version %d kept because %q, want %q", v, kept[v], why)
		}
	}
	if len(dec.Keep) != 6 || len(dec.Delete) != 24 {
		t.Errorf("kept %v, deleted %v", dec.Keep, dec.Delete)
	}
}
