package edge

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/router"
)

func demoTable(t *testing.T) *router.Table {
	t.Helper()
	tb, err := router.Load("../../stacks/routing.json")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

var demoOrigins = map[string]string{
	"cell-a": "cell-a-1.us-east-1.elb.amazonaws.com",
	"cell-b": "cell-b-1.us-east-1.elb.amazonaws.com",
	"cell-c": "cell-c-1.us-east-1.elb.amazonaws.com",
	"cell-d": "cell-d-1.us-east-1.elb.amazonaws.com",
}

// configJSON is config.json as the handler reads it.
type configJSON struct {
	Format            int                        `json:"format"`
	Version           int64                      `json:"version"`
	Buckets           int                        `json:"buckets"`
	TenantHeader      string                     `json:"tenantHeader"`
	RetryAfterSeconds int                        `json:"retryAfterSeconds"`
	Cells             []string                   `json:"cells"`
	Origins           map[string]string          `json:"origins"`
	BucketRuns        []int                      `json:"bucketRuns"`
	Overrides         map[string]json.RawMessage `json:"overrides"`
	TenantHostDomains []string                   `json:"tenantHostDomains"`
}

func TestConfigEncodesTheTable(t *testing.T) {
	tb := goldenTable(t)
	data, err := Config(tb, goldenOrigins, "")
	if err != nil {
		t.Fatal(err)
	}
	var cfg configJSON
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Format != ConfigFormat || cfg.Version != tb.Version() || cfg.Buckets != tb.Buckets() ||
		cfg.TenantHeader != "x-tenant-id" || cfg.RetryAfterSeconds != RetryAfterSeconds {
		t.Errorf("header fields: %+v", cfg)
	}
	// Expanding the runs gives back the table's assignment.
	var a []string
	for i := 0; i < len(cfg.BucketRuns); i += 2 {
		for n := 0; n < cfg.BucketRuns[i]; n++ {
			a = append(a, cfg.Cells[cfg.BucketRuns[i+1]])
		}
	}
	if strings.Join(a, ",") != strings.Join(tb.Assignment(), ",") {
		t.Error("bucketRuns do not expand to the table's assignment")
	}
	if len(cfg.Overrides) != len(tb.Overrides()) {
		t.Errorf("%d overrides in config, %d in table", len(cfg.Overrides), len(tb.Overrides()))
	}
	if got := string(cfg.Overrides["globex"]); got != `{"cell": "cell-a", "rejectWrites": true}` {
		t.Errorf("migrating override: %s", got)
	}
	if got := string(cfg.Overrides["umbrella"]); got != `{"cell": "cell-d"}` {
		t.Errorf("migrating override that allows writes: %s", got)
	}
	again, _ := Config(tb, goldenOrigins, "X-Tenant-Id")
	if string(again) != string(data) {
		t.Error("Config is not byte-stable")
	}
}

func TestConfigRefusesBadInputs(t *testing.T) {
	tb := demoTable(t)
	partial := map[string]string{"cell-a": demoOrigins["cell-a"], "cell-c": "https://cell-c.example.com/", "cell-x": "x.example.com"}
	_, err := Config(tb, partial, "X Tenant")
	want := []string{
		`tenant header "X Tenant": must be an HTTP header name (letters, digits and !#$%&'*+-.^_` + "`" + `|~), e.g. "X-Tenant-Id"`,
		`origins: cell "cell-b" serves 256 buckets in routing table version 1 but has no origin; pass its ALB DNS name`,
		`origins: cell "cell-d" serves 256 buckets in routing table version 1 but has no origin; pass its ALB DNS name`,
		`origins: cell-c: "https://cell-c.example.com/" must be a DNS name like "cell-a.cells.example.com" (no scheme, port or path)`,
		`origins: "cell-x" is not a cell of routing table version 1 (cells: cell-a, cell-b, cell-c, cell-d)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("Config error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	for _, h := range []string{"Host", "X-Cell-Id", "x-origin-verify"} {
		if _, err := Config(tb, demoOrigins, h); err == nil || !strings.Contains(err.Error(), "cannot carry the tenant id") {
			t.Errorf("tenant header %s: %v", h, err)
		}
	}
	if _, err := NewRouter(tb, nil, ""); err == nil {
		t.Error("NewRouter accepted a table without origins")
	}
}

func TestConfigNeedsOriginsOnlyForCellsThatServe(t *testing.T) {
	tb := goldenTable(t) // cell-c is drained
	origins := map[string]string{}
	for k, v := range goldenOrigins {
		origins[k] = v
	}
	delete(origins, "cell-c")
	if _, err := Config(tb, origins, ""); err != nil {
		t.Errorf("a drained cell needs no origin: %v", err)
	}
	delete(origins, "cell-e") // draining: no new buckets, but still serves some and pinned tenants
	if _, err := Config(tb, origins, ""); err == nil || !strings.Contains(err.Error(), `cell "cell-e" serves 146 buckets`) {
		t.Errorf("draining cell without origin: %v", err)
	}
}

func TestPackage(t *testing.T) {
	files, err := Package(demoTable(t), demoOrigins, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Errorf("package files: %v", keys(files))
	}
	for _, f := range []string{"index.js", "routing.js", "lanes.js"} {
		disk, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if files[f] != string(disk) {
			t.Errorf("%s in the package differs from the file", f)
		}
	}
	if !strings.Contains(files["index.js"], "require('./config.json')") || !strings.Contains(files["index.js"], "exports.handler") {
		t.Error("index.js does not load config.json or export the handler")
	}
	cfg, _ := Config(demoTable(t), demoOrigins, "")
	if files[ConfigFile] != string(cfg) {
		t.Error("config.json in the package differs from Config")
	}
}

func TestRouterEvaluate(t *testing.T) {
	r, err := NewRouterWith(demoTable(t), demoOrigins, Options{TenantHeader: "X-Customer", TenantHostDomains: []string{"Example.com."}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		req  Request
		want Outcome
	}{
		{Request{"GET", [][2]string{{"x-customer", "acme"}}},
			Outcome{Kind: KindForward, Tenant: "acme", Source: "header", Bucket: 527, Cell: "cell-b", Origin: demoOrigins["cell-b"]}},
		{Request{"POST", [][2]string{{"X-Tenant-Id", "acme"}, {"Host", "globex.example.com"}}}, // not the configured header
			Outcome{Kind: KindWriteRejected, Status: 503, Tenant: "globex", Source: "host", Bucket: 558, Cell: "cell-a", RetryAfter: 30}},
		{Request{"HEAD", [][2]string{{"Host", "globex.example.com"}}},
			Outcome{Kind: KindForward, Tenant: "globex", Source: "host", Bucket: 558, Cell: "cell-a", Origin: demoOrigins["cell-a"]}},
		{Request{"GET", nil}, Outcome{Kind: KindBadRequest, Status: 400, Bucket: -1}},
		// The distribution's own name is no tenant.
		{Request{"GET", [][2]string{{"Host", "d111111abcdef8.cloudfront.net"}}}, Outcome{Kind: KindBadRequest, Status: 400, Source: "host", Bucket: -1}},
	}
	for _, c := range cases {
		if got := r.Evaluate(c.req); got != c.want {
			t.Errorf("Evaluate(%v) = %+v\nwant %+v", c.req, got, c.want)
		}
	}
}

// TestNoViewerDomainsNoHostFallback: without viewer domains, viewers reach
// only dXXXX.cloudfront.net; reading "dXXXX" as a tenant would send every
// header-less request to one arbitrary cell. Such requests are a 400.
func TestNoViewerDomainsNoHostFallback(t *testing.T) {
	r, err := NewRouter(demoTable(t), demoOrigins, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"d111111abcdef8.cloudfront.net", "globex.example.com", "globex"} {
		got := r.Evaluate(Request{"GET", [][2]string{{"Host", host}}})
		if got.Kind != KindBadRequest || got.Status != 400 || got.Tenant != "" {
			t.Errorf("Host %s without tenant host domains: %+v, want a 400", host, got)
		}
	}
	if got := r.Evaluate(Request{"GET", [][2]string{{"X-Tenant-Id", "globex"}, {"Host", "d111111abcdef8.cloudfront.net"}}}); got.Kind != KindForward {
		t.Errorf("the tenant header must still route: %+v", got)
	}
	if _, err := ConfigWith(demoTable(t), demoOrigins, Options{TenantHostDomains: []string{"not a domain"}}); err == nil {
		t.Error("a malformed tenant host domain was accepted")
	}
	if got := HostDomainsOf([]string{"app.example.com", "*.app.example.com", "*.Other.example"}); strings.Join(got, ",") != "app.example.com,other.example" {
		t.Errorf("HostDomainsOf = %v", got)
	}
	for host, want := range map[string]string{
		"acme.app.example.com": "acme", "ACME.App.Example.com.:443": "acme", "a.b.app.example.com": "", "app.example.com": "",
		"acme.app.example.com.evil.test": "", "[::1]": "",
	} {
		if got := TenantFromHostIn(host, []string{"app.example.com"}); got != want {
			t.Errorf("TenantFromHostIn(%q) = %q, want %q", host, got, want)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The golden vectors test every boundary of the forbidden ranges; this
// names the drift directly when the two lists differ.
func TestHandlerForbidsTheSameCodePointsAsGo(t *testing.T) {
	start := strings.Index(routingJS, "const FORBIDDEN = [")
	end := strings.Index(routingJS[start:], "];")
	if start < 0 || end < 0 {
		t.Fatal("FORBIDDEN not found in routing.js")
	}
	var js [][2]rune
	for _, m := range regexp.MustCompile(`\[0x([0-9a-f]+), 0x([0-9a-f]+)\]`).FindAllStringSubmatch(routingJS[start:start+end], -1) {
		lo, _ := strconv.ParseInt(m[1], 16, 32)
		hi, _ := strconv.ParseInt(m[2], 16, 32)
		js = append(js, [2]rune{rune(lo), rune(hi)})
	}
	goRanges := router.ForbiddenRanges()
	if len(js) != len(goRanges) {
		t.Fatalf("routing.js forbids %d ranges, Go %d", len(js), len(goRanges))
	}
	for i := range js {
		if js[i] != goRanges[i] {
			t.Errorf("range %d: routing.js %U-%U, Go %U-%U", i, js[i][0], js[i][1], goRanges[i][0], goRanges[i][1])
		}
	}
	if !strings.Contains(routingJS, "const MAX_TENANT_BYTES = "+strconv.Itoa(router.MaxTenantBytes)+";") {
		t.Error("routing.js MAX_TENANT_BYTES differs from router.MaxTenantBytes")
	}
}
