package executor

import (
	"context"
	"errors"
	"fmt"
	"github.com/cellctl/cellctl/internal/rollout"
	"time"

	"github.com/cellctl/cellctl/waves"
)

// The executor's dependencies are defined here, where they are used, with
// plain types, so each real implementation needs only a thin adapter and
// each test a one-struct fake.

// Updater changes and reads cells. The deploy command adapts the engine
// seam (an `up` of one cell stack with the configuration given as data).
type Updater interface {
	CurrentReader
	// Apply deploys cfg to the cell and returns when the cell runs it. It
	// must be idempotent: a rerun after a crash applies the same cfg again.
	//
	// An error wrapping ErrNotApplied says the update never started and
	// the cell is unchanged (its stack was locked by another operation):
	// that is not a breach — the wave stops, half-updated and saying so,
	// and a rerun continues it. The error's own type is kept, so the
	// caller still finds e.g. its lock error with errors.As. Any other
	// error is an update failure, a breach of that cell.
	Apply(ctx context.Context, cell string, cfg CellConfig) (ApplyResult, error)
}

// ErrNotApplied marks an Apply error after which the cell is unchanged.
var ErrNotApplied = errors.New("the update did not start")

// CurrentReader reads what cells run; the dry run needs only this.
type CurrentReader interface {
	// Current is the configuration the cell runs now, as last deployed (the
	// stack's recorded inputs), not the repository's files.
	Current(ctx context.Context, cell string) (CellConfig, error)
}

// Settler is optional on an Updater: whether a cell whose deployed
// configuration equals the desired one may be left alone — its stack's
// last operation completed and left nothing pending. A cell whose last
// update failed half-way, or was killed, still reports the configuration
// of its last good update while some resources run another: it is
// updated again, never skipped. why says what is unsettled.
type Settler interface {
	Settled(ctx context.Context, cell string) (ok bool, why string, err error)
}

// ApplyResult is what one cell's update did.
type ApplyResult struct {
	// Changed counts the resources the update created, updated, replaced
	// or deleted.
	Changed int `json:"changed"`
}

// Breach says which cell failed which signal: the reading and the
// threshold it broke, as the operator reads them ("3.2%", "< 0.5%").
type Breach struct {
	Cell      string `json:"cell"`
	Signal    string `json:"signal"`
	Reading   string `json:"reading"`
	Threshold string `json:"threshold,omitempty"`
}

// Signals the executor itself reports (the gate reports the health ones).
const (
	// SignalUpdate: the cell's update failed.
	SignalUpdate = "update"
	// SignalGate: the gate could not be read; failing closed, that breaches.
	SignalGate = "gate"
)

func (b Breach) String() string {
	s := fmt.Sprintf("%s breached %s: %s", b.Cell, b.Signal, b.Reading)
	if b.Threshold != "" {
		s += " (threshold " + b.Threshold + ")"
	}
	return s
}

// Reading is one signal's value in one poll, kept in the record for audit.
type Reading struct {
	Signal    string `json:"signal"`
	Value     string `json:"value"`
	Threshold string `json:"threshold,omitempty"`
	OK        bool   `json:"ok"`
}

// Verdict is the gate's decision on one cell and the readings behind it.
type Verdict struct {
	Cell     string         `json:"cell"`
	Decision waves.Decision `json:"decision"`
	Breach   *Breach        `json:"breach,omitempty"`
	Readings []Reading      `json:"readings,omitempty"`
	// Reason explains an inconclusive verdict ("37 requests < min 100").
	Reason string `json:"reason,omitempty"`
}

// GateQuery asks for the health of a wave's updated cells over the bake so
// far. Wave names the wave so the adapter picks the wave's own gate
// configuration (a per-wave gate overrides the fleet's).
type GateQuery struct {
	Wave  string
	Cells []string
	Start time.Time
	End   time.Time
}

// Gate judges cells while they bake. It must fail closed: a signal it cannot
// read is a breach. An error from Check is treated as a breach of every
// cell queried, never as a pass.
type Gate interface {
	Check(ctx context.Context, q GateQuery) ([]Verdict, error)
}

// Holder identifies the run that holds the fleet lock: the fleet's one
// holder type (internal/rollout), whatever the verb. A rollout holds it
// under its id.
type Holder = rollout.Holder

// ErrNoRecord is what Store.Load returns (possibly wrapped) for a rollout
// that has no record yet.
var ErrNoRecord = errors.New("no rollout record")

// Store keeps rollout records and the fleet's one-rollout lock, in the same
// backend as the stacks so a CI job elsewhere can continue a rollout.
type Store interface {
	// Load returns the record of rollout id, or an error wrapping
	// ErrNoRecord.
	Load(ctx context.Context, id string) (*Record, error)
	// Save writes the record (whole, replacing the previous one).
	Save(ctx context.Context, r *Record) error
	// Lock takes the lock for h, or returns a *LockedError naming the
	// current holder. Taking it must be atomic (create-if-absent).
	Lock(ctx context.Context, h Holder) error
	// Unlock releases the lock if h holds it; otherwise it does nothing.
	Unlock(ctx context.Context, h Holder) error
	// BreakLock removes the lock only if it is still held by exactly held
	// (so two runs taking over the same stale lock cannot both win).
	BreakLock(ctx context.Context, held Holder) error
}

// Clock is time, injected so bakes and polls run in milliseconds in tests.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time                         { return time.Now() }
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// EventKind is a step of a rollout, for live progress.
type EventKind string

const (
	RolloutStarted  EventKind = "rollout-started"
	RolloutResumed  EventKind = "rollout-resumed"
	WaveStarted     EventKind = "wave-started"
	WaveSkipped     EventKind = "wave-skipped"
	CellMigrating   EventKind = "cell-migrating"
	CellMigrated    EventKind = "cell-migrated"
	CellUpdating    EventKind = "cell-updating"
	CellUpdated     EventKind = "cell-updated"
	CellUnchanged   EventKind = "cell-unchanged"
	CellFailed      EventKind = "cell-failed"
	Baking          EventKind = "baking"
	WavePassed      EventKind = "wave-passed"
	WaveBreached    EventKind = "wave-breached"
	RollingBack     EventKind = "rolling-back"
	CellRolledBack  EventKind = "cell-rolled-back"
	RolledBack      EventKind = "rolled-back"
	RouterUpdating  EventKind = "router-updating"
	RouterUpdated   EventKind = "router-updated"
	RolloutPaused   EventKind = "rollout-paused"
	RolloutComplete EventKind = "rollout-complete"
	// RolloutAborted: an operator's abort rolled every changed wave back.
	RolloutAborted EventKind = "rollout-aborted"
	// WaveWaitingApproval: a wave with approve: true waits for
	// `cellctl rollout approve`.
	WaveWaitingApproval EventKind = "wave-waiting-approval"
	Note                EventKind = "note"
)

// Event is one step of progress. Fields not relevant to the kind are zero.
type Event struct {
	Kind EventKind
	At   time.Time
	Wave string
	Cell string
	// Left is the bake time remaining (Baking).
	Left time.Duration
	// Verdicts are the last poll's readings (Baking, WaveBreached).
	Verdicts []Verdict
	Breach   *Breach
	Err      error
	// Message is a sentence for the operator ("wave-2 was mid-update when
	// the last run stopped: re-applying").
	Message string
}

// Progress receives events. Calls come from several goroutines (a wave's
// cells update in parallel); an implementation must be safe for that.
type Progress interface {
	Event(Event)
}

// ProgressFunc adapts a function to Progress.
type ProgressFunc func(Event)

func (f ProgressFunc) Event(e Event) { f(e) }
