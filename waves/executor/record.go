package executor

import "time"

// RolloutState is where a rollout stands.
type RolloutState string

const (
	// Running: a run is driving the rollout (or was, until it crashed).
	Running RolloutState = "running"
	// Paused: stopped after --through/--wave with later waves to go. The
	// rollout keeps the lock, so no other rollout interleaves with it; the
	// next run of the same rollout takes it over.
	Paused RolloutState = "paused"
	// Interrupted: the run stopped on an error or Ctrl-C; rerun to continue.
	Interrupted RolloutState = "interrupted"
	// Abandoned: an operator broke the lock (deploy --abandon); rerunning
	// the same deploy continues it.
	Abandoned RolloutState = "abandoned"
	// HaltedState: a wave breached; the lock is released.
	HaltedState RolloutState = "halted"
	// Complete: every wave passed and the router was updated.
	Complete RolloutState = "complete"
)

// WaveState is where one wave stands.
type WaveState string

const (
	WavePending     WaveState = "pending"
	WaveUpdating    WaveState = "updating"
	WaveBaking      WaveState = "baking"
	WaveDone        WaveState = "passed"
	WaveUnchanged   WaveState = "unchanged"
	WaveRollingBack WaveState = "rolling-back"
	WaveRolledBack  WaveState = "rolled-back"
	// WaveHalted: breached under on_breach: halt, or inconclusive, or a
	// rollback that failed: the cells stay as they are.
	WaveHalted WaveState = "halted"
)

// CellState is where one cell of a wave stands.
type CellState string

const (
	CellPending        CellState = "pending"
	CellStateUpdating  CellState = "updating"
	CellStateUpdated   CellState = "updated"
	CellStateUnchanged CellState = "unchanged"
	CellStateFailed    CellState = "failed"
	CellRollingBack    CellState = "rolling-back"
	CellStateRolled    CellState = "rolled-back"
	CellRollbackFailed CellState = "rollback-failed"
)

// Record is a rollout's durable state, saved after every change so a rerun
// after a crash continues it and `cellctl rollout status` can show it.
type Record struct {
	ID      string       `json:"id"`
	State   RolloutState `json:"state"`
	Holder  Holder       `json:"holder"`
	Started time.Time    `json:"started"`
	Updated time.Time    `json:"updated"`
	Waves   []WaveRecord `json:"waves"`
	// Router is the router step's state: "", "updating", "updated", "failed".
	Router string `json:"router,omitempty"`
	// Halt is why the rollout halted.
	Halt *Breach `json:"halt,omitempty"`
	// Error is the last run's error, when it stopped on one.
	Error string `json:"error,omitempty"`
}

// WaveRecord is one wave's durable state.
type WaveRecord struct {
	Name      string       `json:"name"`
	State     WaveState    `json:"state"`
	Cells     []CellRecord `json:"cells"`
	Started   time.Time    `json:"started,omitzero"`
	BakeStart time.Time    `json:"bakeStart,omitzero"`
	Finished  time.Time    `json:"finished,omitzero"`
	Polls     []Poll       `json:"polls,omitempty"`
	Breach    *Breach      `json:"breach,omitempty"`
	// Reason explains a halt that is not a breach (inconclusive).
	Reason string `json:"reason,omitempty"`
	// History holds earlier attempts of this wave (before a --retry).
	History []WaveRecord `json:"history,omitempty"`
}

// CellRecord is one cell's durable state within its wave.
type CellRecord struct {
	Cell  string    `json:"cell"`
	State CellState `json:"state"`
	// Before is the configuration the cell ran when the wave started, read
	// from the cell (Updater.Current); a rollback redeploys exactly this.
	Before *CellConfig `json:"before,omitempty"`
	// After is the configuration the rollout ships to it.
	After CellConfig `json:"after"`
	// RepoImage is the image the repository named when After ships
	// another one (deploy --image); "" when After is the repository's.
	RepoImage string    `json:"repoImage,omitempty"`
	Error     string    `json:"error,omitempty"`
	Updated   time.Time `json:"updated,omitzero"`
}

// Poll is one reading of the gate during a bake.
type Poll struct {
	At       time.Time `json:"at"`
	Verdicts []Verdict `json:"verdicts"`
	// Error is the gate's read error, if any (counted as a breach).
	Error string `json:"error,omitempty"`
}

// wave returns the record of the wave named name.
func (r *Record) wave(name string) *WaveRecord {
	for i := range r.Waves {
		if r.Waves[i].Name == name {
			return &r.Waves[i]
		}
	}
	return nil
}

// cell returns the record of a cell within the wave.
func (w *WaveRecord) cell(name string) *CellRecord {
	for i := range w.Cells {
		if w.Cells[i].Cell == name {
			return &w.Cells[i]
		}
	}
	return nil
}

// finished reports whether the wave needs no more work in this rollout.
func (w *WaveRecord) passed() bool {
	return w.State == WaveDone || w.State == WaveUnchanged
}
