package deploy

import (
	"fmt"
	"strings"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/waves/executor"
)

// Undo is what `cellctl rollout undo` (`deploy --to-previous`) ships:
// the images a completed rollout shipped, per cell, as a new gated
// rollout through the waves.
type Undo struct {
	// From is the completed rollout whose images ship again.
	From string
	// Images is each cell's image in From.
	Images map[string]string
}

// Previous finds what an undo ships from the fleet's records: the
// completed rollout before the latest completed one, or rollout to when
// named (which must be a completed rollout). recs are in any order.
func Previous(recs []*executor.Record, to string) (*Undo, error) {
	var done []*executor.Record
	for _, r := range executor.NewestFirst(append([]*executor.Record(nil), recs...)) {
		if r.IsRollout() && r.State == executor.Complete {
			done = append(done, r)
		}
	}
	var from *executor.Record
	switch {
	case to != "":
		for _, r := range recs {
			if r.ID == to {
				from = r
			}
		}
		if from == nil {
			return nil, fmt.Errorf("--to %s: no such rollout in this backend (`cellctl rollout history` lists them)", to)
		}
		if !from.IsRollout() || from.State != executor.Complete {
			return nil, fmt.Errorf("--to %s: it is a %s %s, not a completed rollout: only what a rollout shipped whole can ship again", to, from.State, from.Kind)
		}
	case len(done) < 2:
		return nil, fmt.Errorf("nothing to undo: the backend records %d completed rollout(s), and undo ships the one before the latest (`cellctl rollout history`; --to ID names one)", len(done))
	default:
		from = done[1]
	}
	u := &Undo{From: from.ID, Images: map[string]string{}}
	for _, w := range from.Waves {
		for _, c := range w.Cells {
			if c.After.Image != "" {
				u.Images[c.Cell] = c.After.Image
			}
		}
	}
	return u, nil
}

// check refuses an undo that cannot ship what From shipped: a cell whose
// other settings have changed since (the repository's commit is what
// ships settings: revert it there), so that what ships is exactly From's
// configuration. desired is every cell's configuration now, from plans.
func (u *Undo) check(from *executor.Record, desired map[string]executor.CellConfig) error {
	var diffs []string
	for _, w := range from.Waves {
		for _, c := range w.Cells {
			now, ok := desired[c.Cell]
			if !ok {
				continue
			}
			was := c.After.Clone()
			was.Image = now.Image
			for _, ch := range executor.Diff(was, now) {
				diffs = append(diffs, fmt.Sprintf("%s %s: %s then, %s now", c.Cell, ch.Key, orNone(ch.Old), orNone(ch.New)))
			}
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("undo ships images; rollout %s shipped other settings than the repository says now, so shipping its images would not be its configuration:\n  %s\nrevert those settings in the repository (git revert) and deploy, or ship an image with `cellctl deploy --image`",
			u.From, strings.Join(diffs, "\n  "))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// withImages is fl with each cell in images given that image.
func withImages(fl *fleet.Fleet, images map[string]string) *fleet.Fleet {
	out := *fl
	out.Cells = make([]*fleet.Cell, len(fl.Cells))
	for i, c := range fl.Cells {
		cc := *c
		if img, ok := images[c.ID]; ok {
			cc.Image = img
		}
		out.Cells[i] = &cc
	}
	return &out
}
