// Package edge builds the Lambda@Edge function of the cell router: the
// Node.js origin-request handler (embedded here), the routing image that
// bakes in the routing table (image.go) and config.json, the function's
// settings and a manifest of the table, so routing needs no call to any
// control plane at request time.
//
// The handler reads the tenant from a header (default X-Tenant-Id) or the
// claim of a bearer JWT (cells:tenantFrom), or, only under the configured
// tenant host domains, the first label of the Host;
// it routes it like router.(*Table).Route, rewrites
// the request to the cell's origin and sets X-Cell-Id. Router is the same
// decision in Go: the golden vectors in testdata/routing hold the two to
// the same answers.
package edge

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/router"
)

//go:embed index.js
var indexJS string

//go:embed routing.js
var routingJS string

//go:embed lanes.js
var lanesJS string

//go:embed image.js
var imageJS string

// codeFiles are the handler's modules, by name in the package.
var codeFiles = map[string]*string{"index.js": &indexJS, "routing.js": &routingJS, "lanes.js": &lanesJS, "image.js": &imageJS}

// CodeBytes is the size of the handler's code.
func CodeBytes() int {
	n := 0
	for _, c := range codeFiles {
		n += len(*c)
	}
	return n
}

const (
	// DefaultTenantHeader carries the tenant id unless the router stack
	// configures another header.
	DefaultTenantHeader = "X-Tenant-Id"
	// RetryAfterSeconds is what a migrating tenant's rejected writes are
	// told to wait.
	RetryAfterSeconds = 30
	// ConfigFormat is the version of config.json this package writes and
	// routing.js reads (2: the table is in the routing image).
	ConfigFormat = 2
	// ConfigFile is the name of the baked config in the function package.
	ConfigFile = "config.json"
	// Handler is the Lambda handler setting for the function.
	Handler = "index.handler"
	// Runtime is the function's Lambda runtime. Node.js 20 reached end of
	// life on 2026-04-30 and Lambda blocks creating functions on it from
	// 2026-08-31 and updating them from 2026-09-30 (Lambda Developer Guide,
	// Building Lambda functions with Node.js): every routing-table change
	// is an update. Node.js 24 is supported until 2028-04-30, and the
	// CloudFront Developer Guide (Restrictions on Lambda@Edge, Supported
	// runtimes) says Lambda@Edge supports the latest Node.js runtimes.
	// Node.js 24 takes no callback-style handlers; this one is async
	// (handler.test.js holds it to that).
	Runtime = "nodejs24.x"
)

// Headers the handler owns or CloudFront reserves: none of them can carry
// the tenant id.
var reservedHeaders = map[string]string{
	"host":              "the Host header is the fallback source of the tenant id under the tenant host domains",
	"authorization":     "the Authorization header carries a token; read a tenant claim from it with cells:tenantFrom: jwt:<claim>",
	"x-cell-id":         "the router sets X-Cell-Id itself",
	"x-routing-version": "the router sets X-Routing-Version itself",
	"x-cell-lanes":      "the router sets X-Cell-Lanes itself",
	"x-origin-verify":   "X-Origin-Verify carries the origin secret",
}

// Headers CloudFront never shows an edge function (nor lets it add), so a
// tenant id sent in one would never reach the router. From "Restrictions on
// all edge functions › Disallowed headers", CloudFront Developer Guide.
var disallowedHeaders = []string{"connection", "expect", "keep-alive", "proxy-authenticate", "proxy-authorization",
	"proxy-connection", "trailer", "upgrade", "x-cache", "x-forwarded-proto", "x-real-ip",
	"x-amzn-auth", "x-amzn-cf-billing", "x-amzn-cf-id", "x-amzn-cf-xff", "x-amzn-errortype", "x-amzn-fle-profile",
	"x-amzn-header-count", "x-amzn-header-order", "x-amzn-lambda-integration-tag", "x-amzn-requestid"}

var disallowedPrefixes = []string{"x-accel-", "x-amz-cf-", "x-edge-"}

