package edge

import (
	"errors"
	"strings"

	"github.com/cellctl/cellctl/router"
)

// What the handler does with a request.
const (
	KindForward       = "forward"        // sent on to the cell's origin
	KindBadRequest    = "bad_request"    // 400: no valid tenant id
	KindWriteRejected = "write_rejected" // 503 + Retry-After: a write of a migrating tenant
	KindNoOrigin      = "no_origin"      // 502: the tenant's cell has no origin
)

// Request is what the handler reads from an origin-request event.
type Request struct {
	Method string `json:"method"`
	// Headers in arrival order as name (any case) and value; the first
	// header of a name wins, as CloudFront's header lists are read.
	Headers [][2]string `json:"headers"`
}

// Outcome is the handler's decision for one request.
type Outcome struct {
	Kind   string `json:"kind"`
	Status int    `json:"status,omitempty"` // of a generated response
	Tenant string `json:"tenant"`           // as read from the request ("" when absent)
	Source string `json:"source,omitempty"` // "header", "jwt" or "host"
	Bucket int    `json:"bucket"`           // -1 when the tenant id is invalid
	Cell   string `json:"cell,omitempty"`
	Origin string `json:"origin,omitempty"` // domain the request is sent to
	// RetryAfter is the Retry-After of a rejected write, in seconds.
	RetryAfter int `json:"retryAfter,omitempty"`
	// Lanes is the X-Cell-Lanes value sent with a forwarded request ("3,17"),
	// empty when the cell has no lane layout (then none is sent).
	Lanes string `json:"lanes,omitempty"`
}

// Router makes the edge handler's decision in Go, for `cellctl route`-style
// tooling and as the reference the JavaScript handler is tested against.
type Router struct {
	table   *router.Table
	origins map[string]string
	header  string   // the tenant header, lowercase ("" when the tenant is a JWT claim)
	claim   string   // the JWT claim of the tenant id ("" when it is a header)
	domains []string // tenant host domains; empty: the Host is never read
	lanes   map[string]*router.Lanes
}

// NewRouter checks its inputs as Config does.
func NewRouter(table *router.Table, origins map[string]string, tenantHeader string) (*Router, error) {
	return NewRouterWith(table, origins, Options{TenantHeader: tenantHeader})
}

// NewRouterWith is NewRouter with every option, as ConfigWith.
func NewRouterWith(table *router.Table, origins map[string]string, opts Options) (*Router, error) {
	src, err := checkInputs(table, origins, opts)
	domains, derr := hostDomains(opts.TenantHostDomains)
	if err = errors.Join(err, derr, checkLanes(table, opts.Lanes)); err != nil {
		return nil, err
	}
	r := newRouter(table, origins, src.Header)
	r.claim = src.Claim
	r.domains = domains
	r.lanes = opts.Lanes
	return r, nil
}

func newRouter(table *router.Table, origins map[string]string, header string) *Router {
	o := make(map[string]string, len(origins))
	for k, v := range origins {
		o[k] = v
	}
	return &Router{table: table, origins: o, header: asciiLower(header)}
}

// Evaluate decides what the handler does with req.
func (r *Router) Evaluate(req Request) Outcome {
	var tenant, source string
	if r.claim != "" {
		if v, ok := header(req.Headers, "authorization"); ok {
			tenant, source = TenantFromJWT(v, r.claim), "jwt"
		} else if host, ok := header(req.Headers, "host"); ok && len(r.domains) > 0 {
			tenant, source = TenantFromHostIn(host, r.domains), "host"
		}
	} else if v, ok := header(req.Headers, r.header); ok {
		tenant, source = v, "header"
	} else if host, ok := header(req.Headers, "host"); ok && len(r.domains) > 0 {
		tenant, source = TenantFromHostIn(host, r.domains), "host"
	}
	route := r.table.Route(tenant)
	out := Outcome{Tenant: tenant, Source: source, Bucket: route.Bucket}
	if !route.Valid {
		out.Kind, out.Status = KindBadRequest, 400
		return out
	}
	out.Cell = route.Cell
	if route.RejectsWrites() && !IsRead(req.Method) {
		out.Kind, out.Status, out.RetryAfter = KindWriteRejected, 503, RetryAfterSeconds
		return out
	}
	origin, ok := r.origins[route.Cell]
	if !ok {
		out.Kind, out.Status = KindNoOrigin, 502
		return out
	}
	out.Kind, out.Origin = KindForward, origin
	if l := r.lanes[route.Cell]; l != nil {
		out.Lanes = router.FormatLanes(l.OfHash(route.Hash, nil))
	}
	return out
}

func header(headers [][2]string, name string) (string, bool) {
	for _, h := range headers {
		if asciiLower(h[0]) == name {
			return h[1], true
		}
	}
	return "", false
}

// asciiLower lowercases A-Z only, as CloudFront lowercases header names
// and the handler lowercases host names.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// TenantFromHost is the tenant a Host header names: its first DNS label,
// without the port, ASCII-lowercased (host names are case-insensitive,
// tenant ids are not). "" for an empty host or an IPv6 literal.
func TenantFromHost(host string) string {
	if host == "" || host[0] == '[' {
		return ""
	}
	if i := strings.IndexAny(host, ".:"); i >= 0 {
		host = host[:i]
	}
	return asciiLower(host)
}

// IsRead reports whether the handler treats method as a read, which a
// migrating tenant may still do. Every other method counts as a write.
func IsRead(method string) bool {
	return method == "GET" || method == "HEAD" || method == "OPTIONS"
}

// TenantFromHostIn is the tenant a Host header names under one of the
// tenant host domains: the first label when the rest (without port and
// trailing dot, ASCII-lowercased) is exactly one of domains, else "".
// "acme.app.example.com" under app.example.com is "acme";
// "d111.cloudfront.net" or "a.b.app.example.com" name no tenant.
func TenantFromHostIn(host string, domains []string) string {
	if len(domains) == 0 || host == "" || host[0] == '[' {
		return ""
	}
	if i := strings.IndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	host = strings.TrimSuffix(host, ".")
	dot := strings.IndexByte(host, '.')
	if dot < 0 {
		return ""
	}
	rest := asciiLower(host[dot+1:])
	for _, d := range domains {
		if rest == d {
			return asciiLower(host[:dot])
		}
	}
	return ""
}
