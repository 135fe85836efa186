// Package edge builds the Lambda@Edge function of the cell router: the
// Node.js origin-request handler (embedded here) plus a config.json that
// bakes in the routing table, so routing needs no call to any control
// plane at request time.
//
// The handler reads the tenant from a header (default X-Tenant-Id) or the
// first label of the Host, routes it like router.(*Table).Route, rewrites
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
	"host":              "the Host header is the fallback source of the tenant id",
	"x-cell-id":         "the router sets X-Cell-Id itself",
	"x-routing-version": "the router sets X-Routing-Version itself",
	"x-cell-lanes":      "the router sets X-Cell-Lanes itself",
	"x-origin-verify":   "X-Origin-Verify carries the origin secret",
}

// Config renders config.json for the handler: the table's buckets as
// run-length pairs, the overrides, and each cell's origin (its ALB's DNS
// name). Every cell that serves buckets or an overridden tenant needs an
// origin; origins of unknown cells are refused (a typo would otherwise
// leave a cell unreachable). The output is byte-stable for equal input, so
// the function is only republished when routing actually changes.
func Config(table *router.Table, origins map[string]string, tenantHeader string, opts ...Option) ([]byte, error) {
	header, err := checkInputs(table, origins, tenantHeader)
	o := options(opts)
	err = errors.Join(err, checkLanes(table, o.lanes))
	if err != nil {
		return nil, err
	}
	return renderWith(table, origins, header, o), nil
}

// render writes config.json without checking the origins (tests use it to
// build a config with a cell's origin missing).
func render(table *router.Table, origins map[string]string, header string) []byte {
	return renderWith(table, origins, header, config{})
}

func renderWith(table *router.Table, origins map[string]string, header string, o config) []byte {
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
	writeLanes(&b, cells, o.lanes, str)
	b.WriteString("\n}\n")
	return b.Bytes()
}

// Package returns the files of the Lambda@Edge function package (name →
// content): the handler, its routing module and config.json. Zip them
// with Handler as the entry point on the nodejs20.x runtime.
func Package(table *router.Table, origins map[string]string, tenantHeader string, opts ...Option) (map[string]string, error) {
	cfg, err := Config(table, origins, tenantHeader, opts...)
	if err != nil {
		return nil, err
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
	header = strings.ToLower(header)
	if !validHeaderName(header) {
		errs = append(errs, fmt.Errorf("tenant header %q: must be an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~), e.g. %q", tenantHeader, DefaultTenantHeader))
	} else if why, ok := reservedHeaders[header]; ok {
		errs = append(errs, fmt.Errorf("tenant header %q: cannot carry the tenant id: %s", tenantHeader, why))
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
			errs = append(errs, fmt.Errorf("origins: %s: %q must be a DNS name like \"cell-a-123.us-east-1.elb.amazonaws.com\" (no scheme, port or path)", id, origins[id]))
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