// CheckTenantHeader says why name cannot carry the tenant id, or nil: it
// must be an HTTP header name (RFC 9110 token), one CloudFront exposes to
// Lambda@Edge, and not one the router itself reads or sets. The fleet
// loader calls it so a bad cells:tenantHeader is reported at its line, not
// deep inside the router program.
func CheckTenantHeader(name string) error {
	h := strings.ToLower(name)
	if !validHeaderName(h) {
		return fmt.Errorf("must be an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~), e.g. %q", DefaultTenantHeader)
	}
	if why, ok := reservedHeaders[h]; ok {
		return fmt.Errorf("cannot carry the tenant id: %s", why)
	}
	disallowed := false
	for _, d := range disallowedHeaders {
		disallowed = disallowed || h == d
	}
	for _, p := range disallowedPrefixes {
		disallowed = disallowed || strings.HasPrefix(h, p)
	}
	if disallowed {
		return fmt.Errorf("cannot carry the tenant id: CloudFront does not pass %s to Lambda@Edge (a disallowed header); use a custom header such as %q", name, DefaultTenantHeader)
	}
	return nil
}

// Config renders config.json for the handler with tenantHeader: see
// ConfigWith.
func Config(table *router.Table, origins map[string]string, tenantHeader string) ([]byte, error) {
	return ConfigWith(table, origins, Options{TenantHeader: tenantHeader})
}

// Options are the edge function's settings beyond the table and origins.
type Options struct {
	// TenantHeader carries the tenant id (default X-Tenant-Id) when
	// TenantFrom is the header.
	TenantHeader string
	// TenantFrom is where the tenant id comes from: "" or "header" (the
	// TenantHeader), or "jwt:<claim>": that claim of the bearer JWT in
	// the Authorization header (cells:tenantFrom; see CheckTenantFrom).
	TenantFrom string
	// TenantHostDomains are the domains under which a request's Host names
	// its tenant as the first label ("app.example.com": Host
	// acme.app.example.com is tenant "acme"), read when the request has
	// no tenant header (or no Authorization header). Empty: the Host is
	// never read, such a request is a 400. Only the distribution's own
	// wildcard viewer domains belong here: without them, viewers reach
	// dXXXX.cloudfront.net and "dXXXX" is no tenant.
	TenantHostDomains []string
	// Lanes is each cell's lane layout (M lanes, shards of r), baked into
	// config.json so the handler sends the tenant's lanes in X-Cell-Lanes
	// with X-Cell-Id. When given, every cell of the table needs one (the
	// router stack passes every fleet cell's cells:lanes and
	// cells:laneShardSize); nil: no lanes header.
	Lanes map[string]*router.Lanes
}

// Built is the routing data of a function package: config.json and the
// routing image it names.
type Built struct {
	Config []byte
	Image  []byte
}

// ConfigWith renders config.json: the table's version, checksum and
// generated_at, the routing image's name, size and CRC, where the tenant
// id comes from, the tenant host domains, the retry delay of rejected
// writes, each cell's origin (also in the image; config.json is what
// people and tools read, and the handler refuses a config whose origins
// differ from its image's) and the lanes. Every cell that serves buckets
// or an overridden tenant needs an origin; origins of unknown cells are
// refused (a typo would otherwise leave a cell unreachable). The output is
// byte-stable for equal input, so the function is only republished when
// routing actually changes.
func ConfigWith(table *router.Table, origins map[string]string, opts Options) ([]byte, error) {
	b, err := BuildWith(table, origins, opts)
	if err != nil {
		return nil, err
	}
	return b.Config, nil
}

// BuildWith checks the inputs and writes config.json and the image.
func BuildWith(table *router.Table, origins map[string]string, opts Options) (*Built, error) {
	src, err := checkInputs(table, origins, opts)
	domains, derr := hostDomains(opts.TenantHostDomains)
	if err = errors.Join(err, derr, checkLanes(table, opts.Lanes)); err != nil {
		return nil, err
	}
	img, err := WriteImage(table, origins)
	if err != nil {
		return nil, err
	}
	return &Built{Config: renderConfig(table, origins, src, domains, opts.Lanes, img), Image: img}, nil
}

// HostDomainsOf derives the tenant host domains from a distribution's
// viewer domains: "*.app.example.com" → "app.example.com"; names without a
// wildcard carry no tenant.
func HostDomainsOf(viewerDomains []string) []string {
	var out []string
	for _, d := range viewerDomains {
		if rest, ok := strings.CutPrefix(d, "*."); ok {
			out = append(out, asciiLower(rest))
		}
	}
	return out
}

