package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/router"
)

// maxConfigBuckets and maxConfigCells are routing.js's limits (MAX_BUCKETS,
// the Uint16Array of cell indexes).
const (
	maxConfigBuckets = 1 << 20
	maxConfigCells   = 65535
)

// CheckConfig validates a config.json exactly as the handler's compile()
// in routing.js does when the function starts (the same checks, in the
// same order, with the same messages), so a config the edge would refuse —
// and then fail every request of every tenant — is refused in Go before it
// is packaged. PackageWith runs it on every config it renders.
func CheckConfig(data []byte) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("edge routing config: "+format, args...)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var cfg map[string]any
	if err := dec.Decode(&cfg); err != nil || cfg == nil {
		return fail("not an object")
	}
	if n, ok := integer(cfg["format"]); !ok || n != ConfigFormat {
		return fail("format %v, this handler reads format %d", cfg["format"], ConfigFormat)
	}
	b, ok := integer(cfg["buckets"])
	if !ok || b < 1 || b > maxConfigBuckets {
		return fail("buckets must be an integer from 1 to %d", maxConfigBuckets)
	}
	if v, ok := integer(cfg["version"]); !ok || v < 1 {
		return fail("version must be a positive integer")
	}
	if h, ok := cfg["tenantHeader"].(string); !ok || h == "" {
		return fail("tenantHeader must be a header name")
	}
	cells, ok := cfg["cells"].([]any)
	if !ok || len(cells) == 0 || len(cells) > maxConfigCells {
		return fail("cells must be a non-empty array")
	}
	index := map[string]int{}
	for i, c := range cells {
		s, ok := c.(string)
		if _, dup := index[s]; !ok || dup {
			return fail("cells[%d] must be a unique cell id", i)
		}
		index[s] = i
	}
	if origins, ok := cfg["origins"].(map[string]any); ok {
		for _, cell := range sortedKeys(origins) {
			if _, ok := index[cell]; !ok {
				return fail("origins names unknown cell %s", quote(cell))
			}
			if o, ok := origins[cell].(string); !ok || !validDNSName(o) {
				return fail("origin of %s must be a DNS name", cell)
			}
		}
	}
	runs, ok := cfg["bucketRuns"].([]any)
	if !ok || len(runs)%2 != 0 {
		return fail("bucketRuns must be [count, cell index, ...] pairs")
	}
	covered := int64(0)
	for i := 0; i < len(runs); i += 2 {
		count, ok := integer(runs[i])
		if !ok || count < 1 || covered+count > b {
			return fail("bucketRuns[%d] count out of range", i)
		}
		if cell, ok := integer(runs[i+1]); !ok || cell < 0 || cell >= int64(len(cells)) {
			return fail("bucketRuns[%d] is not a cell index", i+1)
		}
		covered += count
	}
	if covered != b {
		return fail("bucketRuns cover %d buckets, the table has %d", covered, b)
	}
	if overrides, ok := cfg["overrides"].(map[string]any); ok {
		nfc := map[string]string{}
		for _, tenant := range sortedKeys(overrides) {
			o, _ := overrides[tenant].(map[string]any)
			cell, _ := o["cell"].(string)
			if _, known := index[cell]; o == nil || !known {
				return fail("override of %s names unknown cell %s", quote(tenant), quote(o["cell"]))
			}
			n := norm.NFC.String(tenant)
			if twin, ok := nfc[n]; ok {
				return fail("overrides %s and %s are the same text in different Unicode normalization forms; one table must not route them separately", quote(tenant), quote(twin))
			}
			nfc[n] = tenant
		}
	}
	if d, present := cfg["tenantHostDomains"]; present {
		list, ok := d.([]any)
		valid := ok
		for _, e := range list {
			s, isStr := e.(string)
			valid = valid && isStr && s != "" && s == strings.ToLower(s)
		}
		if !valid {
			return fail("tenantHostDomains must be an array of lowercase domain names")
		}
	}
	if l, present := cfg["lanes"]; present {
		lanes, ok := l.(map[string]any)
		if !ok {
			return fail("lanes must be an object of cell → [lanes, shard size]")
		}
		for _, cell := range sortedKeys(lanes) {
			if _, known := index[cell]; !known {
				return fail("lanes names unknown cell %s", quote(cell))
			}
			v, ok := lanes[cell].([]any)
			if !ok || len(v) != 2 {
				return fail("lanes of %s must be [lanes, shard size]", cell)
			}
			m, mok := integer(v[0])
			r, rok := integer(v[1])
			if !mok || !rok {
				return fail("lanes of %s: lanes and shard size must be integers", cell)
			}
			if err := router.CheckLanes(int(m), int(r)); err != nil {
				return fail("lanes of %s: %v", cell, err)
			}
		}
	}
	return nil
}

