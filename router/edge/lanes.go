package edge

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/cellctl/cellctl/router"
)

// Option adds to what Config, Package and NewRouter build.
type Option func(*config)

type config struct {
	lanes map[string]*router.Lanes
}

func options(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithLanes bakes each cell's lane layout (M lanes, shards of r) into
// config.json, so the handler sends the tenant's lanes in X-Cell-Lanes
// with X-Cell-Id. Every cell of the table needs one (the router stack
// passes every fleet cell's cells:lanes and cells:laneShardSize).
func WithLanes(lanes map[string]*router.Lanes) Option {
	return func(c *config) {
		c.lanes = make(map[string]*router.Lanes, len(lanes))
		for k, v := range lanes {
			c.lanes[k] = v
		}
	}
}

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
