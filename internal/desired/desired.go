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
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/waves/executor"
)

// Records lists the rollout records in the backend
// (internal/adapters/backend.Store implements it).
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
	// Halted: the cell's wave of Rollout halted without rolling it back,
	// so it runs Image although no gate passed it. Every verb keeps it
	// there — shipping the older image would be a rollback no gate asked
	// for — until an operator resolves the halt; it is never the fleet's
	// release.
	Halted *Halt `json:"halted,omitempty"`
}

// Halt is why a halted wave holds a cell on what it shipped.
type Halt struct {
	Wave string `json:"wave"`
	// Why is the halt's reason: the gate's inconclusive reading, or the
	// breach under on_breach: halt.
	Why string `json:"why"`
	// Before is the image the cell ran before the wave ("" unknown).
	Before string `json:"before,omitempty"`
}

// Note is the pin for the operator: what runs, why, and how to make the
// repository say so.
func (p Pin) Note() string {
	if p.Release {
		return fmt.Sprintf("%s gets %s, what rollout %s shipped to the fleet; the repository says %s — commit `cells:image: %s` to %s to make the repository say so",
			p.Cell, p.Image, p.Rollout, p.RepoImage, p.Image, p.File)
	}
	return p.note(p.Cell, "runs", p.File)
}

// note says what cells (one, or several sharing the pin) run and why;
// where is the file that would say so.
func (p Pin) note(cells, run, where string) string {
	if h := p.Halted; h != nil {
		// Not "commit it": the gate has not passed the image.
		return fmt.Sprintf("%s %s %s, shipped by rollout %s, whose wave %s halted without a rollback (%s); the repository says %s. Every verb keeps it until the halt is resolved: %s",
			cells, run, p.Image, p.Rollout, h.Wave, h.Why, p.RepoImage, p.Resolve())
	}
	return fmt.Sprintf("%s %s %s, shipped by rollout %s; the repository says %s — commit `cells:image: %s` to %s to make the repository say so",
		cells, run, p.Image, p.Rollout, p.RepoImage, p.Image, where)
}

// Resolve is the way out of a held pin's halt (Halted; "" for another
// pin): bake the wave again, or go back through the gate.
func (p Pin) Resolve() string {
	h := p.Halted
	if h == nil {
		return ""
	}
	back := "`cellctl deploy --image …` with the image it ran before"
	if h.Before != "" {
		back = fmt.Sprintf("`cellctl deploy --image %s`", h.Before)
	}
	return fmt.Sprintf("`cellctl deploy --image %s --retry` bakes wave %s again and continues the rollout, or %s ships the image it ran before through the gate (`cellctl rollout status %s` shows the readings)",
		p.Image, h.Wave, back, p.Rollout)
}

// State is the fleet as it should run.
type State struct {
	// Fleet is the repository's fleet with every pinned cell's image
	// replaced: what up, a rotation, a canary, cell add, retire and
	// deploy ship. Its Baseline.Image is the fleet's release (Release) when
	// a rollout shipped one. The loaded fleet is not changed.
	Fleet *fleet.Fleet
	// Repository is the fleet as loaded from the repository.
	Repository *fleet.Fleet
	// Pins are the cells whose image a rollout decides, by cell id.
	Pins map[string]Pin
	// Release is the pin of the fleet's baseline image (Cell ""), nil when
	// the repository's baseline decides: the image the newest rollout
	// shipped and kept in a cell that takes its image from the baseline.
	// The skew audit compares the cells with it: a cell that release did
	// not reach runs another image than the fleet.
	Release *Pin
	// Schemas is each cell's database schema as the records tell it.
	Schemas map[string]Schema
}

// Notes are the pins for the operator, one line per rollout and image
// (cells that share a pin are named together), in cell order.
func (s *State) Notes() []string {
	type group struct {
		pin   Pin
		cells []string
		files []string
	}
	var groups []*group
	for _, c := range s.Repository.Cells {
		p, ok := s.Pins[c.ID]
		if !ok {
			continue
		}
		i := slices.IndexFunc(groups, func(g *group) bool {
			return g.pin.Image == p.Image && g.pin.Rollout == p.Rollout && g.pin.RepoImage == p.RepoImage &&
				(g.pin.Halted == nil) == (p.Halted == nil) && (p.Halted == nil || *g.pin.Halted == *p.Halted)
		})
		if i < 0 {
			groups = append(groups, &group{pin: p})
			i = len(groups) - 1
		}
		groups[i].cells = append(groups[i].cells, c.ID)
		groups[i].files = append(groups[i].files, p.File)
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		if len(g.cells) == 1 {
			out[i] = g.pin.Note()
			continue
		}
		where := strings.Join(g.files, ", ")
		if s.inheritsAll(g.cells) {
			// Every cell that takes its image from Pulumi.yaml runs it:
			// one line there says it for all of them.
			where = fleet.ProjectFile
		}
		out[i] = g.pin.note(strings.Join(g.cells, ", "), "run", where)
	}
	return out
}

