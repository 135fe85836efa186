package originsecret

import (
	"slices"
	"time"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/waves/executor"
)

// Planned is a rotation's dry run: the steps of the record Run would
// execute (Plan), in order, each with the stacks it deploys and its bake.
type Planned struct {
	ID string `json:"id"`
	// Resumes says the rotation under way is continued (its record
	// exists); otherwise a new one starts.
	Resumes bool          `json:"resumes"`
	Steps   []PlannedStep `json:"steps"`
	// Notes are the plan's changes to the record (a cell that joined a
	// wave since the rotation started runs its step again).
	Notes []string `json:"notes,omitempty"`
}

// PlannedStep is one step of a rotation's plan.
type PlannedStep struct {
	Name string `json:"name"`
	// State is the step's recorded state: done steps are not run again.
	State executor.WaveState `json:"state"`
	Does  string             `json:"does"`
	// Stacks are the stacks the step stores its values in; of those, the
	// deployed ones are deployed (a cell never deployed gets the values
	// for its first up).
	Stacks []string      `json:"stacks"`
	Bake   time.Duration `json:"bake"`
	Poll   time.Duration `json:"poll"`
}

// Pending reports whether the step runs (it is not done).
func (s PlannedStep) Pending() bool { return s.State != executor.WaveDone }

// planOf is the dry run of rec, the record Plan returned: its steps in
// the order Run executes them. resumes says rec is the rotation under way.
func (r *Rotator) planOf(rec *executor.Record, resumes bool, notes []string) *Planned {
	p := &Planned{ID: rec.ID, Resumes: resumes, Notes: notes}
	for _, s := range rec.Steps {
		ps := PlannedStep{Name: s.Name, State: s.State, Does: describe(s), Stacks: slices.Clone(s.Cells)}
		w := r.wave(s.Wave)
		if s.Kind == Switch {
			// The router's bake covers every cell on the first wave's gate.
			ps.Stacks, w = []string{fleet.RouterStack}, r.Waves[0]
		}
		ps.Bake, ps.Poll = w.Bake, w.Gate.Poll
		p.Steps = append(p.Steps, ps)
	}
	return p
}
