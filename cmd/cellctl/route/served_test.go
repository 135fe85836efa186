package route

import (
	"context"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/engine"
)

// route says which table each distribution of the deployed router
// serves, and marks the one that is not the local table: a stale edge.
func TestRouteShowsWhichTableEachDistributionServes(t *testing.T) {
	f, _, _ := routeFactory(cmdutil.FormatJSON)
	fl, err := f.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	local := fl.Routing
	deployed := func(context.Context) (map[string]any, error) {
		return map[string]any{"tableVersion": float64(local.Version()), "servedTables": map[string]any{
			"primary": map[string]any{"functionArn": "arn:aws:lambda:us-east-1:1:function:edge:3"},
			"staging": map[string]any{"functionArn": "arn:aws:lambda:us-east-1:1:function:edge:4", "version": float64(local.Version()), "checksum": local.Checksum(), "generatedAt": ""},
		}}, nil
	}
	stdout, _, err := runRoute(t, cmdutil.FormatJSON, RouteOptions{Tenants: []string{"acme"}, Deployed: deployed})
	if err != nil {
		t.Fatal(err)
	}
	var got RouteReport
	oneJSON(t, stdout, &got)
	if len(got.Served) != 2 || got.Served[0].Distribution != "primary" || got.Served[0].Known || got.Served[0].Current ||
		!got.Served[1].Current || got.Served[1].Checksum != local.Checksum() || got.Checksum != local.Checksum() {
		t.Fatalf("served: %+v", got.Served)
	}
	stdout, _, err = runRoute(t, cmdutil.FormatTable, RouteOptions{Tenants: []string{"acme"}, Deployed: deployed})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"primary distribution: an earlier edge function version (arn:aws:lambda:us-east-1:1:function:edge:3), not this table",
		"staging distribution: serves version 1 " + local.Checksum() + " (this table)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("route output lacks %q:\n%s", want, stdout)
		}
	}

	// An undeployed router is a note, not a failure.
	_, stderr, err := runRoute(t, cmdutil.FormatTable, RouteOptions{Tenants: []string{"acme"}, Deployed: func(context.Context) (map[string]any, error) { return nil, engine.ErrNotDeployed }})
	if err != nil || !strings.Contains(stderr, "the router stack is not deployed") {
		t.Errorf("undeployed router: %v %q", err, stderr)
	}
}