// inheritsAll reports whether cells are exactly the cells whose image is
// the baseline's (their stack files set none), so committing the image to
// the project file moves no other cell.
func (s *State) inheritsAll(cells []string) bool {
	fl := s.Repository
	key := fl.ConfigKey("image")
	for _, c := range fl.Cells {
		if _, set := c.Lines[key]; set {
			if slices.Contains(cells, c.ID) {
				return false
			}
			continue
		}
		if !slices.Contains(cells, c.ID) {
			return false
		}
	}
	return true
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
// cell, the newest record whose wave left the cell on what it shipped
// decides, if that rollout shipped another image than the repository
// named and the repository still names that image. A wave leaves its
// cells on what it shipped when it passed (kept), and when it halted
// without rolling them back (held: the gate was inconclusive, or breached
// under on_breach: halt) — the cell runs the new image, and shipping the
// older one would be a rollback no gate decided. A held cell is never the
// fleet's release, and its note says how to resolve the halt. A cell
// rolled back, or in a wave that has not finished (pending, baking), keeps
// looking at older records: it runs what it ran before that rollout. A
// cell no record decides (a new cell) takes what the fleet last shipped
// (release).
func Resolve(fl *fleet.Fleet, recs []*executor.Record) *State {
	st := &State{Fleet: fl, Repository: fl, Pins: map[string]Pin{}}
	recs = executor.NewestFirst(slices.Clone(recs))
	decided := map[string]bool{}
	for i, r := range recs {
		for _, w := range r.Waves {
			for _, cr := range w.Cells {
				if decided[cr.Cell] || !runs(w, cr) {
					continue
				}
				decided[cr.Cell] = true
				c := fl.Cell(cr.Cell)
				if c == nil || cr.RepoImage == "" || cr.After.Image == c.Image || cr.RepoImage != c.Image {
					// Gone from the fleet; shipped the repository's own
					// image; or the repository moved since: it decides.
					continue
				}
				p := Pin{Cell: c.ID, Image: cr.After.Image, RepoImage: c.Image, Rollout: r.ID, File: c.File, Halted: hold(w, cr)}
				if cr.State == executor.CellStateUnchanged {
					// The rollout found the cell on the image already and
					// baked nothing: a halt that put it there still holds
					// it (an ungated no-op is not a release).
					if hr, h := heldBefore(recs[i+1:], cr); h != nil {
						p.Rollout, p.Halted = hr, h
					}
				}
				st.Pins[c.ID] = p
				if st.Release == nil && p.Halted == nil && inherits(fl, c) {
					// recs are newest first: the first such pin is the
					// fleet's last shipped release.
					st.Release = &Pin{Image: cr.After.Image, RepoImage: c.Image, Rollout: r.ID, File: fleet.ProjectFile}
				}
			}
		}
	}
	// A cell no record decides joins on the release its siblings run.
	release(st, fl, recs, decided)
	if len(st.Pins) > 0 || st.Release != nil {
		st.Fleet = pinned(fl, st)
	}
	// Judged on the desired images: a cell's schema is compared with what
	// cells that should run its image report.
	st.Schemas = schemas(st.Fleet, recs)
	return st
}

// pinned is fl with the pinned images and release in a copy.
func pinned(fl *fleet.Fleet, st *State) *fleet.Fleet {
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
	if st.Release != nil {
		copied.Baseline.Image = st.Release.Image
	}
	return &copied
}

// kept reports whether a wave's cells keep what it shipped (it passed).
func kept(w executor.WaveRecord) bool {
	return w.State == executor.WaveDone || w.State == executor.WaveUnchanged
}

// keptCell reports whether a cell of a kept wave runs what it shipped.
func keptCell(cr executor.CellRecord) bool {
	return cr.State == executor.CellStateUpdated || cr.State == executor.CellStateUnchanged
}

// runs reports whether a wave left the cell on what it shipped: kept, or
// held by a halt (hold).
func runs(w executor.WaveRecord, cr executor.CellRecord) bool {
	return kept(w) && keptCell(cr) || hold(w, cr) != nil
}

// hold is why a wave that halted without a rollback holds the cell on
// what it shipped (its update finished); nil when it does not.
func hold(w executor.WaveRecord, cr executor.CellRecord) *Halt {
	if w.State != executor.WaveHalted || cr.State != executor.CellStateUpdated {
		return nil
	}
	h := &Halt{Wave: w.Name, Why: "no reason recorded"}
	switch {
	case w.Breach != nil:
		h.Why = "breached under on_breach: halt: " + w.Breach.String()
	case w.Reason != "":
		h.Why = "inconclusive: " + w.Reason
	}
	if cr.Before != nil && cr.Before.Image != cr.After.Image {
		h.Before = cr.Before.Image
	}
	return h
}

// heldBefore finds, in older records (newest first), the rollout that put
// the cell on the image an unchanged cell record found, when that was a
// held wave: ("", nil) when a passed wave put it there.
func heldBefore(older []*executor.Record, found executor.CellRecord) (string, *Halt) {
	for _, r := range older {
		for _, w := range r.Waves {
			for _, cr := range w.Cells {
				if cr.Cell != found.Cell || !runs(w, cr) || cr.State == executor.CellStateUnchanged {
					continue
				}
				if h := hold(w, cr); h != nil && cr.After.Image == found.After.Image {
					return r.ID, h
				}
				return "", nil
			}
		}
	}
	return "", nil
}

// inherits reports whether a cell takes its image from the baseline (its
// stack file sets none).
func inherits(fl *fleet.Fleet, c *fleet.Cell) bool {
	_, set := c.Lines[fl.ConfigKey("image")]
	return !set && c.Image == fl.Baseline.Image
}