func hostDomains(in []string) ([]string, error) {
	var out []string
	var errs []error
	for _, d := range in {
		d = asciiLower(strings.TrimSuffix(d, "."))
		if !validDNSName(d) || !strings.Contains(d, ".") {
			errs = append(errs, fmt.Errorf("tenant host domain %q: must be a DNS name such as \"app.example.com\"", d))
			continue
		}
		out = append(out, d)
	}
	sort.Strings(out)
	return out, errors.Join(errs...)
}

func jsonString(s string) string {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(sb.String(), "\n")
}

// renderConfig writes config.json for img without checking the origins
// (tests use it to build a package with a cell's origin missing).
func renderConfig(table *router.Table, origins map[string]string, src TenantSource, domains []string, lanes map[string]*router.Lanes, img []byte) []byte {
	var b bytes.Buffer
	str := jsonString
	cells := table.CellIDs()
	b.WriteString("{\n")
	fmt.Fprintf(&b, "\"format\": %d,\n\"version\": %d,\n", ConfigFormat, table.Version())
	fmt.Fprintf(&b, "\"checksum\": %s,\n\"generatedAt\": %s,\n", str(table.Checksum()), str(table.GeneratedAt()))
	fmt.Fprintf(&b, "\"image\": {\"file\": %s, \"bytes\": %d, \"crc32\": \"%08x\"},\n", str(ImageFile), len(img), imageCRC(img))
	if src.Claim != "" {
		fmt.Fprintf(&b, "\"tenantFrom\": \"jwt\",\n\"tenantClaim\": %s,\n", str(src.Claim))
	} else {
		fmt.Fprintf(&b, "\"tenantFrom\": \"header\",\n\"tenantHeader\": %s,\n", str(src.Header))
	}
	fmt.Fprintf(&b, "\"retryAfterSeconds\": %d,\n", RetryAfterSeconds)
	b.WriteString("\"tenantHostDomains\": [")
	for i, d := range domains {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(str(d))
	}
	b.WriteString("],\n\"origins\": {")
	first := true
	for _, c := range cells {
		if o := origins[c]; o != "" {
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(str(c) + ": " + str(o))
		}
	}
	b.WriteString("}")
	writeLanes(&b, cells, lanes, str)
	b.WriteString("\n}\n")
	return b.Bytes()
}

// Package returns the files of the Lambda@Edge function package (name →
// content): the handler's modules, config.json and the routing image.
// Zip them with Handler as the entry point on the Runtime runtime.
func Package(table *router.Table, origins map[string]string, tenantHeader string) (map[string]string, error) {
	return PackageWith(table, origins, Options{TenantHeader: tenantHeader})
}

// PackageWith is Package with every option. It is the one writer of the
// function package: the router stack ships what it returns and `cellctl
// router package` writes it to a directory.
func PackageWith(table *router.Table, origins map[string]string, opts Options) (map[string]string, error) {
	// The table is a *router.Table: it exists only once router.Parse or
	// router.New validated it. What is packaged is config.json and the
	// image, so those are checked too, as the handler checks them at start
	// (CheckPackage), and the image must route every bucket and every
	// override as the table does: a package the edge would refuse, or that
	// would route differently, never leaves this process.
	b, err := BuildWith(table, origins, opts)
	if err != nil {
		return nil, err
	}
	files := map[string]string{ConfigFile: string(b.Config), ImageFile: string(b.Image)}
	for name, code := range codeFiles {
		files[name] = *code
	}
	if err := CheckPackage(files); err != nil {
		return nil, fmt.Errorf("refusing to package an edge function that would not start: %w", err)
	}
	if err := checkImageRoutes(table, b.Image); err != nil {
		return nil, fmt.Errorf("refusing to package an edge function that would route differently from routing table version %d: %w", table.Version(), err)
	}
	return files, nil
}

// checkImageRoutes reads img back and checks it sends every bucket and
// every overridden tenant where table does.
func checkImageRoutes(table *router.Table, img []byte) error {
	im, err := ReadImage(img)
	if err != nil {
		return err
	}
	for bucket, cell := range table.Assignment() {
		if got := im.Cells[im.bucketCell[bucket]]; got != cell {
			return fmt.Errorf("bucket %d: the image sends it to %s, the table to %s", bucket, got, cell)
		}
	}
	for _, o := range table.Overrides() {
		r := im.Route(o.Tenant)
		if !r.Override || r.Cell != o.Cell || r.State != o.State || r.Target != o.Target || r.WriteMode != writeModeOf(o) {
			return fmt.Errorf("tenant %q: the image routes it %+v, the table's override is %+v", o.Tenant, r, o)
		}
	}
	return nil
}

