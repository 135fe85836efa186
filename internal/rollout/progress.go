package rollout

import (
	"fmt"
	"strings"
	"time"

	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/signal"
)

// New starts the record of a rollout of plan: every wave and cell pending,
// each wave's gate written down as it is now (thresholds per cell, from
// spec.Cell.Thresholds) so the record explains its decisions even after
// waves.yaml changes.
func New(id string, plan *waves.Plan, holder Holder, thresholds func(cell string) signal.Thresholds) *Record {
	r := &Record{ID: id, State: Running, Holder: holder, Created: holder.Started}
	for _, w := range plan.Waves {
		rw := Wave{Name: w.Name, Bake: w.Bake, State: WavePending, Gate: GateSummary{
			Thresholds: map[string]string{}, MinRequests: w.Gate.MinRequests, Poll: w.Gate.Poll,
			OnBreach: string(w.Gate.OnBreach), OnInconclusive: string(w.Gate.OnInconclusive),
		}}
		for _, c := range w.Cells {
			rw.Cells = append(rw.Cells, Cell{ID: c, State: CellPending})
			if thresholds != nil {
				rw.Gate.Thresholds[c] = thresholds(c).String()
			}
		}
		r.Waves = append(r.Waves, rw)
	}
	return r
}

// finished reports whether a wave needs nothing more in this rollout.
func (w *Wave) finished() bool { return w.State == WavePassed || w.State == WaveUnchanged }

// NextWave is the index of the first wave that has not passed, -1 when
// every wave has. A rerun continues there and never re-bakes a passed wave
// (unless the operator asks for --rebake).
func (r *Record) NextWave() int {
	for i := range r.Waves {
		if !r.Waves[i].finished() {
			return i
		}
	}
	return -1
}

// CanRunWave refuses `deploy --wave NAME` unless every earlier wave of this
// rollout passed (or had nothing to change).
func (r *Record) CanRunWave(name string) error {
	if r.Wave(name) == nil {
		return fmt.Errorf("rollout %s has no wave %q (its waves: %s)", r.ID, name, strings.Join(r.waveNames(), ", "))
	}
	for i := range r.Waves {
		w := &r.Waves[i]
		if w.Name == name {
			return nil
		}
		if !w.finished() {
			return fmt.Errorf("wave %q cannot run before wave %q of rollout %s has passed (it is %s): run `cellctl deploy --wave %s` first",
				name, w.Name, r.ID, w.State, w.Name)
		}
	}
	return nil
}

func (r *Record) waveNames() []string {
	out := make([]string, len(r.Waves))
	for i, w := range r.Waves {
		out[i] = w.Name
	}
	return out
}

// Interrupted lists the cells a crash left in the middle of a change
// (updating or rolling back): the rerun must say so and finish them first.
func (r *Record) Interrupted() []string {
	var out []string
	for _, w := range r.Waves {
		for _, c := range w.Cells {
			if c.State == CellUpdating || c.State == CellRollingBack {
				out = append(out, c.ID)
			}
		}
	}
	return out
}

// SetCell moves a cell to a state, stamping its start and end.
func (r *Record) SetCell(id string, st CellState, now time.Time) error {
	c, _ := r.Cell(id)
	if c == nil {
		return fmt.Errorf("rollout %s has no cell %q", r.ID, id)
	}
	now = now.UTC()
	c.State = st
	switch st {
	case CellUpdating, CellRollingBack:
		if c.Started == nil {
			c.Started = &now
		}
	case CellPassed, CellRolledBack, CellUnchanged, CellUntouched, CellBreached:
		c.Ended = &now
	}
	return nil
}

// Row is one line of the table every run ends with: which cell runs what.
type Row struct {
	Cell  string    `json:"cell"`
	Wave  string    `json:"wave"`
	Image string    `json:"image"`
	State CellState `json:"state"`
}

// Rows says, per cell, which image it runs now by its state: the new one
// once updated, the recorded one when rolled back, never started or
// unchanged. project is the config namespace of the image key.
func (r *Record) Rows(project string) []Row {
	var out []Row
	for _, w := range r.Waves {
		for _, c := range w.Cells {
			img := c.Before.Image(project)
			switch c.State {
			case CellUpdating, CellBaking, CellPassed, CellBreached, CellRollingBack:
				// Mid-change cells show where they were headed; the
				// state column says they are not settled.
				img = c.After.Image(project)
			case CellUnchanged:
				if img == "" {
					img = c.After.Image(project)
				}
			}
			out = append(out, Row{Cell: c.ID, Wave: w.Name, Image: img, State: c.State})
		}
	}
	return out
}
