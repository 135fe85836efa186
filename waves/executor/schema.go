package executor

import (
	"sort"
	"time"
)

// SchemaState is what the fleet's records say of one cell's database
// schema: the version its last passed migration reported, and whether a
// later one failed (the schema may then be half-migrated: a migration's
// own transaction decides). Schema versions are fleet state kept where
// the rollouts are, in the backend: every machine reads the same answer.
type SchemaState struct {
	Cell string `json:"cell"`
	// Version is the schema version the cell's last passed migration
	// reported ("" unknown: none reported one).
	Version string `json:"version,omitempty"`
	// Rollout and Task are where that version comes from.
	Rollout string    `json:"rollout,omitempty"`
	Task    string    `json:"task,omitempty"`
	At      time.Time `json:"at,omitzero"`
	// Failed is the last migration's failure when it did not pass (after
	// Version's): the schema is Version or part of the way past it.
	Failed string `json:"failed,omitempty"`
	// FailedRollout is the rollout of that failure.
	FailedRollout string `json:"failedRollout,omitempty"`
}

// SchemaVersions reads every cell's schema state from the rollout records:
// each migration (and rollback command) a wave ran, latest last.
func SchemaVersions(recs []*Record) map[string]SchemaState {
	type event struct {
		cell, rollout string
		m             *Migration
		at            time.Time
	}
	var evs []event
	add := func(rollout string, cr CellRecord) {
		for _, m := range []*Migration{cr.Migration, cr.RollbackMigration} {
			if m == nil || (m.Task == "" && m.Error == "") {
				continue
			}
			at := m.Stopped
			if at.IsZero() {
				at = m.Started
			}
			if at.IsZero() {
				at = cr.Updated
			}
			evs = append(evs, event{cr.Cell, rollout, m, at})
		}
	}
	for _, r := range recs {
		if r == nil || !r.ShipsCells() {
			continue
		}
		for _, w := range r.Waves {
			for _, h := range w.History {
				for _, cr := range h.Cells {
					add(r.ID, cr)
				}
			}
			for _, cr := range w.Cells {
				add(r.ID, cr)
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	out := map[string]SchemaState{}
	for _, e := range evs {
		s := out[e.cell]
		s.Cell = e.cell
		if e.m.OK() {
			// A passed migration that reports no version leaves the
			// version unknown, not the older one.
			s.Version, s.Rollout, s.Task, s.At = e.m.SchemaVersion, e.rollout, e.m.Task, e.at
			s.Failed, s.FailedRollout = "", ""
		} else {
			s.Failed, s.FailedRollout = e.m.Failure(), e.rollout
		}
		out[e.cell] = s
	}
	return out
}

// ShipsCells reports whether r's waves ship configurations to cells, each
// kept by the cell when its wave passed: a rollout's, and a cell add's one
// wave (its new cell's first configuration and migration). Whoever reads
// what a cell was shipped — its schema (SchemaVersions, and the schema a
// cell's kept release migrated it to in internal/desired) — reads both, so
// a cell that joined through `cell add` is judged as a cell a wave reached.
func (r *Record) ShipsCells() bool { return r.IsRollout() || r.Kind == KindCellAdd }
