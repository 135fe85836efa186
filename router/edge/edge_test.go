package edge

import (
	"encoding/json"
	"fmt"
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
	Format      int    `json:"format"`
	Version     int64  `json:"version"`
	Checksum    string `json:"checksum"`
	GeneratedAt string `json:"generatedAt"`
	Image       struct {
		File  string `json:"file"`
		Bytes int    `json:"bytes"`
		CRC32 string `json:"crc32"`
	} `json:"image"`
	TenantFrom        string            `json:"tenantFrom"`
	TenantHeader      string            `json:"tenantHeader"`
	TenantClaim       string            `json:"tenantClaim"`
	RetryAfterSeconds int               `json:"retryAfterSeconds"`
	Origins           map[string]string `json:"origins"`
	TenantHostDomains []string          `json:"tenantHostDomains"`
}

// The package encodes the table: config.json names the table and its image,
// the image routes every bucket and override as the table does.
func TestPackageEncodesTheTable(t *testing.T) {
	tb := goldenTable(t)
	b, err := BuildWith(tb, goldenOrigins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cfg configJSON
	dec := json.NewDecoder(strings.NewReader(string(b.Config)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Format != ConfigFormat || cfg.Version != tb.Version() || cfg.Checksum != tb.Checksum() || cfg.TenantFrom != "header" ||
		cfg.TenantHeader != "x-tenant-id" || cfg.RetryAfterSeconds != RetryAfterSeconds || cfg.Image.File != ImageFile || cfg.Image.Bytes != len(b.Image) {
		t.Errorf("config.json: %+v", cfg)
	}
	if len(cfg.Origins) != len(goldenOrigins) {
		t.Errorf("origins: %v", cfg.Origins)
	}
	im, err := ReadImage(b.Image)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%08x", im.CRC) != cfg.Image.CRC32 {
		t.Errorf("crc32 %08x, config.json says %s", im.CRC, cfg.Image.CRC32)
	}
	if err := checkImageRoutes(tb, b.Image); err != nil {
		t.Error(err)
	}
	if r := im.Route("globex"); !r.Override || r.Cell != "cell-a" || !r.RejectsWrites() || r.Target != "cell-d" {
		t.Errorf("migrating override: %+v", r)
	}
	if r := im.Route("umbrella"); !r.Override || r.Cell != "cell-d" || r.RejectsWrites() || r.WriteMode != router.WriteAllow {
		t.Errorf("migrating override that allows writes: %+v", r)
	}
	again, _ := BuildWith(tb, goldenOrigins, Options{TenantHeader: "X-Tenant-Id"})
	if string(again.Config) != string(b.Config) || string(again.Image) != string(b.Image) {
		t.Error("the package is not byte-stable")
	}
	jwt, err := ConfigWith(tb, goldenOrigins, Options{TenantFrom: "jwt:tid"})
	if err != nil || !strings.Contains(string(jwt), "\"tenantFrom\": \"jwt\",\n\"tenantClaim\": \"tid\"") || strings.Contains(string(jwt), "tenantHeader") {
		t.Errorf("jwt config: %v\n%s", err, jwt)
	}
}

// Two overrides whose keys coincide cannot be told apart by the image: it
// refuses them rather than route one like the other.
func TestWriteImageRefusesCollidingKeys(t *testing.T) {
	tb := goldenTable(t)
	if _, err := WriteImage(tb, goldenOrigins); err != nil {
		t.Fatal(err)
	}
	// Every override gets the same FNV and Hash2 words: forge the keys.
	img, _ := WriteImage(tb, goldenOrigins)
	l := layoutOf(img)
	copy(img[l.ovs+16:l.ovs+28], img[l.ovs:l.ovs+12]) // the second override's key := the first's
	fixCRC(img)
	if _, err := ReadImage(img); err != nil {
		t.Fatalf("the reader checks structure, not uniqueness: %v", err)
	}
	if err := checkImageRoutes(tb, img); err == nil {
		t.Error("an image routing one override like another passed checkImageRoutes")
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
	if len(files) != 6 {
		t.Errorf("package files: %v", keys(files))
	}
	for _, f := range []string{"index.js", "routing.js", "lanes.js", "image.js"} {
		disk, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if files[f] != string(disk) {
			t.Errorf("%s in the package differs from the file", f)
		}
	}
	if !strings.Contains(files["index.js"], "loadHandler(__dirname)") || !strings.Contains(files["index.js"], "exports.handler") {
		t.Error("index.js does not load its package or export the handler")
	}
	b, _ := BuildWith(demoTable(t), demoOrigins, Options{})
	if files[ConfigFile] != string(b.Config) || files[ImageFile] != string(b.Image) {
		t.Error("config.json or the image in the package differ from BuildWith")
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
