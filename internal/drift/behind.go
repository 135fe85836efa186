package drift

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/desired"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// DeployedReader reads a deployed cell stack's outputs
// (stackrun.ErrNotDeployed when it never was). internal/engine
// implements it.
type DeployedReader interface {
	DeployedOutputs(ctx context.Context, stack string) (map[string]any, error)
}

// Behind compares what each cell last deployed (its deployedSpec stack
// output, written by every up and every rollout wave) with what it should
// run now, key by key: f is the fleet's desired state (internal/desired —
// the repository plus what rollouts shipped and kept), so a cell a
// rollout moved ahead of its stack file is not behind. A cell never deployed, or whose
// deployed configuration cannot be read, is a finding too: an audit that
// cannot read a cell does not call it current.
func Behind(ctx context.Context, f *fleet.Fleet, ids []string, r DeployedReader, parallel int) Part {
	cells := selected(f, ids)
	results := make([][]Finding, len(cells))
	images := make([]string, len(cells))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	for i, c := range cells {
		g.Go(func() error {
			results[i], images[i] = behindCell(gctx, f, c, r)
			return nil
		})
	}
	_ = g.Wait()
	part := Part{Images: map[string][2]string{}}
	for i, c := range cells {
		part.Findings = append(part.Findings, results[i]...)
		part.Images[c.ID] = [2]string{images[i], c.Image}
	}
	return part
}

func behindCell(ctx context.Context, f *fleet.Fleet, c *fleet.Cell, r DeployedReader) ([]Finding, string) {
	outs, err := r.DeployedOutputs(ctx, c.ID)
	if errors.Is(err, stackrun.ErrNotDeployed) {
		return []Finding{{Kind: KindBehind, Cell: c.ID, Status: StatusNotDeployed, New: c.Image,
			Detail: "declared in the repository, never deployed",
			Next:   fmt.Sprintf("`cellctl up %s` creates it (or remove %s if the cell is not wanted)", c.ID, c.File)}}, ""
	}
	if err == nil {
		var dep spec.Cell
		if dep, err = spec.DecodeDeployed(c.ID, outs); err == nil {
			return compareSpecs(f, c, dep), dep.Image
		}
	}
	return []Finding{{Kind: KindBehind, Cell: c.ID, Status: StatusUnreadable,
		Detail: "cannot read what it last deployed: " + err.Error(),
		Next:   fmt.Sprintf("check the backend is reachable and run `cellctl drift --behind %s` again; `cellctl status %s` shows the stack", c.ID, c.ID)}}, ""
}

// compareSpecs lists every key whose deployed value differs from the
// desired state's, old (deployed) → new (desired).
func compareSpecs(f *fleet.Fleet, c *fleet.Cell, dep spec.Cell) []Finding {
	var out []Finding
	add := func(key, old, now string) {
		kc, _ := ClassOf(f.Project, key)
		out = append(out, Finding{Kind: KindBehind, Cell: c.ID, Status: StatusChanged, Key: key, Class: kc.Class, Old: old, New: now})
	}
	if dep.Region != c.Region {
		add(RegionKey, dep.Region, c.Region)
	}
	repo := c.Cell
	for _, k := range spec.Keys {
		if old, now := k.Get(&dep), k.Get(&repo); old != now {
			add(k.Name, old, now)
		}
	}
	next := fmt.Sprintf("ship the desired state: `cellctl deploy` (wave by wave, gated) or `cellctl up %s`", c.ID)
	for i := range out {
		out[i].Next = next
		if out[i].Key == "index" || out[i].Key == RegionKey {
			out[i].Next = fmt.Sprintf("a deployed cell cannot move: restore %s in %s (up refuses the change)", out[i].Key, c.File)
		}
	}
	return out
}

// SchemaKey is the key of a schema finding: the cell's database schema
// version, as its migrations reported it (waves/executor.SchemaVersions).
const SchemaKey = "schema"

// SchemaBehind names the cells (of ids) whose database schema needs an
// operator, as the desired state judges it (desired.Schema): a migration
// that failed and was not rolled back cleanly, a schema a rolled-back
// release left that the old image was not proven to run on, a cell whose
// database never ran its release's migration. It never compares a cell
// with "the newest version any cell reported": that may be a rolled-back
// release's, and advising to ship it would re-ship what the gate rolled
// back. A rolled-back release's schema left in place (expand-only, by
// design) is a note saying what the schema is, once the gate passed the
// old image on it; otherwise it is an `ahead` finding (StatusAhead), not a
// behind one: the advice checks that cell's database and ships nothing.
func SchemaBehind(st *desired.State, ids []string) ([]Finding, []string) {
	var out []Finding
	var notes []string
	for _, id := range ids {
		s, ok := st.Schemas[id]
		if !ok {
			continue
		}
		old := s.Version
		if old == "" {
			old = "unknown"
		}
		switch {
		case s.Ahead:
			out = append(out, Finding{Kind: KindBehind, Cell: id, Status: StatusAhead, Key: SchemaKey, Old: orWhat(s.Shipped, "unknown"), New: old, Detail: s.Problem, Next: s.Next})
			continue
		case s.Problem != "":
			out = append(out, Finding{Kind: KindBehind, Cell: id, Status: StatusChanged, Key: SchemaKey, Old: old, New: s.Shipped, Detail: s.Problem, Next: s.Next})
			continue
		}
		if s.LeftBy != "" {
			notes = append(notes, fmt.Sprintf("%s's schema is %s, left in place by rollout %s, which rolled the cell back (migrations are expand-only; the old image passed the gate on it): its release's is %s, not a target",
				id, s.Version, s.LeftBy, orWhat(s.Shipped, "unknown")))
		}
		if s.FailedRolledBack {
			notes = append(notes, fmt.Sprintf("%s: a migration failed in rollout %s, which rolled the cell back to its image (the old image passed the gate on what the task left): %s; check its database before shipping a fixed migration",
				id, s.FailedRollout, s.Failed))
		}
	}
	return out, notes
}
