package lifecycle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/safefile"
	"github.com/cellctl/cellctl/router"
)

// Retire removes a cell whose stack is gone from the fleet repository: its
// entry in the routing table (a new version, the previous table kept), its
// place in waves.yaml, then its stack file — in that order, so that a
// retire interrupted between two steps leaves a fleet that still loads,
// except between the last two (the message of the loader then names the
// stack file to delete). Every edit is computed and checked before the
// first is written: a cell that still serves tenants, or a wave that would
// be left empty, refuses the whole retire. The router needs no publish for
// it: a drained cell has no buckets and no origin, so the table without it
// routes exactly as before (the next publish carries the new version).
// It returns one line per step done.
func Retire(fl *fleet.Fleet, cell string) ([]string, error) {
	c := fl.Cell(cell)
	if c == nil {
		return nil, fmt.Errorf("unknown cell %q (cells of this fleet: %s)", cell, strings.Join(fl.CellIDs(), ", "))
	}
	var next *router.Table
	if t := fl.Routing; t != nil {
		if cs, ok := t.Cell(cell); ok {
			if cs.State != router.CellDrained || cs.Buckets.Count() > 0 {
				return nil, fmt.Errorf("refusing to retire %s: it is %s in %s with %d bucket(s); drain it first (`cellctl drain %s`)",
					cell, cs.State, fleet.RoutingFile, cs.Buckets.Count(), cell)
			}
			var pinned []string
			for _, o := range t.Overrides() {
				if o.Cell == cell || o.Target == cell {
					pinned = append(pinned, o.Tenant)
				}
			}
			if len(pinned) > 0 {
				return nil, fmt.Errorf("refusing to retire %s: tenants are pinned to it in %s: %s; move them first (`cellctl migrate TENANT --to CELL`)",
					cell, fleet.RoutingFile, strings.Join(pinned, ", "))
			}
			s := t.Spec()
			kept := s.Cells[:0]
			for _, cs := range s.Cells {
				if cs.ID != cell {
					kept = append(kept, cs)
				}
			}
			s.Cells, s.Version = kept, s.Version+1
			var err error
			if next, err = router.New(s); err != nil {
				return nil, fmt.Errorf("removing %s from %s: %w", cell, fleet.RoutingFile, err)
			}
		}
	}
	wavesPath := filepath.Join(fl.Dir, fl.StackDir, fleet.WavesFile)
	wavesData, err := os.ReadFile(wavesPath)
	if err != nil {
		return nil, err
	}
	newWaves, wave, err := removeFromWave(wavesData, cell)
	if err != nil {
		return nil, fmt.Errorf("removing %s from %s: %w", cell, filepath.Join(fl.StackDir, fleet.WavesFile), err)
	}
	stackFile := filepath.Join(fl.Dir, c.File)

	var done []string
	if next != nil {
		tablePath, prevPath := tablePaths(fl)
		if err := router.SaveTable(tablePath, prevPath, fl.Routing, next); err != nil {
			return done, err
		}
		done = append(done, fmt.Sprintf("removed %s from %s: version %d → %d (the previous table is kept in %s)",
			cell, filepath.Join(fl.StackDir, fleet.RoutingFile), fl.Routing.Version(), next.Version(), router.PreviousFile))
	}
	if newWaves != nil {
		if err := safefile.Write(wavesPath, newWaves, 0o644); err != nil {
			return done, err
		}
		done = append(done, fmt.Sprintf("removed %s from wave %q of %s", cell, wave, filepath.Join(fl.StackDir, fleet.WavesFile)))
	}
	if err := os.Remove(stackFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return done, fmt.Errorf("deleting %s: %w; delete it by hand", c.File, err)
	}
	done = append(done, fmt.Sprintf("deleted %s", c.File))
	return done, nil
}

// removeFromWave returns waves.yaml without cell, and the wave it was in;
// nil bytes when no wave lists it. Like addToWave it edits the text at the
// positions yaml.v3 reports, so the rest of the file stays byte for byte.
// A wave the removal would leave empty is refused: which wave takes its
// place in the order is the operator's call.
func removeFromWave(data []byte, cell string) ([]byte, string, error) {
	lists, err := waveLists(data)
	if err != nil {
		return nil, "", err
	}
	for _, w := range lists {
		name, cells := w.name, w.cells
		if cells == nil || cells.Kind != yaml.SequenceNode {
			continue
		}
		for k, item := range cells.Content {
			if item.Value != cell {
				continue
			}
			if len(cells.Content) == 1 {
				return nil, "", fmt.Errorf("%s is the only cell of wave %q; remove the wave by hand", cell, name)
			}
			lines := bytes.SplitAfter(data, []byte("\n"))
			if cells.Style&yaml.FlowStyle == 0 {
				// A block list item is its own line: drop it.
				lines = append(lines[:item.Line-1], lines[item.Line:]...)
				return bytes.Join(lines, nil), name, nil
			}
			// A flow list: drop the item and the separator before it (or
			// after it, for the first item), on its own line.
			l := lines[item.Line-1]
			start, end := item.Column-1, item.Column-1+len(cell)
			if end > len(l) || string(l[start:end]) != cell {
				return nil, "", fmt.Errorf("line %d: wave %q lists %s in a form cellctl does not edit; remove it by hand", item.Line, name, cell)
			}
			if k > 0 {
				for start > 0 && (l[start-1] == ' ' || l[start-1] == ',') {
					start--
				}
			} else {
				for end < len(l) && (l[end] == ' ' || l[end] == ',') {
					end++
				}
			}
			lines[item.Line-1] = append(append([]byte{}, l[:start]...), l[end:]...)
			return bytes.Join(lines, nil), name, nil
		}
	}
	return nil, "", nil
}
