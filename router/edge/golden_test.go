package edge

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/router"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/routing")

const goldenDir = "../../testdata/routing"

// goldenOrigins are the origins of the golden table's cells (cell-c is
// drained and has none).
var goldenOrigins = map[string]string{
	"cell-a": "cell-a-1111111111.us-east-1.elb.amazonaws.com",
	"cell-b": "cell-b-2222222222.us-east-1.elb.amazonaws.com",
	"cell-d": "cell-d-4444444444.eu-west-1.elb.amazonaws.com",
	"cell-e": "cell-e-5555555555.eu-west-1.elb.amazonaws.com",
}

// The partial config lacks cell-e's origin, to pin the 502 path (Config
// refuses to build such a config; the handler must still never forward
// to a cell it has no origin for).
const missingOriginCell = "cell-e"

// goldenHostDomains are the tenant host domains of the "full" and
// "partial" golden configs (a distribution with viewer domain
// "*.example.com").
var goldenHostDomains = []string{"example.com"}

// GoldenRequest is one vector of golden_requests.json.
type GoldenRequest struct {
	Name    string  `json:"name"`
	Config  string  `json:"config"` // the golden package: testdata/routing/edge/<config> ("full", "partial", "nohost", "jwt", "lanes")
	Request Request `json:"request"`
	Expect  Outcome `json:"expect"`
}

func goldenTable(t *testing.T) *router.Table {
	t.Helper()
	tb, err := router.Load(filepath.Join(goldenDir, "golden_table.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func goldenTenants(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir, "golden_tenants.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		Tenant string `json:"tenant"`
	}
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.Tenant
	}
	return ids
}

