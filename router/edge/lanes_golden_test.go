package edge

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/router"
)

// goldenLanes are the golden table's lane layouts: the default, the
// issue's M = 64, M = 1, M = 256 and r = M.
func goldenLanes() map[string]*router.Lanes {
	return map[string]*router.Lanes{
		"cell-a": router.MustLanes(8, 2),
		"cell-b": router.MustLanes(64, 2),
		"cell-c": router.MustLanes(1, 1),
		"cell-d": router.MustLanes(256, 8),
		"cell-e": router.MustLanes(16, 16),
	}
}

func goldenLaneRequests(t *testing.T, tb *router.Table) []GoldenRequest {
	r, err := NewRouterWith(tb, goldenOrigins, Options{TenantHeader: DefaultTenantHeader, TenantHostDomains: goldenHostDomains, Lanes: goldenLanes()})
	if err != nil {
		t.Fatal(err)
	}
	var out []GoldenRequest
	add := func(name, method string, headers ...[2]string) {
		req := Request{Method: method, Headers: headers}
		out = append(out, GoldenRequest{Name: name, Config: "lanes", Request: req, Expect: r.Evaluate(req)})
	}
	h := func(name, value string) [2]string { return [2]string{name, value} }
	for i, id := range goldenTenants(t) {
		if i%4 == 0 || i >= 2000 {
			add("tenant header", "GET", h("X-Tenant-Id", id))
		}
	}
	for _, id := range []string{"acme", "globex", "hooli", "tenant-0001", "東京"} {
		add("viewer X-Cell-Lanes is replaced", "GET", h("X-Tenant-Id", id), h("X-Cell-Lanes", "0,1,2,3"))
		add("viewer X-Cell-Lanes is replaced", "POST", h("X-Tenant-Id", id), h("x-cell-lanes", "999"))
	}
	for _, host := range []string{"acme.example.com", "GLOBEX.example.com", "tenant-0037.example.com", "müller-gmbh.example.com"} {
		add("host fallback", "GET", h("Host", host))
	}
	return out
}

// TestGoldenLaneVectors pins the lanes config and the X-Cell-Lanes of
// forwarded requests, which lanes.test.js checks the handler against.
func TestGoldenLaneVectors(t *testing.T) {
	tb := goldenTable(t)
	b := mustBuild(t, tb, goldenOrigins, Options{TenantHeader: DefaultTenantHeader, TenantHostDomains: goldenHostDomains, Lanes: goldenLanes()})
	if !strings.Contains(string(b.Config), `"lanes": {"cell-a": [8, 2], "cell-b": [64, 2], "cell-c": [1, 1], "cell-d": [256, 8], "cell-e": [16, 16]}`) {
		t.Errorf("config.json lanes:\n%s", b.Config)
	}
	goldenPackage(t, "lanes", b)
	reqs := goldenLaneRequests(t, tb)
	lanes := 0
	for _, r := range reqs {
		if r.Expect.Kind == KindForward {
			if r.Expect.Lanes == "" {
				t.Errorf("%s: forwarded without lanes: %+v", r.Name, r.Expect)
			}
			lanes++
		} else if r.Expect.Lanes != "" {
			t.Errorf("%s: lanes on a %s", r.Name, r.Expect.Kind)
		}
	}
	if lanes < 100 {
		t.Errorf("only %d forwarded requests", lanes)
	}
	checkGolden(t, "golden_requests_lanes.json", marshalLines(reqs))
}

// Without Options.Lanes the config and the decisions are what they were
// before lanes existed: config.json names no lanes and no outcome
// carries lanes.
func TestNoLanesWithoutLayouts(t *testing.T) {
	tb := goldenTable(t)
	cfg, err := Config(tb, goldenOrigins, DefaultTenantHeader)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "lanes") {
		t.Errorf("config without layouts mentions lanes:\n%s", cfg)
	}
	r, _ := NewRouter(tb, goldenOrigins, DefaultTenantHeader)
	if o := r.Evaluate(Request{Method: "GET", Headers: [][2]string{{"X-Tenant-Id", "acme"}}}); o.Lanes != "" {
		t.Errorf("lanes without layouts: %+v", o)
	}
}

func TestWithLanesRefusesIncompleteOrUnknownLayouts(t *testing.T) {
	tb := goldenTable(t)
	l := goldenLanes()
	delete(l, "cell-c")
	l["cell-z"] = router.MustLanes(8, 2)
	_, err := ConfigWith(tb, goldenOrigins, Options{Lanes: l})
	if err == nil || !strings.Contains(err.Error(), `"cell-z" is not a cell`) || !strings.Contains(err.Error(), `cell "cell-c" of routing table version`) {
		t.Errorf("Config with incomplete lanes = %v", err)
	}
	if _, err := NewRouterWith(tb, goldenOrigins, Options{Lanes: l}); err == nil {
		t.Error("NewRouter accepted incomplete lanes")
	}
	if _, err := Config(tb, goldenOrigins, "X-Cell-Lanes"); err == nil || !strings.Contains(err.Error(), "sets X-Cell-Lanes itself") {
		t.Errorf("X-Cell-Lanes as the tenant header: %v", err)
	}
}
