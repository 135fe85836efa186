package router

import (
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/internal/diag"
	"gopkg.in/yaml.v3"
)

// The seeds' routing contract: a second shape of routing table that Parse
// (so `cellctl route --table`, `route --check`, `route --diff` and the
// fleet loader) accepts besides cellctl's own.
//
//	{
//	  "version": 42,
//	  "generated_at": "2026-05-01T12:00:00Z",
//	  "default_cell": "cell-a",
//	  "assignments": [
//	    {"tenant_id": "acme", "cell_id": "cell-b", "state": "active", "target_cell_id": null, "write_mode": null},
//	    {"tenant_id": "globex", "cell_id": "cell-a", "state": "migrating", "target_cell_id": "cell-c", "write_mode": "reject_with_503"}
//	  ]
//	}
//
// Every tenant is assigned explicitly or goes to default_cell. It becomes
// a table of DefaultBuckets buckets all owned by default_cell (active,
// weight 1), every other cell it names active with weight 1 and no
// buckets, and one override per assignment: the same routing for every
// tenant id, which is why `route --diff` compares the two shapes. Problems
// are reported with the seed's own field names (assignments[3].cell_id).
// cellctl writes its own shape (Marshal) when it saves a table.

var (
	seedKeys       = []string{"version", "generated_at", "default_cell", "assignments"}
	assignmentKeys = []string{"tenant_id", "cell_id", "state", "target_cell_id", "write_mode"}
)

// isSeedShape reports whether root is a table in the seeds' shape: it has
// default_cell or assignments and no cells.
func isSeedShape(root *yaml.Node) bool {
	if root.Kind != yaml.MappingNode {
		return false
	}
	seed, cells := false, false
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "default_cell", "assignments":
			seed = true
		case "cells":
			cells = true
		}
	}
	return seed && !cells
}

func specFromSeed(file string, root *yaml.Node, p *positions, errs *diag.List) Spec {
	s := Spec{Buckets: DefaultBuckets}
	have := map[string]bool{}
	var defaultCell string
	defaultLine := 0
	var assignments *yaml.Node
	for _, kv := range pairs(file, "", "", root, errs) {
		key, v := kv.Key.Value, kv.Value
		have[key] = true
		if headerField(file, kv, p, &s, errs) {
			continue
		}
		switch key {
		case "default_cell":
			defaultLine = kv.Key.Line
			id, ok := stringNode(file, "default_cell", "the id of the cell that serves every tenant without an assignment", v, errs)
			if ok && !ValidCellID(id) {
				errs.Add(file, kv.Key.Line, "default_cell", "%s is not a valid cell id; cell ids are %s", diag.Echo(id), cellIDRule)
				ok = false
			}
			if ok {
				defaultCell = id
			}
		case "assignments":
			p.overrides = kv.Key.Line
			assignments = v
		default:
			errs.Add(file, kv.Key.Line, key, "unknown key; allowed keys: %s", diag.Quote(seedKeys))
		}
	}
	for _, k := range []struct{ key, what string }{
		{"version", "a positive integer that goes up with every change to the table"},
		{"generated_at", "when the table was generated, an RFC 3339 time like \"2026-05-01T12:00:00Z\""},
		{"default_cell", "the cell that serves every tenant without an assignment"},
		{"assignments", "an array of {\"tenant_id\", \"cell_id\", \"state\", \"target_cell_id\", \"write_mode\"} (may be empty)"},
	} {
		if !have[k.key] {
			errs.Add(file, root.Line, k.key, "required: %s", k.what)
			p.markBad(k.key)
		}
	}

	// Cells: the default cell owns every bucket; the others are named by
	// assignments.
	cellLine := map[string]int{}
	var order []string
	addCell := func(id string, line int) {
		if _, ok := cellLine[id]; !ok {
			cellLine[id] = line
			order = append(order, id)
		}
	}
	if defaultCell != "" {
		addCell(defaultCell, defaultLine)
	}
	if assignments != nil {
		s.Overrides = assignmentsFromNode(file, assignments, p, errs, addCell)
	}
	for _, id := range order {
		c := CellSpec{ID: id, State: CellActive, Weight: 1}
		if id == defaultCell {
			c.Buckets = Ranges{{First: 0, Last: s.Buckets - 1}}
		}
		s.Cells = append(s.Cells, c)
		p.cell = append(p.cell, cellPos{line: cellLine[id]})
	}
	if defaultCell == "" {
		// Reported above; without it no bucket has a cell.
		p.badRanges = true
		p.markBad("cells")
	}
	return s
}