func goldenRequests(t *testing.T, tb *router.Table) []GoldenRequest {
	full := newRouter(tb, goldenOrigins, DefaultTenantHeader)
	full.domains = goldenHostDomains
	partialOrigins := map[string]string{}
	for k, v := range goldenOrigins {
		if k != missingOriginCell {
			partialOrigins[k] = v
		}
	}
	partial := newRouter(tb, partialOrigins, DefaultTenantHeader)
	partial.domains = goldenHostDomains
	// noHost is a distribution without viewer domains: the Host is never a tenant.
	noHost := newRouter(tb, goldenOrigins, DefaultTenantHeader)
	// jwt reads the tenant from the "tid" claim of the bearer token.
	jwt := newRouter(tb, goldenOrigins, "")
	jwt.claim, jwt.domains = goldenClaim, goldenHostDomains

	var out []GoldenRequest
	add := func(name, config, method string, headers ...[2]string) {
		r := full
		switch config {
		case "partial":
			r = partial
		case "nohost":
			r = noHost
		case "jwt":
			r = jwt
		}
		req := Request{Method: method, Headers: headers}
		if req.Headers == nil {
			req.Headers = [][2]string{}
		}
		out = append(out, GoldenRequest{Name: name, Config: config, Request: req, Expect: r.Evaluate(req)})
	}
	h := func(name, value string) [2]string { return [2]string{name, value} }
	host := h("Host", "d111111abcdef8.cloudfront.net")

	// Every golden tenant id through the header (every tenth with a Host
	// that must not be used).
	for i, id := range goldenTenants(t) {
		if i%10 == 0 {
			add("tenant header", "full", "GET", h("X-Tenant-Id", id), host)
		} else {
			add("tenant header", "full", "GET", h("X-Tenant-Id", id))
		}
	}
	// Writes of every overridden tenant, with each method.
	for _, o := range tb.Overrides() {
		for _, m := range []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"} {
			add("override "+string(o.State)+" "+string(o.WriteMode), "full", m, h("X-Tenant-Id", o.Tenant), host)
		}
	}
	// Header name case (CloudFront lowercases the map key, keeps the
	// original in "key"), duplicates and empty values.
	add("header name upper case", "full", "GET", h("X-TENANT-ID", "acme"))
	add("header name lower case", "full", "POST", h("x-tenant-id", "globex"))
	add("first of two tenant headers wins", "full", "GET", h("X-Tenant-Id", "acme"), h("x-tenant-id", "globex"))
	add("empty tenant header is not a fallback to Host", "full", "GET", h("X-Tenant-Id", ""), h("Host", "acme.example.com"))
	add("invalid tenant header is not a fallback to Host", "full", "GET", h("X-Tenant-Id", "a b"), h("Host", "acme.example.com"))
	add("header wins over host", "full", "GET", h("X-Tenant-Id", "initech"), h("Host", "acme.example.com"))
	add("no tenant header and no host", "full", "GET")
	add("other headers only", "full", "GET", h("Accept", "*/*"), h("X-Tenant", "acme"))
	// Host fallback.
	for _, hv := range []string{
		"acme.example.com", "ACME.Example.COM", "acme.example.com:8443", "acme:8443", "acme", "Acme",
		"globex.app.example.com", "tenant-0001.example.com", "tenant-0037.example.com", "umbrella.example.com",
		"initech.example.com.", "__proto__.example.com", "constructor.example.com",
		"müller-gmbh.example.com", "MÜLLER-GMBH.example.com", "xn--mller-gmbh-9db.example.com",
		".example.com", ":443", "", "[::1]:443", "[2001:db8::1]", "127.0.0.1", "10.0.0.1:80",
		"a", strings.Repeat("x", 128) + ".example.com", strings.Repeat("x", 129) + ".example.com",
		"a b.example.com", "tab\t.example.com", "ABCDEFGHIJKLMNOPQRSTUVWXYZ.example.com", "x@A[`az{.example.com", "Zulu.example.com", "@[`{.example.com",
	} {
		add("host fallback", "full", "GET", h("Host", hv))
		add("host fallback", "full", "POST", h("host", hv))
	}
	// Under a domain that is not a tenant host domain, or with none at all
	// (viewers reach only dXXXX.cloudfront.net), the Host names no tenant.
	for _, hv := range []string{"d111111abcdef8.cloudfront.net", "acme.other.example", "acme.sub.example.com", "example.com"} {
		add("host outside the tenant host domains", "full", "GET", h("Host", hv))
	}
	for _, hv := range []string{"d111111abcdef8.cloudfront.net", "acme.example.com", "acme"} {
		add("no tenant host domains: no Host fallback", "nohost", "GET", h("Host", hv))
	}
	add("no tenant host domains: the header still routes", "nohost", "GET", h("X-Tenant-Id", "acme"), h("Host", "d111111abcdef8.cloudfront.net"))
	// Migrating tenants found through the Host.
	for _, m := range []string{"GET", "DELETE"} {
		add("host fallback, migrating", "full", m, h("Host", "GLOBEX.example.com"))
		add("host fallback, migrating", "full", m, h("Host", "hooli.example.com"))
	}
	// A cell without an origin is never selected silently.
	for _, id := range goldenTenants(t) {
		if r := tb.Route(id); r.Valid && r.Cell == missingOriginCell {
			add("cell without origin", "partial", "GET", h("X-Tenant-Id", id))
		}
	}
	add("cell without origin, migrating write still rejected first", "partial", "POST", h("X-Tenant-Id", "hooli"))
	add("cell without origin, other cells unaffected", "partial", "GET", h("X-Tenant-Id", "acme"))

	// The tenant from the "tid" claim of a bearer JWT.
	for i, id := range goldenTenants(t) {
		if i%7 == 0 || i >= 2000 {
			add("jwt claim", "jwt", "GET", h("Authorization", "Bearer "+jwtOf(map[string]any{"sub": "user-1", goldenClaim: id})))
		}
	}
	for _, o := range tb.Overrides() {
		add("jwt claim, override", "jwt", "POST", h("Authorization", "Bearer "+jwtOf(map[string]any{goldenClaim: o.Tenant})))
	}
	for _, c := range jwtCases() {
		add("jwt: "+c.name, "jwt", "GET", h("Authorization", c.value), h("Host", "acme.example.com"))
	}
	add("jwt: the tenant header is not read", "jwt", "GET", h("X-Tenant-Id", "acme"), h("Authorization", "Bearer "+jwtOf(map[string]any{goldenClaim: "globex"})))
	add("jwt: no Authorization header, host fallback", "jwt", "GET", h("X-Tenant-Id", "acme"), h("Host", "initech.example.com"))
	add("jwt: no Authorization header, no host", "jwt", "GET", h("X-Tenant-Id", "acme"))
	add("jwt: the first Authorization header wins", "jwt", "GET", h("Authorization", "Bearer "+jwtOf(map[string]any{goldenClaim: "acme"})), h("authorization", "Bearer "+jwtOf(map[string]any{goldenClaim: "globex"})))
	return out
}