// integer is a JSON number that is an integer, as Number.isInteger sees it
// (2.0 is one).
func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func quote(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TableCheck is what a routing table is checked against besides its own
// rules: the settings of the router stack that packages it.
type TableCheck struct {
	// Options are the edge function's settings (tenant header, host
	// domains, lanes); lanes are checked only when given.
	Options
	// MemoryMB is the edge function's memory (0: DefaultMemoryMB).
	MemoryMB int
	// FleetCells, when not nil, are the fleet's cells: the table may
	// route only to them.
	FleetCells []string
	// FleetFile names the fleet's stack file of a cell, for messages.
	FleetFile func(cell string) string
}

// CheckTableFile validates the routing table in data (read from file) the
// way it reaches the edge: the router package's rules (every problem,
// file:line: field: …), then — for a table that passed them — the
// fleet's cells, the edge function's memory, and the config.json the
// router stack would package, checked by CheckConfig as the handler
// checks it at start. Origins are the one input it cannot know (the
// cells' ALB names come from the deployed stacks): each cell gets a
// placeholder DNS name. It returns the table when everything passed.
func CheckTableFile(file string, data []byte, c TableCheck) (*router.Table, error) {
	table, err := router.Parse(file, data)
	if err != nil {
		return nil, err
	}
	lines := router.FieldLines(file, data)
	var errs diag.List
	add := func(field, format string, args ...any) {
		line := lines[field]
		if line == 0 {
			line = lines[strings.SplitN(field, ".", 2)[0]]
		}
		errs.Add(file, line, field, format, args...)
	}
	outside := false
	if c.FleetCells != nil {
		for _, id := range table.CellIDs() {
			if !contains(c.FleetCells, id) {
				outside = true
				where := "its stack file"
				if c.FleetFile != nil {
					where = c.FleetFile(id)
				}
				add("cells."+id, "not a cell of this fleet (no %s): remove it from the table or add the cell", where)
			}
		}
	}
	mem := c.MemoryMB
	if mem == 0 {
		mem = DefaultMemoryMB
	}
	if err := CheckFits(table, mem); err != nil {
		add("overrides", "%v", err)
	}
	origins := map[string]string{}
	for _, id := range table.CellIDs() {
		origins[id] = id + ".origin.invalid"
	}
	opts := c.Options
	if outside {
		// Reported above; a cell outside the fleet has no lane layout,
		// which is the same problem said again.
		opts.Lanes = nil
	}
	if opts.Lanes != nil {
		// Only the table's cells: a fleet cell the table does not name
		// has no say in its config.
		lanes := map[string]*router.Lanes{}
		for _, id := range table.CellIDs() {
			if l, ok := opts.Lanes[id]; ok {
				lanes[id] = l
			}
		}
		opts.Lanes = lanes
	}
	cfg, err := ConfigWith(table, origins, opts)
	if err != nil {
		add("", "the edge function cannot be built from this table: %v", err)
	} else if err := CheckConfig(cfg); err != nil {
		add("", "the edge function would refuse to start: %v", err)
	}
	if errs.Len() > 0 {
		return nil, errs.Err()
	}
	return table, nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
