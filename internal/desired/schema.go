package desired

import (
	"fmt"
	"slices"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
)

// Schema is one cell's database schema as the rollout records tell it:
// what it is (the embedded executor.SchemaState: the version the last
// passed migration reported, and a later failure), what the release the
// cell should run migrated it to, and whether it needs an operator.
//
// The fleet's target is never "the newest version any migration
// reported": a rolled-back release's migration stays in the database by
// design (migrations are expand-only; the rollback re-checks the old image
// on that schema for one poll window), so its version is what the schema
// is, not what the other cells should reach. Shipping it to them would
// re-ship the release the gate just rolled back.
type Schema struct {
	executor.SchemaState
	// Shipped is the version the cell's kept release reported: the newest
	// passed forward migration of a wave that passed and kept the cell
	// ("" when none reported one); ShippedRollout is its rollout.
	Shipped        string `json:"shipped,omitempty"`
	ShippedRollout string `json:"shippedRollout,omitempty"`
	// LeftBy is the rollout that rolled the cell back and left Version in
	// place (its migration ran; no rollback command undid it).
	LeftBy string `json:"leftBy,omitempty"`
	// FailedRolledBack: the failed migration (Failed) was in a rollout that
	// rolled the cell back, and the old image passed the gate on what it
	// left (or it never started): the cell runs its release.
	FailedRolledBack bool `json:"failedRolledBack,omitempty"`
	// Problem says why the schema needs an operator, Next what to do; ""
	// when it does not. A schema the records cannot vouch for is a
	// problem: it is never called current.
	Problem string `json:"problem,omitempty"`
	Next    string `json:"next,omitempty"`
	// Ahead: the Problem is a schema a rolled-back release left past its
	// release's (LeftBy) that the old image is not proven to run on — not
	// a half-migrated schema, and not one behind a target: neither
	// migrating the other cells to it nor this one back is the advice.
	Ahead bool `json:"ahead,omitempty"`
}

// schemas judges every cell's schema. recs are newest first.
func schemas(fl *fleet.Fleet, recs []*executor.Record) map[string]Schema {
	current := executor.SchemaVersions(recs)
	out := map[string]Schema{}
	for _, c := range fl.Cells {
		s := Schema{SchemaState: current[c.ID]}
		s.Cell = c.ID
		s.Shipped, s.ShippedRollout = shippedSchema(recs, c.ID)
		// An unknown version (a migration that reported none) from
		// another rollout than the release's is judged too: what a
		// rolled-back migration left is no less there for being unnamed.
		if s.Rollout != "" && s.Rollout != s.ShippedRollout {
			judgeLeft(&s, find(recs, s.Rollout, c.ID))
		}
		if s.Failed != "" && s.Problem == "" {
			judgeFailed(&s, find(recs, s.FailedRollout, c.ID))
		}
		if _, ok := current[c.ID]; ok {
			out[c.ID] = s
		}
	}
	// A cell whose records hold no migration at all while cells on its
	// image report a version: its database never ran that release's
	// migration as far as anyone can tell (a cell created after it).
	for _, c := range fl.Cells {
		if _, ok := out[c.ID]; ok {
			continue
		}
		for _, o := range fl.Cells {
			if s, ok := out[o.ID]; ok && o.Image == c.Image && s.Shipped != "" {
				out[c.ID] = Schema{SchemaState: executor.SchemaState{Cell: c.ID}, Shipped: s.Shipped, ShippedRollout: s.ShippedRollout,
					Problem: fmt.Sprintf("no migration is recorded for it, while %s on the same image reports schema %s (rollout %s)", o.ID, s.Shipped, s.ShippedRollout),
					Next:    fmt.Sprintf("check the database of %s: a cell created after the release ran none of its migrations", c.ID)}
				break
			}
		}
	}
	return out
}

// shippedSchema is the version reported by the newest passed forward
// migration of a wave that left the cell on what it shipped (runs: kept,
// or held by a halt): the schema of the release the cell runs. A cell
// add's record counts (ShipsCells): it migrated the new cell for the image
// it gave it.
func shippedSchema(recs []*executor.Record, cell string) (string, string) {
	for _, r := range recs {
		if !r.ShipsCells() {
			continue
		}
		for _, w := range r.Waves {
			for _, cr := range w.Cells {
				if cr.Cell == cell && runs(w, cr) && cr.Migration.OK() {
					return cr.Migration.SchemaVersion, r.ID
				}
			}
		}
	}
	return "", ""
}

// cellIn is a cell's record in one rollout, with its wave.
type cellIn struct {
	wave *executor.WaveRecord
	cell *executor.CellRecord
}

