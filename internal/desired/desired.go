// Package desired answers one question for every path that changes a
// cell: what should this cell run? The answer is the fleet repository
// plus what rollouts shipped and kept, as their records in the Pulumi
// backend say.
//
// Why the backend and not a write-back into the stack files: CI promotes
// from a clean checkout, on a machine whose working tree is thrown away
// when the job ends, and several jobs (one per wave) share only the
// backend. A rollout that wrote `cells:image` into the checkout would
// leave the next job's checkout — and every operator's clone — on the old
// image, and the next `up` there would ship it: the downgrade this
// package exists to prevent. The rollout record already lives in the
// backend, shared by every machine, and already says per cell what it
// shipped and whether the cell kept it.
//
// The trap of that choice is a repository that disagrees with production
// forever. Two rules keep it from being one:
//   - a shipped image holds only while the repository still names the
//     image it named when the rollout shipped (CellRecord.RepoImage): once
//     someone commits a new image, the repository wins again, as a commit
//     should;
//   - every pin is reported (Pin.Note): up, deploy and drift --behind say
//     "cell-a runs app:1.5.0, shipped by rollout r-…; the repository says
//     app:1.4.2 — commit cells:image: app:1.5.0 to stacks/Pulumi.cell-a.yaml".
package desired

import (
	"context"
	"fmt"
	"sort"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/waves/executor"
)

// Records lists the rollout records in the backend
// (waves/executor/backend.Store implements it).
type Records interface {
	List(ctx context.Context) ([]*executor.Record, error)
}

// Pin is a cell whose desired image comes from a rollout, not from its
// stack file.
type Pin struct {
	Cell string `json:"cell"`
	// Image is what the rollout shipped and the cell kept.
	Image string `json:"image"`
	// RepoImage is what the repository names (then and now).
	RepoImage string `json:"repoImage"`
	Rollout   string `json:"rollout"`
	// File is the cell's stack file, where the image is committed.
	File string `json:"file"`
	// Release: no rollout shipped to this cell (a new cell); it takes
	// what the fleet's newest complete rollout, Rollout, shipped (release).
	Release bool `json:"release,omitempty"`
}

// Note is the pin for the operator: what runs, why, and how to make the
// repository say so.
func (p Pin) Note() string {
	if p.Release {
		return fmt.Sprintf("%s gets %s, what rollout %s shipped to the fleet; the repository says %s — commit `cells:image: %s` to %s to make the repository say so",
			p.Cell, p.Image, p.Rollout, p.RepoImage, p.Image, p.File)
	}
	return fmt.Sprintf("%s runs %s, shipped by rollout %s; the repository says %s — commit `cells:image: %s` to %s to make the repository say so",
		p.Cell, p.Image, p.Rollout, p.RepoImage, p.Image, p.File)
}

// State is the fleet as it should run.
type State struct {
	// Fleet is the repository's fleet with every pinned cell's image
	// replaced: what up, a rotation, a canary, cell add, retire and
	// deploy ship. The loaded fleet is not changed.
	Fleet *fleet.Fleet
	// Repository is the fleet as loaded from the repository.
	Repository *fleet.Fleet
	// Pins are the cells whose image a rollout decides, by cell id.
	Pins map[string]Pin
}

// Notes are the pins' notes in cell order.
func (s *State) Notes() []string {
	ids := make([]string, 0, len(s.Pins))
	for id := range s.Pins {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = s.Pins[id].Note()
	}
	return out
}

// Load reads the records and resolves the fleet's desired state. A store
// that cannot be read is an error, never "no rollouts": a path that
// ignored it would ship the repository's image over a rollout's.
func Load(ctx context.Context, fl *fleet.Fleet, rs Records) (*State, error) {
	var recs []*executor.Record
	if rs != nil {
		var err error
		if recs, err = rs.List(ctx); err != nil {
			return nil, fmt.Errorf("reading what rollouts shipped (the rollout records in the backend), nothing was changed: %w", err)
		}
	}
	return Resolve(fl, recs), nil
}

// Resolve is the desired state of fl given the rollout records: for each
// cell, the newest record in which the cell's wave passed decides, if
// that rollout shipped another image than the repository named and the
// repository still names that image. A cell rolled back, or in a wave
// that has not passed (pending, baking, halted), keeps looking at older
// records: it runs what it ran before that rollout. A cell no record
// decides (a new cell) takes what the fleet last shipped (release).
func Resolve(fl *fleet.Fleet, recs []*executor.Record) *State {
	st := &State{Fleet: fl, Repository: fl, Pins: map[string]Pin{}}
	recs = newestFirst(recs)
	decided := map[string]bool{}
	for _, r := range recs {
		for _, w := range r.Waves {
			if w.State != executor.WaveDone && w.State != executor.WaveUnchanged {
				continue
			}
			for _, cr := range w.Cells {
				if decided[cr.Cell] || (cr.State != executor.CellStateUpdated && cr.State != executor.CellStateUnchanged) {
					continue
				}
				decided[cr.Cell] = true
				c := fl.Cell(cr.Cell)
				if c == nil || cr.RepoImage == "" || cr.After.Image == c.Image || cr.RepoImage != c.Image {
					// Gone from the fleet; shipped the repository's own
					// image; or the repository moved since: it decides.
					continue
				}
				st.Pins[c.ID] = Pin{Cell: c.ID, Image: cr.After.Image, RepoImage: c.Image, Rollout: r.ID, File: c.File}
			}
		}
	}
	release(st, fl, recs, decided)
	if len(st.Pins) == 0 {
		return st
	}
	copied := *fl
	copied.Cells = make([]*fleet.Cell, len(fl.Cells))
	for i, c := range fl.Cells {
		copied.Cells[i] = c
		if p, ok := st.Pins[c.ID]; ok {
			cc := *c
			cc.Image = p.Image
			copied.Cells[i] = &cc
		}
	}
	st.Fleet = &copied
	return st
}