// writeModeOf is the write mode the image keeps for o (none unless
// migrating).
func writeModeOf(o router.Override) router.WriteMode {
	if o.State != router.OverrideMigrating {
		return ""
	}
	return o.WriteMode
}

// TenantSource is where the handler reads the tenant id: a header, or a
// claim of the bearer JWT in the Authorization header.
type TenantSource struct {
	Header string // lowercase, when read from a header
	Claim  string // when read from a JWT
}

// DefaultTenantFrom is the tenant source unless cells:tenantFrom says
// otherwise: the tenant header.
const DefaultTenantFrom = "header"

// CheckTenantFrom parses a cells:tenantFrom value: "header" (the tenant
// header, cells:tenantHeader) or "jwt:<claim>" (that claim of the bearer
// JWT in the Authorization header, read without verifying it: the cell
// still authenticates the token). A claim is 1–128 printable ASCII
// characters without quotes or backslashes ("tid", "tenant_id",
// "https://example.com/tenant").
func CheckTenantFrom(v string) (claim string, err error) {
	if v == "" || v == DefaultTenantFrom {
		return "", nil
	}
	claim, ok := strings.CutPrefix(v, "jwt:")
	if !ok {
		return "", fmt.Errorf("must be %q (the tenant header) or \"jwt:<claim>\" (a claim of the bearer JWT in the Authorization header, e.g. \"jwt:tid\"); got %q", DefaultTenantFrom, v)
	}
	if !validClaim(claim) {
		return "", fmt.Errorf("jwt:%s: the claim must be 1-128 printable ASCII characters without spaces, quotes or backslashes, e.g. \"jwt:tid\"", claim)
	}
	return claim, nil
}

func validClaim(c string) bool {
	if len(c) == 0 || len(c) > 128 {
		return false
	}
	for i := 0; i < len(c); i++ {
		if c[i] <= 0x20 || c[i] >= 0x7f || c[i] == '"' || c[i] == '\\' {
			return false
		}
	}
	return true
}

// checkInputs reports every problem with the origins and the tenant
// source at once, and returns the source as the handler reads it.
func checkInputs(table *router.Table, origins map[string]string, opts Options) (TenantSource, error) {
	if table == nil {
		return TenantSource{}, errors.New("edge config: no routing table")
	}
	var errs []error
	var src TenantSource
	claim, err := CheckTenantFrom(opts.TenantFrom)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("tenant source: %w", err))
	case claim != "":
		src.Claim = claim
	default:
		header := opts.TenantHeader
		if header == "" {
			header = DefaultTenantHeader
		}
		if err := CheckTenantHeader(header); err != nil {
			errs = append(errs, fmt.Errorf("tenant header %q: %w", opts.TenantHeader, err))
		}
		src.Header = strings.ToLower(header)
	}

	needed := map[string]string{}
	for _, c := range table.Cells() {
		if n := c.Buckets.Count(); n > 0 {
			needed[c.ID] = fmt.Sprintf("serves %d buckets", n)
		}
	}
	for _, o := range table.Overrides() {
		if _, ok := needed[o.Cell]; !ok {
			needed[o.Cell] = fmt.Sprintf("serves the pinned tenant %q", o.Tenant)
		}
	}
	ids := make([]string, 0, len(needed))
	for id := range needed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, ok := origins[id]; !ok {
			errs = append(errs, fmt.Errorf("origins: cell %q %s in routing table version %d but has no origin; pass its ALB DNS name", id, needed[id], table.Version()))
		}
	}
	names := make([]string, 0, len(origins))
	for id := range origins {
		names = append(names, id)
	}
	sort.Strings(names)
	for _, id := range names {
		if _, ok := table.Cell(id); !ok {
			errs = append(errs, fmt.Errorf("origins: %q is not a cell of routing table version %d (cells: %s)", id, table.Version(), strings.Join(table.CellIDs(), ", ")))
			continue
		}
		if !validDNSName(origins[id]) {
			errs = append(errs, fmt.Errorf("origins: %s: %q must be a DNS name like \"cell-a.cells.example.com\" (no scheme, port or path)", id, origins[id]))
		}
	}
	return src, errors.Join(errs...)
}

func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func validDNSName(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
