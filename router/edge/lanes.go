package edge

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/cellctl/cellctl/router"
)

// checkLanes refuses layouts of cells the table does not know, nil
// layouts, and (when any layout is given) a table cell without one: a
// cell without lanes would silently get no X-Cell-Lanes.
func checkLanes(table *router.Table, lanes map[string]*router.Lanes) error {
	if table == nil || lanes == nil {
		return nil
	}
	var errs []error
	ids := make([]string, 0, len(lanes))
	for id := range lanes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, ok := table.Cell(id); !ok {
			errs = append(errs, fmt.Errorf("lanes: %q is not a cell of routing table version %d", id, table.Version()))
		} else if lanes[id] == nil {
			errs = append(errs, fmt.Errorf("lanes: cell %q has a nil lane layout", id))
		}
	}
	for _, id := range table.CellIDs() {
		if _, ok := lanes[id]; !ok {
			errs = append(errs, fmt.Errorf("lanes: cell %q of routing table version %d has no lane layout (cells:lanes, cells:laneShardSize)", id, table.Version()))
		}
	}
	return errors.Join(errs...)
}

// writeLanes appends ,\n"lanes": {"cell-a": [M, r], …} in cell order,
// nothing without layouts (the config stays byte-identical to one built
// before lanes existed).
func writeLanes(b *bytes.Buffer, cells []string, lanes map[string]*router.Lanes, str func(string) string) {
	if lanes == nil {
		return
	}
	b.WriteString(",\n\"lanes\": {")
	first := true
	for _, c := range cells {
		l, ok := lanes[c]
		if !ok {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(b, "%s: [%d, %d]", str(c), l.M(), l.R())
	}
	b.WriteString("}")
}
