package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/router"
)

// CheckConfig validates config.json against its routing image exactly as
// the handler's compile() in routing.js does when the function starts (the
// same checks, in the same order, with the same messages), so a package
// the edge would refuse — and then answer every request of every tenant
// with a 503 — is refused in Go before it is shipped. CheckPackage runs it
// on every package PackageWith builds.
func CheckConfig(data, image []byte) error {
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
		return fail("format %v, this handler reads format %d", jsValue(cfg, "format"), ConfigFormat)
	}
	version, ok := integer(cfg["version"])
	if !ok || version < 1 {
		return fail("version must be a positive integer")
	}
	from := "header"
	if v, present := cfg["tenantFrom"]; present {
		from, _ = v.(string)
	}
	if from != "header" && from != "jwt" {
		return fail(`tenantFrom must be "header" or "jwt"`)
	}
	if h, ok := cfg["tenantHeader"].(string); from == "header" && (!ok || h == "") {
		return fail("tenantHeader must be a header name")
	}
	if c, ok := cfg["tenantClaim"].(string); from == "jwt" && (!ok || !validClaim(c)) {
		return fail("tenantClaim must be a claim name (1-128 printable ASCII characters without quotes or backslashes)")
	}
	im, _ := cfg["image"].(map[string]any)
	file, fok := im["file"].(string)
	size, sok := integer(im["bytes"])
	crc, cok := im["crc32"].(string)
	if im == nil || !fok || !sok || !cok {
		return fail(`image must be {"file", "bytes", "crc32"}`)
	}
	img, err := ReadImage(image)
	if err != nil {
		return err
	}
	if got := fmt.Sprintf("%08x", img.CRC); int64(len(image)) != size || got != crc {
		return fail("%s is not the image this config names (%d bytes, crc32 %s; config.json says %d, %s)", file, len(image), got, size, crc)
	}
	if img.Version != version {
		return fail("version %d, the image holds table version %d", version, img.Version)
	}
	if sum, ok := cfg["checksum"].(string); !ok || sum != img.Checksum {
		return fail("checksum %s, the image holds %s", jsJSON(cfg, "checksum"), quote(img.Checksum))
	}
	gen := ""
	if v, present := cfg["generatedAt"]; present {
		s, ok := v.(string)
		if !ok {
			return fail("generatedAt %s, the image holds %s", quote(v), quote(img.GeneratedAt))
		}
		gen = s
	}
	if gen != img.GeneratedAt {
		return fail("generatedAt %s, the image holds %s", quote(gen), quote(img.GeneratedAt))
	}
	index := map[string]int{}
	for i, c := range img.Cells {
		index[c] = i
	}
	origins := map[string]any{}
	if v, present := cfg["origins"]; present {
		if origins, ok = v.(map[string]any); !ok {
			return fail("origins must be an object of cell → DNS name")
		}
	}
	for _, cell := range slices.Sorted(maps.Keys(origins)) {
		i, ok := index[cell]
		if !ok {
			return fail("origins names unknown cell %s", quote(cell))
		}
		if o, _ := origins[cell].(string); o != img.Origins[i] || origins[cell] == nil {
			return fail("the origin of %s is %s, the image has %s", cell, quote(origins[cell]), quote(img.Origins[i]))
		}
	}
	for i, c := range img.Cells {
		if _, ok := origins[c]; img.Origins[i] != "" && !ok {
			return fail("origins lacks %s, which the image routes to %s", c, img.Origins[i])
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
		for _, cell := range slices.Sorted(maps.Keys(lanes)) {
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

// CheckPackage checks a function package (name → content) as the handler
// loads it at cold start: config.json, the routing image it names, and
// the two against each other (CheckConfig).
func CheckPackage(files map[string]string) error {
	cfg, ok := files[ConfigFile]
	if !ok {
		return fmt.Errorf("edge routing config: %s: not in the package", ConfigFile)
	}
	var head struct {
		Image struct {
			File string `json:"file"`
		} `json:"image"`
	}
	_ = json.Unmarshal([]byte(cfg), &head)
	img, ok := files[head.Image.File]
	if !ok || head.Image.File == "" {
		return fmt.Errorf("edge routing config: image.file %q is not a file of the package", head.Image.File)
	}
	for name := range codeFiles {
		if files[name] != *codeFiles[name] {
			return fmt.Errorf("edge package: %s is not the handler's %s", name, name)
		}
	}
	return CheckConfig([]byte(cfg), []byte(img))
}

// jsValue renders member key of cfg as a JavaScript template string
// prints it (undefined for a missing one).
func jsValue(cfg map[string]any, key string) string {
	v, present := cfg[key]
	switch s, isStr := v.(string); {
	case !present:
		return "undefined"
	case v == nil:
		return "null"
	case isStr:
		return s
	}
	return fmt.Sprint(v)
}

// jsJSON renders member key of cfg as JSON.stringify does (undefined for
// a missing one).
func jsJSON(cfg map[string]any, key string) string {
	if _, present := cfg[key]; !present {
		return "undefined"
	}
	return quote(cfg[key])
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
	// Origins are the cells' DNS names when known (the fleet's); other
	// cells get a placeholder.
	Origins map[string]string
}

// CheckTableFile validates the routing table in data (read from file) the
// way it reaches the edge: the router package's rules (every problem,
// file:line: field: …), then — for a table that passed them — the
// fleet's cells, the edge function's memory, and the function package the
// router stack would ship (PackageWith: config.json and the routing image,
// checked as the handler checks them at start). Origins not given get a
// placeholder DNS name. It returns the table and the package's costs when
// everything passed.
func CheckTableFile(file string, data []byte, c TableCheck) (*Checked, error) {
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
		if o := c.Origins[id]; o != "" {
			origins[id] = o
		}
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
	files, err := PackageWith(table, origins, opts)
	if err != nil {
		add("", "the edge function cannot be built from this table: %v", err)
	}
	if errs.Len() > 0 {
		return nil, errs.Err()
	}
	return &Checked{Table: table, ImageBytes: len(files[ImageFile]), PackageBytes: PackageFilesBytes(files),
		MemoryMB: mem, NeededMemoryMB: NeededMemoryMB(len(table.Overrides()))}, nil
}

// Checked is a table that passed CheckTableFile, and what its function
// package costs.
type Checked struct {
	Table *router.Table
	// ImageBytes and PackageBytes are the sizes of the routing image and
	// of the whole function package (uncompressed), with the fleet's
	// origins when known.
	ImageBytes, PackageBytes int
	// NeededMemoryMB is the function memory the table needs (measured,
	// with headroom: see limits.go); MemoryMB the memory it has.
	NeededMemoryMB, MemoryMB int
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