func assignmentsFromNode(file string, n *yaml.Node, p *positions, errs *diag.List, addCell func(string, int)) []Override {
	if n.Kind != yaml.SequenceNode {
		errs.Add(file, n.Line, "assignments", "must be an array of {\"tenant_id\", \"cell_id\", \"state\", \"target_cell_id\", \"write_mode\"} objects; got %s", kindName(n))
		return nil
	}
	quoted := diag.Quote(assignmentKeys)
	out := make([]Override, 0, len(n.Content))
	p.override = make([]overridePos, 0, len(n.Content))
	for i, item := range n.Content {
		o := Override{}
		op := overridePos{line: item.Line}
		field := func() string { return "assignments[" + strconv.Itoa(i) + "]" }
		ofield := func(k string) string { return "overrides[" + strconv.Itoa(i) + "]." + k }
		if item.Kind != yaml.MappingNode {
			errs.Add(file, item.Line, field(), "must be an object with %s; got %s", quoted, kindName(item))
			for _, k := range overrideKeys {
				p.markBad(ofield(k))
			}
			out, p.override = append(out, o), append(p.override, op)
			continue
		}
		var seen [5]int
		for j := 0; j+1 < len(item.Content); j += 2 {
			key, val := item.Content[j], item.Content[j+1]
			k := -1
			for x, name := range assignmentKeys {
				if key.Value == name {
					k = x
				}
			}
			ff := field() + "." + key.Value
			if k < 0 {
				errs.Add(file, key.Line, ff, "unknown key; allowed keys: %s", quoted)
				continue
			}
			if seen[k] > 0 {
				errs.Add(file, key.Line, ff, "duplicate key (first set on line %d)", seen[k])
				continue
			}
			seen[k] = key.Line
			of := ofield(overrideKeys[k])
			// target_cell_id and write_mode may be null: not migrating.
			if (k == 3 || k == 4) && val.Kind == yaml.ScalarNode && val.ShortTag() == "!!null" {
				continue
			}
			if val.Kind != yaml.ScalarNode || val.Tag != "!!str" {
				allowed := [...]string{"a tenant id", "a cell id", quotedOverrideStates, "a cell id or null", quotedWriteModes + " or null"}[k]
				errs.Add(file, val.Line, ff, "must be %s; got %s", allowed, kindName(val))
				p.markBad(of)
				continue
			}
			v := val.Value
			if (k == 1 || k == 3) && !ValidCellID(v) {
				errs.Add(file, key.Line, ff, "%s is not a valid cell id; cell ids are %s", diag.Echo(v), cellIDRule)
				p.markBad(of)
				continue
			}
			switch k {
			case 0:
				o.Tenant, op.tenant = v, key.Line
			case 1:
				o.Cell, op.cell = v, key.Line
				addCell(v, key.Line)
			case 2:
				o.State, op.state = OverrideState(v), key.Line
			case 3:
				o.Target, op.target = v, key.Line
				addCell(v, key.Line)
			case 4:
				o.WriteMode, op.writeMode = WriteMode(v), key.Line
			}
		}
		for k, what := range [...]string{"the tenant id this assignment routes", "the cell that serves the tenant", quotedOverrideStates} {
			if seen[k] == 0 && !p.isBad(ofield(overrideKeys[k])) {
				errs.Add(file, item.Line, field()+"."+assignmentKeys[k], "required: %s", what)
				p.markBad(ofield(overrideKeys[k]))
			}
		}
		out, p.override = append(out, o), append(p.override, op)
	}
	return out
}

// seedFields renames the fields of cellctl's shape in the problems
// validate found to the seed's: overrides[3].cell → assignments[3].cell_id.
func seedFields(err error) error {
	if err == nil {
		return nil
	}
	rename := strings.NewReplacer(".tenant", ".tenant_id", ".cell", ".cell_id", ".target", ".target_cell_id")
	for _, e := range diag.Errors(err) {
		de, ok := e.(*diag.Error)
		if !ok {
			continue
		}
		de.Msg = strings.ReplaceAll(de.Msg, "(overrides[", "(assignments[")
		switch f := de.Field; {
		case strings.HasPrefix(f, "overrides["):
			head, key, _ := strings.Cut(strings.TrimPrefix(f, "overrides"), "]")
			de.Field = "assignments" + head + "]" + rename.Replace(key)
		case f == "overrides":
			de.Field = "assignments"
		case f == "cells", strings.HasPrefix(f, "cells."):
			de.Field = "default_cell"
		}
	}
	return err
}
