package router

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/internal/safefile"
	"gopkg.in/yaml.v3"
)

// MaxFileBytes caps routing.json: room for MaxOverrides overrides of the
// longest form (a migrating override with a 128-byte tenant id is about
// 190 bytes on its line), and a bound on what parsing can cost.
const MaxFileBytes = 192 << 20

// Load reads and validates a routing table file (stacks/routing.json).
func Load(path string) (*Table, error) {
	data, err := safefile.Read(path, MaxFileBytes)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &diag.Error{File: path, Msg: "cannot read: " + err.Error()}
	}
	return Parse(path, data)
}

// Parse validates the routing table in data, read from file (the name used
// in error messages). It reports every problem of the file at once, each as
// file:line: field: what is wrong and what is allowed.
func Parse(file string, data []byte) (*Table, error) {
	root, derr := parseJSON(file, data)
	if derr != nil {
		return nil, derr
	}
	p := &positions{file: file, parsed: true}
	var errs diag.List
	seed := isSeedShape(root)
	var s Spec
	if seed {
		s = specFromSeed(file, root, p, &errs)
	} else {
		s = specFromNode(file, root, p, &errs)
	}
	if errs.Len() > 0 {
		// Report the semantic problems of what did parse as well.
		if verr := validate(&s, p); verr != nil {
			if seed {
				verr = seedFields(verr)
			}
			errs.Merge(file, verr)
		}
		return nil, errs.Err()
	}
	t, err := build(file, s, p)
	if seed {
		err = seedFields(err)
	}
	return t, err
}

var (
	topKeys      = []string{"version", "generated_at", "buckets", "cells", "overrides", "load"}
	cellKeys     = []string{"state", "weight", "buckets", "capacity"}
	overrideKeys = []string{"tenant", "cell", "state", "target", "write_mode"}

	quotedOverrideKeys   = diag.Quote(overrideKeys)
	quotedOverrideStates = diag.Quote(overrideStates)
	quotedWriteModes     = diag.Quote(writeModes)
)

func specFromNode(file string, root *yaml.Node, p *positions, errs *diag.List) Spec {
	s := Spec{Buckets: DefaultBuckets}
	if root.Kind != yaml.MappingNode {
		errs.Add(file, root.Line, "", "the routing table must be a JSON object with %s; got %s", diag.Quote(topKeys), kindName(root))
		p.markBad("version")
		p.markBad("cells")
		return s
	}
	have := map[string]bool{}
	for _, kv := range pairs(file, "", "", root, errs) {
		key, v := kv.Key.Value, kv.Value
		have[key] = true
		if headerField(file, kv, p, &s, errs) {
			continue
		}
		switch key {
		case "buckets":
			p.buckets = kv.Key.Line
			n, ok := intNode(file, "buckets", fmt.Sprintf("an integer from 1 to %d", MaxBuckets), v, errs)
			if !ok {
				p.markBad("buckets")
			}
			s.Buckets = int(n)
		case "cells":
			p.cells = kv.Key.Line
			s.Cells = cellsFromNode(file, v, p, errs)
		case "overrides":
			p.overrides = kv.Key.Line
			s.Overrides = overridesFromNode(file, v, p, errs)
		case "load":
			p.load.line = kv.Key.Line
			s.Load = loadFromNode(file, v, p, errs)
		default:
			errs.Add(file, kv.Key.Line, key, "unknown key; allowed keys: %s", diag.Quote(topKeys))
		}
	}
	if !have["version"] {
		errs.Add(file, root.Line, "version", "required: a positive integer that goes up with every change to the table")
		p.markBad("version")
	}
	if !have["cells"] {
		errs.Add(file, root.Line, "cells", "required: an object of cell id → {\"state\", \"weight\", \"buckets\"}")
		p.markBad("cells")
	}
	return s
}

