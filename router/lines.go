package router

import "gopkg.in/yaml.v3"

// FieldLines returns the line of each top-level key and of each cell of a
// routing table file ("version", "cells", "cells.cell-a", "overrides"…),
// so a check made after the table itself validated (the edge's, the
// fleet's) can point at a line too. A file that does not parse has none.
// A table in the seeds' shape maps "cells" to default_cell and
// "overrides" to assignments.
func FieldLines(file string, data []byte) map[string]int {
	out := map[string]int{}
	root, err := parseJSON(file, data)
	if err != nil || root.Kind != yaml.MappingNode {
		return out
	}
	seed := isSeedShape(root)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		out[k.Value] = k.Line
		if seed {
			// The seeds' shape: its cells are default_cell and what the
			// assignments name, its overrides the assignments.
			switch k.Value {
			case "default_cell":
				out["cells"] = k.Line
			case "assignments":
				out["overrides"] = k.Line
			}
			continue
		}
		if k.Value == "cells" && v.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(v.Content); j += 2 {
				out["cells."+v.Content[j].Value] = v.Content[j].Line
			}
		}
	}
	return out
}
