package executor

import (
	"context"
	"fmt"
	"github.com/cellctl/cellctl/waves"
	"time"

	"github.com/hashicorp/go-multierror"
	"golang.org/x/sync/errgroup"
)

// Description is the dry run of a plan: what each wave would change, how
// long it bakes, what gate it must pass, how much traffic it exposes and
// how long the rollout should take. It changes nothing.
type Description struct {
	ID    string            `json:"id"`
	Waves []WaveDescription `json:"waves"`
	// Expected is the expected wall time of the whole rollout.
	Expected time.Duration `json:"expected"`
}

// WaveDescription is one wave of the dry run.
type WaveDescription struct {
	Name           string                   `json:"name"`
	Cells          []CellDescription        `json:"cells"`
	Bake           time.Duration            `json:"bake"`
	Delay          time.Duration            `json:"delay,omitempty"`
	Poll           time.Duration            `json:"poll"`
	MaxParallel    int                      `json:"maxParallel,omitempty"`
	Gate           string                   `json:"gate,omitempty"`
	OnBreach       waves.BreachPolicy       `json:"onBreach"`
	OnInconclusive waves.InconclusivePolicy `json:"onInconclusive"`
	// Exposure is the wave's own share; Cumulative adds every wave up to
	// this one (nil when the plan carries no exposure).
	Exposure   *Exposure `json:"exposure,omitempty"`
	Cumulative *Exposure `json:"cumulative,omitempty"`
	// Changed counts the cells that change (the others do not bake).
	Changed int `json:"changed"`
	// Expected is the wave's expected wall time: its update rounds
	// (⌈changed / max_parallel⌉ × the update estimate) plus its bake and
	// delay; 0
	// when nothing changes.
	Expected time.Duration `json:"expected"`
}

// CellDescription is what one cell would get.
type CellDescription struct {
	Cell      string   `json:"cell"`
	Unchanged bool     `json:"unchanged"`
	Changes   []Change `json:"changes,omitempty"`
	// Resources are the resource changes a preview of the cell's update
	// plans (nil when no preview was run, e.g. in tests with fakes).
	Resources []ResourceChange `json:"resources,omitempty"`
	// Migration is the schema migration the update runs before the
	// service moves (nil: none).
	Migration *MigrationPlan `json:"migration,omitempty"`
	// Bootstrap is when and why the update puts the cell's database
	// users in place (nil: it does not).
	Bootstrap *BootstrapPlan `json:"bootstrap,omitempty"`
	// Error says why the cell's current configuration could not be read,
	// or its preview failed.
	Error string `json:"error,omitempty"`
}

// ResourceChange is one resource a preview says the update changes: the
// operation, the resource and the properties that differ.
type ResourceChange struct {
	Op    string   `json:"op"`
	Type  string   `json:"type"`
	Name  string   `json:"name"`
	Diffs []string `json:"diffs,omitempty"`
	// Replace lists the properties forcing a replacement.
	Replace []string `json:"replaceKeys,omitempty"`
	// Warning says what a replacement or delete of a stateful resource loses.
	Warning string `json:"warning,omitempty"`
}

// Describe builds the dry run, reading each cell's current configuration
// through u. updateEstimate is how long one cell's update is expected to
// take (from past runs, or a rule of thumb). A cell that cannot be read is
// described with its error, and Describe also returns the errors: a plan
// that cannot be checked is not a plan to approve. m, when not nil, says
// which cells' updates run a schema migration first; b, when not nil,
// which put their database users in place, as the run does (before a
// migration only when one runs).
func Describe(ctx context.Context, u CurrentReader, m Migrator, b Bootstrapper, plan Plan, updateEstimate time.Duration) (*Description, error) {
	if err := plan.Validate(); err != nil {
		return nil, fmt.Errorf("invalid rollout plan: %w", err)
	}
	d := &Description{ID: plan.ID()}
	var cum Exposure
	haveExposure := true
	var errs *multierror.Error
	for _, w := range plan.Waves {
		wd := WaveDescription{Name: w.Name, Bake: w.Bake, Delay: w.Delay, Poll: w.Gate.Poll, MaxParallel: w.Parallel, Gate: w.Gate.Describe(),
			OnBreach: w.Gate.OnBreach, OnInconclusive: w.Gate.OnInconclusive, Exposure: plan.exposure(w.Name)}
		wd.Cells = make([]CellDescription, len(w.Cells))
		var g errgroup.Group
		for j, c := range w.Cells {
			g.Go(func() error {
				cd := CellDescription{Cell: c}
				cur, err := u.Current(ctx, c)
				if err != nil {
					cd.Error = err.Error()
				} else {
					cd.Changes = Diff(cur, plan.Desired[c])
					cd.Unchanged = cur.Equal(plan.Desired[c])
					req := MigrationRequest{Cell: c, From: cur, To: plan.Desired[c]}
					if m != nil && !cd.Unchanged {
						if p := m.Plan(req); !p.None() {
							cd.Migration = &p
						}
					}
					if b != nil && !cd.Unchanged {
						if p := b.Plan(req); !p.None() && (p.AfterUpdate || cd.Migration != nil) {
							cd.Bootstrap = &p
						}
					}
				}
				wd.Cells[j] = cd
				return nil
			})
		}
		_ = g.Wait()
		for _, cd := range wd.Cells {
			switch {
			case cd.Error != "":
				errs = multierror.Append(errs, fmt.Errorf("cell %s: %s", cd.Cell, cd.Error))
				wd.Changed++ // unknown counts as a change: never promise less work than there is
			case !cd.Unchanged:
				wd.Changed++
			}
		}
		if wd.Changed > 0 {
			per := wd.Changed
			if w.Parallel > 0 {
				per = w.Parallel
			}
			rounds := (wd.Changed + per - 1) / per
			wd.Expected = w.Delay + time.Duration(rounds)*updateEstimate + w.Bake
		}
		d.Expected += wd.Expected
		if wd.Exposure == nil {
			haveExposure = false
		}
		if haveExposure {
			cum.Buckets = min(cum.Buckets+wd.Exposure.Buckets, 1)
			cum.Pinned = min(cum.Pinned+wd.Exposure.Pinned, 1)
			c := cum
			wd.Cumulative = &c
		}
		d.Waves = append(d.Waves, wd)
	}
	return d, errs.ErrorOrNil()
}