func marshalLines[T any](items []T) []byte {
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, it := range items {
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(it); err != nil {
			panic(err)
		}
		b.Write(bytes.TrimRight(line.Bytes(), "\n"))
		if i < len(items)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes()
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./router/edge -update` to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs from what Go computes now at line %d:\n  file: %s\n  now:  %s\nif intended, run `go test ./router/edge -update` and review the diff", path, i+1, wl[i], gl[i])
			}
		}
		t.Fatalf("%s differs from what Go computes now (%d vs %d lines); run `go test ./router/edge -update` if intended", path, len(wl), len(gl))
	}
}

// goldenPackage writes (or, without -update, checks) the golden function
// package testdata/routing/edge/<name>: config.json and routing.img.
func goldenPackage(t *testing.T, name string, b *Built) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Join(goldenDir, "edge", name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	checkGolden(t, filepath.Join("edge", name, ConfigFile), b.Config)
	checkGolden(t, filepath.Join("edge", name, ImageFile), b.Image)
}

func mustBuild(t *testing.T, tb *router.Table, origins map[string]string, opts Options) *Built {
	t.Helper()
	b, err := BuildWith(tb, origins, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// partialPackage lacks cell-e's origin (BuildWith refuses that), to pin
// the 502 path.
func partialPackage(t *testing.T, tb *router.Table) *Built {
	partial := map[string]string{}
	for k, v := range goldenOrigins {
		if k != missingOriginCell {
			partial[k] = v
		}
	}
	img, err := WriteImage(tb, partial)
	if err != nil {
		t.Fatal(err)
	}
	return &Built{Config: renderConfig(tb, partial, TenantSource{Header: "x-tenant-id"}, goldenHostDomains, nil, img), Image: img}
}

// TestGoldenVectors pins the packages and the request decisions that the
// JavaScript handler is tested against (node --test router/edge/).
func TestGoldenVectors(t *testing.T) {
	tb := goldenTable(t)
	goldenPackage(t, "full", mustBuild(t, tb, goldenOrigins, Options{TenantHeader: DefaultTenantHeader, TenantHostDomains: goldenHostDomains}))
	goldenPackage(t, "nohost", mustBuild(t, tb, goldenOrigins, Options{TenantHeader: DefaultTenantHeader}))
	goldenPackage(t, "jwt", mustBuild(t, tb, goldenOrigins, Options{TenantFrom: "jwt:" + goldenClaim, TenantHostDomains: goldenHostDomains}))
	goldenPackage(t, "partial", partialPackage(t, tb))

	reqs := goldenRequests(t, tb)
	kinds := map[string]int{}
	for _, r := range reqs {
		kinds[r.Config+" "+r.Expect.Kind]++
	}
	for _, k := range []string{"full " + KindForward, "full " + KindBadRequest, "full " + KindWriteRejected, "partial " + KindNoOrigin,
		"jwt " + KindForward, "jwt " + KindBadRequest, "jwt " + KindWriteRejected} {
		if kinds[k] < 5 {
			t.Errorf("golden requests have only %d %s outcomes", kinds[k], k)
		}
	}
	checkGolden(t, "golden_requests.json", marshalLines(reqs))
}

// TestGoldenImagesRouteLikeTheTable: Go reads the golden images as the
// edge does and agrees with the table on every golden tenant vector
// (golden.test.js holds the JS reader to the same vectors).
func TestGoldenImagesRouteLikeTheTable(t *testing.T) {
	tb := goldenTable(t)
	for _, name := range []string{"full", "nohost", "jwt", "partial", "lanes"} {
		data, err := os.ReadFile(filepath.Join(goldenDir, "edge", name, ImageFile))
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range data {
			if c >= 0x80 {
				t.Fatalf("%s: byte %d is %#x: the image must be 7-bit clean", name, i, c)
			}
		}
		im, err := ReadImage(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if im.Version != tb.Version() || im.Checksum != tb.Checksum() || im.Buckets != tb.Buckets() {
			t.Fatalf("%s: image v%d %s B=%d, table v%d %s B=%d", name, im.Version, im.Checksum, im.Buckets, tb.Version(), tb.Checksum(), tb.Buckets())
		}
		for _, v := range goldenTenantVectors(t) {
			r := im.Route(v.Tenant)
			want := tb.Route(v.Tenant)
			if r.Valid != v.Valid || r.Bucket != v.Bucket || r.Cell != v.Cell || r.Override != v.Override ||
				r.State != v.State || r.Target != v.Target || r.WriteMode != v.WriteMode || r.Valid != want.Valid {
				t.Fatalf("%s: %q routes %+v in the image, the golden vector says %+v", name, v.Tenant, r, v)
			}
		}
	}
}

// goldenTenantVectors reads golden_tenants.json (router writes it).
type goldenTenantVector struct {
	Tenant    string               `json:"tenant"`
	Valid     bool                 `json:"valid"`
	Bucket    int                  `json:"bucket"`
	Cell      string               `json:"cell"`
	Override  bool                 `json:"override"`
	State     router.OverrideState `json:"state"`
	Target    string               `json:"target"`
	WriteMode router.WriteMode     `json:"write_mode"`
}

func goldenTenantVectors(t *testing.T) []goldenTenantVector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir, "golden_tenants.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []goldenTenantVector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}
