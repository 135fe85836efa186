// Package edge builds the Lambda@Edge function of the cell router: the
// Node.js origin-request handler (embedded here) plus a config.json that
// bakes in the routing table, so routing needs no call to any control
// plane at request time.
//
// The handler reads the tenant from a header (default X-Tenant-Id) or, only
// under the configured tenant host domains, the first label of the Host;
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
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/router"
)

//go:embed index.js
var indexJS string

//go:embed routing.js
var routingJS string

//go:embed lanes.js
var lanesJS string

const (
	// DefaultTenantHeader carries the tenant id unless the router stack
	// configures another header.
	DefaultTenantHeader = "X-Tenant-Id"
	// RetryAfterSeconds is what a migrating tenant's rejected writes are
	// told to wait.
	RetryAfterSeconds = 30
	// ConfigFormat is the version of config.json this package writes and
	// routing.js reads.
	ConfigFormat = 1
	// ConfigFile is the name of the baked config in the function package.
	ConfigFile = "config.json"
	// Handler is the Lambda handler setting for the function.
	Handler = "index.handler"
)

// Headers the handler owns or CloudFront reserves: none of them can carry
// the tenant id.
var reservedHeaders = map[string]string{
	"host":              "the Host header is the fallback source of the tenant id under the tenant host domains",
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

// Config renders config.json for the handler: the table's buckets as
// run-length pairs, the overrides, and each cell's origin (its ALB's DNS
// name). Every cell that serves buckets or an overridden tenant needs an
// origin; origins of unknown cells are refused (a typo would otherwise
// leave a cell unreachable). The output is byte-stable for equal input, so
// the function is only republished when routing actually changes.
func Config(table *router.Table, origins map[string]string, tenantHeader string) ([]byte, error) {
	return ConfigWith(table, origins, Options{TenantHeader: tenantHeader})
}

// Options are the edge function's settings beyond the table and origins.
type Options struct {
	// TenantHeader carries the tenant id (default X-Tenant-Id).
	TenantHeader string
	// TenantHostDomains are the domains under which a request's Host names
	// its tenant as the first label ("app.example.com": Host
	// acme.app.example.com is tenant "acme"). Empty: the Host is never
	// read, a request without the tenant header is a 400. Only the
	// distribution's own wildcard viewer domains belong here: without
	// them, viewers reach dXXXX.cloudfront.net and "dXXXX" is no tenant.
	TenantHostDomains []string
	// Lanes is each cell's lane layout (M lanes, shards of r), baked into
	// config.json so the handler sends the tenant's lanes in X-Cell-Lanes
	// with X-Cell-Id. When given, every cell of the table needs one (the
	// router stack passes every fleet cell's cells:lanes and
	// cells:laneShardSize); nil: no lanes header.
	Lanes map[string]*router.Lanes
}

// ConfigWith is Config with every option.
func ConfigWith(table *router.Table, origins map[string]string, opts Options) ([]byte, error) {
	header, err := checkInputs(table, origins, opts.TenantHeader)
	domains, derr := hostDomains(opts.TenantHostDomains)
	if err = errors.Join(err, derr, checkLanes(table, opts.Lanes)); err != nil {
		return nil, err
	}
	return renderWith(table, origins, header, domains, opts.Lanes), nil
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

// render writes config.json without checking the origins (tests use it to
// build a config with a cell's origin missing).
func render(table *router.Table, origins map[string]string, header string) []byte {
	return renderWith(table, origins, header, nil, nil)
}

func renderWith(table *router.Table, origins map[string]string, header string, domains []string, lanes map[string]*router.Lanes) []byte {
	var b bytes.Buffer
	str := func(s string) string {
		var sb bytes.Buffer
		enc := json.NewEncoder(&sb)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		return strings.TrimSuffix(sb.String(), "\n")
	}
	cells := table.CellIDs()
	index := make(map[string]int, len(cells))
	for i, c := range cells {
		index[c] = i
	}

	b.WriteString("{\n")
	fmt.Fprintf(&b, "\"format\": %d,\n\"version\": %d,\n\"buckets\": %d,\n", ConfigFormat, table.Version(), table.Buckets())
	fmt.Fprintf(&b, "\"tenantHeader\": %s,\n\"retryAfterSeconds\": %d,\n", str(header), RetryAfterSeconds)
	b.WriteString("\"tenantHostDomains\": [")
	for i, d := range domains {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(str(d))
	}
	b.WriteString("],\n")
	b.WriteString("\"cells\": [")
	for i, c := range cells {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(str(c))
	}
	b.WriteString("],\n\"origins\": {")
	first := true
	for _, c := range cells {
		if o, ok := origins[c]; ok {
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(str(c) + ": " + str(o))
		}
	}
	b.WriteString("},\n\"bucketRuns\": [")
	a := table.Assignment()
	for start := 0; start < len(a); {
		end := start
		for end+1 < len(a) && a[end+1] == a[start] {
			end++
		}
		if start > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(end-start+1) + ", " + strconv.Itoa(index[a[start]]))
		start = end + 1
	}
	b.WriteString("],\n\"overrides\": {")
	for i, o := range table.Overrides() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n" + str(o.Tenant) + ": {\"cell\": " + str(o.Cell))
		if o.State == router.OverrideMigrating && o.WriteMode == router.WriteRejectWith503 {
			b.WriteString(", \"rejectWrites\": true")
		}
		b.WriteByte('}')
	}
	if len(table.Overrides()) > 0 {
		b.WriteByte('\n')
	}
	b.WriteString("}")
	writeLanes(&b, cells, lanes, str)
	b.WriteString("\n}\n")
	return b.Bytes()
}

// Package returns the files of the Lambda@Edge function package (name →
// content): the handler, its routing module and config.json. Zip them
// with Handler as the entry point on the nodejs20.x runtime.
func Package(table *router.Table, origins map[string]string, tenantHeader string) (map[string]string, error) {
	return PackageWith(table, origins, Options{TenantHeader: tenantHeader})
}

// PackageWith is Package with every option.
func PackageWith(table *router.Table, origins map[string]string, opts Options) (map[string]string, error) {
	// The table is a *router.Table: it exists only once router.Parse or
	// router.New validated it. What is packaged is config.json, so that is
	// checked too, as the handler checks it at start: a config the edge
	// would refuse never leaves this process.
	cfg, err := ConfigWith(table, origins, opts)
	if err != nil {
		return nil, err
	}
	if err := CheckConfig(cfg); err != nil {
		return nil, fmt.Errorf("refusing to package an edge function that would not start: %w", err)
	}
	return map[string]string{
		"index.js":   indexJS,
		"routing.js": routingJS,
		"lanes.js":   lanesJS,
		ConfigFile:   string(cfg),
	}, nil
}

// checkInputs reports every problem with the origins and the header at
// once, and returns the header name as the handler looks it up.
func checkInputs(table *router.Table, origins map[string]string, tenantHeader string) (string, error) {
	if table == nil {
		return "", errors.New("edge config: no routing table")
	}
	var errs []error
	header := tenantHeader
	if header == "" {
		header = DefaultTenantHeader
	}
	if err := CheckTenantHeader(header); err != nil {
		errs = append(errs, fmt.Errorf("tenant header %q: %w", tenantHeader, err))
	}
	header = strings.ToLower(header)

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
	return header, errors.Join(errs...)
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