func find(recs []*executor.Record, id, cell string) cellIn {
	for _, r := range recs {
		if r.ID != id {
			continue
		}
		for i := range r.Waves {
			w := &r.Waves[i]
			for j := range w.Cells {
				if w.Cells[j].Cell == cell {
					return cellIn{w, &w.Cells[j]}
				}
			}
		}
	}
	return cellIn{}
}

// judgeLeft judges a version that does not come from the cell's kept
// release: fine when a rollback left it and the old image passed the gate
// on it; a problem otherwise (the gate breached, never finished reading
// it, or the rollout has not let go of the cell).
func judgeLeft(s *Schema, in cellIn) {
	switch {
	case in.cell == nil:
		s.Problem = fmt.Sprintf("schema %s comes from rollout %s, whose record no longer names the cell", orWhat(s.Version, "unknown"), s.Rollout)
		s.Next = fmt.Sprintf("check the database of %s (`cellctl rollout status %s`)", s.Cell, s.Rollout)
	case in.cell.State != executor.CellStateRolled:
		s.Problem = fmt.Sprintf("schema %s comes from rollout %s, which has not kept or rolled back the cell (%s)", orWhat(s.Version, "unknown"), s.Rollout, in.cell.State)
		s.Next = fmt.Sprintf("finish that rollout: `cellctl rollout status %s` says where it stands", s.Rollout)
	case undone(in.cell):
		// The rollback command undid the migration: nothing was left
		// behind.
	default:
		s.LeftBy = s.Rollout
		p := oldImageOnSchema(in)
		if p == "" {
			return
		}
		left := fmt.Sprintf("rollout %s rolled the cell back and left schema %s in place, past the schema of its release (%s)",
			s.Rollout, orWhat(s.Version, "unknown"), orWhat(s.Shipped, "none reported"))
		if rb := in.cell.RollbackMigration; rb.OK() {
			left += fmt.Sprintf(" (its rollback command exited 0 but reported schema %s, what the migration left: it did not undo it)", rb.SchemaVersion)
		}
		s.Problem, s.Ahead = left+", but "+p, true
		s.Next = fmt.Sprintf("check the database of %s: the image it runs must work on that schema (`cellctl rollout status %s` shows the migration); it is not a target for the other cells, and re-shipping rollout %s's release would ship what its gate rolled back",
			s.Cell, s.Rollout, s.Rollout)
	}
}

// undone reports whether a rolled-back cell's rollback command undid its
// migration: it passed, and did not report the very version the
// migration left (a command that cannot say is taken at its exit code).
func undone(cr *executor.CellRecord) bool {
	rb, m := cr.RollbackMigration, cr.Migration
	if !rb.OK() {
		return false
	}
	return rb.SchemaVersion == "" || m == nil || rb.SchemaVersion != m.SchemaVersion
}

func orWhat(s, what string) string {
	if s == "" {
		return what
	}
	return s
}

// judgeFailed judges a migration that failed after Version: fine when
// the cell was rolled back, no rollback command failed, and the old image
// passed the gate on what the failed task left (or no task started, so
// nothing touched the database).
func judgeFailed(s *Schema, in cellIn) {
	at := s.Version
	if at == "" {
		at = "unknown"
	}
	s.Problem = fmt.Sprintf("its last migration failed in rollout %s (%s): the schema is %s or part of the way past it", s.FailedRollout, s.Failed, at)
	s.Next = fmt.Sprintf("check the database of %s, then ship a fixed migration (`cellctl rollout status %s` shows the task)", s.Cell, s.FailedRollout)
	if in.cell == nil || in.cell.State != executor.CellStateRolled {
		return
	}
	if rb := in.cell.RollbackMigration; rb != nil && !rb.OK() {
		return
	}
	if m := in.cell.Migration; m == nil || m.Task != "" {
		if oldImageOnSchema(in) != "" {
			return
		}
	}
	s.Problem, s.Next, s.FailedRolledBack = "", "", true
}

// oldImageOnSchema says why the rolled-back cell's old image is not known
// to run on the schema its migration left ("" when it is): the gate's
// schema check after the rollback must have passed with the cell in it.
func oldImageOnSchema(in cellIn) string {
	sc := in.wave.SchemaCheck
	switch {
	case sc == nil || !slices.Contains(sc.Cells, in.cell.Cell):
		return "no schema check read the old image on it"
	case sc.State == executor.WaveDone && sc.Decision == waves.Pass:
		return ""
	case sc.Breach != nil:
		return "the old image failed the gate on it: " + sc.Breach.String()
	case sc.State == executor.WaveBaking:
		return "the schema check reading the old image on it has not finished"
	default:
		return fmt.Sprintf("the schema check reading the old image on it ended %s %s", sc.State, sc.Decision)
	}
}