func cellsFromNode(file string, n *yaml.Node, p *positions, errs *diag.List) []CellSpec {
	var cells []CellSpec
	if n.Kind != yaml.MappingNode {
		p.markBad("cells")
	}
	for _, kv := range pairs(file, "cells", `of cell id → {"state", "weight", "buckets"}`, n, errs) {
		id := kv.Key.Value
		field := diag.Join("cells", id)
		c := CellSpec{ID: id}
		cp := cellPos{line: kv.Key.Line}
		have := map[string]bool{}
		for _, f := range pairs(file, field, `with "state", "weight" and "buckets"`, kv.Value, errs) {
			have[f.Key.Value] = true
			ff := diag.Join(field, f.Key.Value)
			switch f.Key.Value {
			case "state":
				cp.state = f.Key.Line
				v, ok := stringNode(file, ff, diag.Quote(cellStates), f.Value, errs)
				if !ok {
					p.markBad(ff)
				}
				c.State = CellState(v)
			case "weight":
				cp.weight = f.Key.Line
				w, ok := intNode(file, ff, fmt.Sprintf("an integer from 1 to %d (the cell's relative capacity)", MaxWeight), f.Value, errs)
				if !ok {
					p.markBad(ff)
				}
				c.Weight = int(w)
			case "buckets":
				cp.buckets = f.Key.Line
				c.Buckets, cp.ranges = rangesFromNode(file, ff, f.Value, p, errs)
			case "capacity":
				cp.capacity = f.Key.Line
				v, ok := capacityFromNode(file, ff, f.Value, errs)
				if !ok {
					p.markBad(ff)
				}
				c.Capacity = v
			default:
				errs.Add(file, f.Key.Line, ff, "unknown key; allowed keys: %s", diag.Quote(cellKeys))
			}
		}
		if kv.Value.Kind == yaml.MappingNode {
			if !have["state"] {
				errs.Add(file, cp.line, field+".state", "required: %s", diag.Quote(cellStates))
				p.markBad(field + ".state")
			}
			if !have["weight"] {
				errs.Add(file, cp.line, field+".weight", "required: the cell's relative capacity, an integer from 1 to %d", MaxWeight)
				p.markBad(field + ".weight")
			}
		} else {
			p.markBad(field + ".state")
			p.markBad(field + ".weight")
		}
		cells = append(cells, c)
		p.cell = append(p.cell, cp)
	}
	return cells
}

func rangesFromNode(file, field string, n *yaml.Node, p *positions, errs *diag.List) (Ranges, []int) {
	if n.Kind != yaml.SequenceNode {
		errs.Add(file, n.Line, field, "must be an array of bucket ranges like [\"0-255\", \"512\"]; got %s", kindName(n))
		p.badRanges = true
		return nil, nil
	}
	var rs Ranges
	var lines []int
	for j, item := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, j)
		if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" {
			errs.Add(file, item.Line, f, "must be a string like \"0-255\" or \"512\"; got %s", kindName(item))
			p.badRanges = true
			continue
		}
		r, err := ParseRange(item.Value)
		if err != nil {
			errs.Add(file, item.Line, f, "%v", err)
			p.badRanges = true
			continue
		}
		rs = append(rs, r)
		lines = append(lines, item.Line)
	}
	return rs, lines
}

