package drift

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
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

// SchemaBehind names the cells (of ids) whose database schema is behind
// the fleet's newest — the version the latest passed migration of any cell
// reported — or whose last migration failed: after a halted rollout, the
// cells a later wave never reached, and a canary left half-migrated.
// Records that cannot be read are a finding for every cell: a schema
// nobody can read is not called current.
func SchemaBehind(f *fleet.Fleet, ids []string, records func() ([]*executor.Record, error)) []Finding {
	recs, err := records()
	if err != nil {
		var out []Finding
		for _, id := range ids {
			out = append(out, Finding{Kind: KindBehind, Cell: id, Status: StatusUnreadable, Key: SchemaKey,
				Detail: "cannot read the rollout records that hold its schema version: " + err.Error(),
				Next:   "check the backend is reachable and run `cellctl drift --behind` again"})
		}
		return out
	}
	states := executor.SchemaVersions(recs)
	behind, newest := executor.SchemaBehind(states, f.CellIDs())
	var out []Finding
	for _, id := range behind {
		if !slices.Contains(ids, id) {
			continue
		}
		s := states[id]
		old := s.Version
		if old == "" {
			old = "unknown"
		}
		fd := Finding{Kind: KindBehind, Cell: id, Status: StatusChanged, Key: SchemaKey, Old: old, New: newest,
			Detail: fmt.Sprintf("its schema is %s; the fleet's newest is %s", old, newest),
			Next:   "ship the rollout that migrates it: rerun the halted deploy with --retry, or a new `cellctl deploy`"}
		if s.Failed != "" {
			fd.Detail = fmt.Sprintf("its last migration failed in rollout %s (%s): the schema is %s or part of the way past it", s.FailedRollout, s.Failed, old)
			fd.Next = fmt.Sprintf("check the database of %s, then ship a fixed migration (`cellctl rollout status %s` shows the task)", id, s.FailedRollout)
			if newest == "" {
				fd.New = ""
			}
		}
		out = append(out, fd)
	}
	return out
}
