package desired

import (
	"slices"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/waves/executor"
)

// release pins the cells no record decides — a cell `cell add` is
// creating, or one added since the last rollout — to what the fleet last
// shipped: the image the newest complete rollout (every wave passed, the
// router updated) kept over the same repository image as the cell's. A
// new cell then joins the fleet on the release its siblings run, as a
// deploy would have given it had it been in a wave; without that it would
// start on the repository's older image while the fleet serves the
// newer one. A cell whose stack file names another image than that
// rollout recorded (a commit since, or its own override) follows its file.
func release(st *State, fl *fleet.Fleet, recs []*executor.Record, decided map[string]bool) {
	// recs are newest first (Resolve sorted them).
	i := slices.IndexFunc(recs, func(r *executor.Record) bool {
		return r != nil && r.IsRollout() && r.State == executor.Complete
	})
	if i < 0 {
		return
	}
	newest := recs[i]
	// The images the rollout kept, by the repository image they replaced.
	shipped := map[string]string{}
	for _, w := range newest.Waves {
		if !kept(w) {
			continue
		}
		for _, cr := range w.Cells {
			if p, ok := st.Pins[cr.Cell]; ok && p.Halted != nil {
				// Held by a halt (found unchanged): not a release.
				continue
			}
			if keptCell(cr) && cr.RepoImage != "" && cr.After.Image != cr.RepoImage {
				if _, ok := shipped[cr.RepoImage]; !ok {
					shipped[cr.RepoImage] = cr.After.Image
				}
			}
		}
	}
	// A cell that rollout reached and did not keep (pending, rolled back)
	// is not new: it runs what it ran before, as Resolve decided.
	reached := map[string]bool{}
	for _, w := range newest.Waves {
		for _, cr := range w.Cells {
			reached[cr.Cell] = true
		}
	}
	for _, c := range fl.Cells {
		if decided[c.ID] || reached[c.ID] {
			continue
		}
		if img, ok := shipped[c.Image]; ok {
			st.Pins[c.ID] = Pin{Cell: c.ID, Image: img, RepoImage: c.Image, Rollout: newest.ID, File: c.File, Release: true}
		}
	}
}
