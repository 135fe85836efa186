package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
)

// plan --strict counts the code storage the router's edge function holds
// in us-east-1 once its old versions are pruned: the package as rendered
// times the versions it keeps (cells:edgeVersionsKept, the distributions'
// and $LATEST), against Lambda's 75 GB default.
func TestTheEdgeFunctionsKeptVersionsAreCountedAgainstCodeStorage(t *testing.T) {
	f := fleettest.Load(t, fleettest.Demo(t))
	r, err := Render(context.Background(), f, Options{Now: testNow, Stacks: []string{fleet.RouterStack}})
	if err != nil {
		t.Fatal(err)
	}
	var router *Stack
	for _, s := range r.Stacks {
		if s.Kind == KindRouter {
			router = s
		}
	}
	size, err := router.EdgeVersionBytes()
	if err != nil || size < 1000 {
		t.Fatalf("edge package %d bytes, %v", size, err)
	}
	if r.edgeKept != fleet.DefaultEdgeVersionsKept {
		t.Fatalf("kept %d", r.edgeKept)
	}
	d, ok := r.edgeStorageDemand()
	want := float64(size) * float64(fleet.DefaultEdgeVersionsKept+3) / awsfacts.GiB
	if !ok || d.Code != awsfacts.LambdaCodeStorage.Code || d.Region != "us-east-1" || d.Amount < want || d.Amount > want+0.001 {
		t.Fatalf("demand %+v, want %g GiB", d, want)
	}
	if _, found := increase(r.JudgeQuotas(), awsfacts.LambdaCodeStorage.Code, "us-east-1"); found {
		t.Fatal("ten versions of the demo's table fit 75 GB")
	}
	// Enough kept versions of this package to pass 75 GB: an increase
	// the plan asks for, with the request that raises it.
	r.edgeKept = int(80*awsfacts.GiB/float64(size)) + 1
	q, found := increase(r.JudgeQuotas(), awsfacts.LambdaCodeStorage.Code, "us-east-1")
	if !found || q.Needed <= 75 || !strings.Contains(q.Request, "--service-code lambda --quota-code L-2ACBD22F") {
		t.Fatalf("kept versions past 75 GB: %+v (found %v)", q, found)
	}
}