func overridesFromNode(file string, n *yaml.Node, p *positions, errs *diag.List) []Override {
	if n.Kind != yaml.SequenceNode {
		errs.Add(file, n.Line, "overrides", "must be an array of {\"tenant\", \"cell\", \"state\"[, \"target\", \"write_mode\"]} objects; got %s", kindName(n))
		return nil
	}
	// Tables may carry a million overrides: field names are only built
	// for messages.
	out := make([]Override, 0, len(n.Content))
	p.override = make([]overridePos, 0, len(n.Content))
	for i, item := range n.Content {
		o := Override{}
		op := overridePos{line: item.Line}
		field := func() string { return "overrides[" + strconv.Itoa(i) + "]" }
		if item.Kind != yaml.MappingNode {
			errs.Add(file, item.Line, field(), "must be an object with %s; got %s", quotedOverrideKeys, kindName(item))
			for _, k := range overrideKeys {
				p.markBad(field() + "." + k)
			}
			out = append(out, o)
			p.override = append(p.override, op)
			continue
		}
		var seen [5]int // line of each of overrideKeys
		for j := 0; j+1 < len(item.Content); j += 2 {
			key, val := item.Content[j], item.Content[j+1]
			k := -1
			for x, name := range overrideKeys {
				if key.Value == name {
					k = x
				}
			}
			ff := func() string { return field() + "." + key.Value }
			if k < 0 {
				errs.Add(file, key.Line, ff(), "unknown key; allowed keys: %s", quotedOverrideKeys)
				continue
			}
			if seen[k] > 0 {
				errs.Add(file, key.Line, ff(), "duplicate key (first set on line %d)", seen[k])
				continue
			}
			seen[k] = key.Line
			var v string
			if val.Kind == yaml.ScalarNode && val.Tag == "!!str" {
				v = val.Value
			} else {
				allowed := [...]string{"a tenant id", "a cell id", quotedOverrideStates, "a cell id", quotedWriteModes}[k]
				errs.Add(file, val.Line, ff(), "must be %s; got %s", allowed, kindName(val))
				p.markBad(ff())
			}
			switch k {
			case 0:
				o.Tenant, op.tenant = v, key.Line
			case 1:
				o.Cell, op.cell = v, key.Line
			case 2:
				o.State, op.state = OverrideState(v), key.Line
			case 3:
				o.Target, op.target = v, key.Line
				if v == "" && !p.isBad(ff()) {
					errs.Add(file, key.Line, ff(), "must name a cell; remove the key when there is no target")
					p.markBad(ff())
				}
			case 4:
				o.WriteMode, op.writeMode = WriteMode(v), key.Line
				if v == "" && !p.isBad(ff()) {
					errs.Add(file, key.Line, ff(), "must be %s; got \"\"", quotedWriteModes)
					p.markBad(ff())
				}
			}
		}
		if seen[0] == 0 {
			errs.Add(file, item.Line, field()+".tenant", "required: the tenant id this override pins")
			p.markBad(field() + ".tenant")
		}
		out = append(out, o)
		p.override = append(p.override, op)
	}
	return out
}

func intNode(file, field, allowed string, n *yaml.Node, errs *diag.List) (int64, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		errs.Add(file, n.Line, field, "must be %s; got %s", allowed, kindName(n))
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		errs.Add(file, n.Line, field, "must be %s; got %s, which is out of range", allowed, n.Value)
		return 0, false
	}
	return v, true
}

func stringNode(file, field, allowed string, n *yaml.Node, errs *diag.List) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		errs.Add(file, n.Line, field, "must be %s; got %s", allowed, kindName(n))
		return "", false
	}
	return n.Value, true
}

// pairs is diag.Pairs with the kind error in JSON terms.
// headerField reads a key both table shapes (cellctl's and the seeds')
// share — version, generated_at — into s; false when kv is neither.
func headerField(file string, kv diag.Pair, p *positions, s *Spec, errs *diag.List) bool {
	switch kv.Key.Value {
	case "version":
		p.version = kv.Key.Line
		n, ok := intNode(file, "version", "a positive integer", kv.Value, errs)
		if !ok {
			p.markBad("version")
		}
		s.Version = n
	case "generated_at":
		p.generatedAt = kv.Key.Line
		t, ok := stringNode(file, "generated_at", "an RFC 3339 time like \"2026-05-01T12:00:00Z\"", kv.Value, errs)
		if !ok {
			p.markBad("generated_at")
		}
		s.GeneratedAt = t
	default:
		return false
	}
	return true
}

func pairs(file, field, what string, n *yaml.Node, errs *diag.List) []diag.Pair {
	if n.Kind != yaml.MappingNode {
		errs.Add(file, n.Line, field, "must be an object %s; got %s", what, kindName(n))
		return nil
	}
	return diag.Pairs(file, field, n, errs)
}

// kindName names a parsed JSON value the way JSON users say it.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "an array"
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!int":
		return "an integer (" + n.Value + ")"
	case "!!float":
		return "a number (" + n.Value + ")"
	case "!!bool":
		return n.Value
	}
	return "the string " + diag.Echo(n.Value)
}
