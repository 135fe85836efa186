package executor

import (
	"sort"
	"time"

	"github.com/cellctl/cellctl/waves"
)

// Kind is what a record's change is. Waves, the router canary and the
// secret rotation are step kinds of the one gated-change machine: one
// record type (Record), saved in one store (the rollout backend), under
// one holder (the fleet lock's), judged by one bake loop (Baker) in one
// verdict vocabulary (waves.Decision).
type Kind string

const (
	// KindRollout: a deploy's waves (and its router step). Records older
	// cellctl wrote have no kind: they are rollouts.
	KindRollout Kind = "rollout"
	// KindCanary: `cellctl router canary` on its own (Record.Canary).
	KindCanary Kind = "router-canary"
	// KindRotation: `cellctl secret rotate` (Record.Steps).
	KindRotation Kind = "secret-rotation"
	// KindCellAdd: `cellctl cell add`'s new cell — one passed wave of that
	// one cell, with the image it was given and its schema migration — so
	// the desired state, status and drift read a new cell's image and
	// schema where they read every other cell's.
	KindCellAdd Kind = "cell-add"
)

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
	// Waiting: a wave with `approve: true` waits for `cellctl rollout
	// approve` before its cells change. The rollout keeps the lock.
	Waiting RolloutState = "waiting"
	// Aborted: an operator aborted it (`cellctl rollout abort`): every
	// wave that changed a cell was rolled back, last first, and the lock
	// released. Rerunning the same deploy is refused; --retry starts it
	// again from its first wave.
	Aborted RolloutState = "aborted"
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
	// WaveWaiting: the wave (approve: true) waits for an operator's
	// approval; none of its cells has changed.
	WaveWaiting WaveState = "waiting"
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
	ID string `json:"id"`
	// Kind is the change's kind ("" in a rollout an older cellctl wrote).
	Kind    Kind         `json:"kind,omitempty"`
	State   RolloutState `json:"state"`
	Holder  Holder       `json:"holder"`
	Started time.Time    `json:"started"`
	Updated time.Time    `json:"updated"`
	Waves   []WaveRecord `json:"waves"`
	// Router is the router step's state: "", "updating", "updated",
	// "unchanged" (nothing to ship: no engine run), "failed".
	Router string `json:"router,omitempty"`
	// Canary is the router canary: a canary record's change, or a
	// rollout's router step (which ships the router through it).
	Canary *CanaryRecord `json:"canary,omitempty"`
	// Steps are a rotation's steps (accept, switch, drop), in order.
	Steps []StepRecord `json:"steps,omitempty"`
	// Origin is what a rotation ships, as digests: the one thing a
	// checkout's stack files are compared with before anything ships the
	// origin-verify secret (internal/apply), so a checkout older than the
	// rotation cannot put the old value back.
	Origin *OriginDigests `json:"origin,omitempty"`
	// Notes are what runs noticed (a resume, a recovered value).
	Notes []string `json:"notes,omitempty"`
	// Finished is when the change completed.
	Finished time.Time `json:"finished,omitzero"`
	// Halt is why the rollout halted.
	Halt *Breach `json:"halt,omitempty"`
	// Error is the last run's error, when it stopped on one.
	Error string `json:"error,omitempty"`
	// Paused is who paused the rollout, and when (`cellctl rollout
	// pause`); nil once resumed. While set, only `cellctl rollout resume`
	// continues it.
	Paused *Ask `json:"paused,omitempty"`
	// BakeScale is the rehearsal's --bake-scale the rollout runs with (0:
	// none; the simulated cloud only): its id depends on it, so whatever
	// continues the rollout passes it again.
	BakeScale float64 `json:"bakeScale,omitempty"`
	// Aborted is who aborted it, and when (`cellctl rollout abort`): set
	// before the first rollback, so a run killed mid-abort is finished by
	// the next `rollout abort` (or rerun) rather than continued.
	Aborted *Ask `json:"aborted,omitempty"`
}

// Ask is an operator's steering of a change: who (user@host) and when.
type Ask struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// WaveRecord is one wave's durable state.
type WaveRecord struct {
	Name      string       `json:"name"`
	State     WaveState    `json:"state"`
	Cells     []CellRecord `json:"cells"`
	Started   time.Time    `json:"started,omitzero"`
	BakeStart time.Time    `json:"bakeStart,omitzero"`
	// DelayUntil is when the wave's delay ends (a wave with a delay only);
	// its cells are not touched before.
	DelayUntil time.Time `json:"delayUntil,omitzero"`
	Finished   time.Time `json:"finished,omitzero"`
	Polls      []Poll    `json:"polls,omitempty"`
	Breach     *Breach   `json:"breach,omitempty"`
	// Reason explains a halt that is not a breach (inconclusive).
	Reason string `json:"reason,omitempty"`
	// SchemaCheck is the poll window the gate keeps reading the cells
	// after a rollback that left a migration's schema under the old image
	// (expand/contract: the old image must run on the new schema).
	SchemaCheck *StepRecord `json:"schemaCheck,omitempty"`
	// Approval is who approved the wave, and when (a wave with approve:
	// true starts only once it is set).
	Approval *Ask `json:"approval,omitempty"`
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
	RepoImage string `json:"repoImage,omitempty"`
	// Migration is the cell's schema migration in this wave (nil: none
	// ran); RollbackMigration its rollback command's, on a rollback.
	Migration         *Migration `json:"migration,omitempty"`
	RollbackMigration *Migration `json:"rollbackMigration,omitempty"`
	Error             string     `json:"error,omitempty"`
	Updated           time.Time  `json:"updated,omitzero"`
}

// Poll is one reading of the gate during a bake.
type Poll struct {
	At       time.Time `json:"at"`
	Verdicts []Verdict `json:"verdicts"`
	// Error is the gate's read error, if any (counted as a breach).
	Error string `json:"error,omitempty"`
}

// IsRollout reports whether the record is a deploy's rollout (waves).
func (r *Record) IsRollout() bool { return r.Kind == "" || r.Kind == KindRollout }

// Unfinished reports whether the change still has work to do: it is not
// complete and has not halted (a paused, interrupted, abandoned or
// running record continues when its command runs again).
func (r *Record) Unfinished() bool {
	return r.State != Complete && r.State != HaltedState && r.State != Aborted
}

// NewestFirst sorts records newest first (by start), in place, and
// returns them: the order a Store's listing gives, which every reader of
// the fleet's records (the desired state, the schema target) relies on.
func NewestFirst(recs []*Record) []*Record {
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Started.After(recs[j].Started) })
	return recs
}

// Newest is the record of kind that started last (nil: none), by the same
// order as NewestFirst, without sorting recs.
func Newest(recs []*Record, kind Kind) *Record {
	var newest *Record
	for _, r := range recs {
		if r.Kind == kind && (newest == nil || r.Started.After(newest.Started)) {
			newest = r
		}
	}
	return newest
}

// Step returns the step named name, or nil.
func (r *Record) Step(name string) *StepRecord {
	for i := range r.Steps {
		if r.Steps[i].Name == name {
			return &r.Steps[i]
		}
	}
	return nil
}

// StepRecord is one gated step that is not a wave of cells: a rotation's
// accept, switch or drop, a canary's header or weight phase. Its states
// are the waves' (pending, updating, baking, passed, halted, rolled-back)
// and its polls the bake loop's.
type StepRecord struct {
	Name string `json:"name"`
	// Kind names what the step does (the machine that runs it decides).
	Kind      string    `json:"kind"`
	Wave      string    `json:"wave,omitempty"`
	Cells     []string  `json:"cells,omitempty"`
	State     WaveState `json:"state"`
	Started   time.Time `json:"started,omitzero"`
	BakeStart time.Time `json:"bakeStart,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
	Polls     []Poll    `json:"polls,omitempty"`
	// Decision is the bake's: pass, breach or inconclusive.
	Decision waves.Decision `json:"decision,omitempty"`
	Breach   *Breach        `json:"breach,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Error    string         `json:"error,omitempty"`
}

// A rotation's step kinds (internal/originsecret runs them; the apply
// path reads them to judge what a stack may ship while one is under way).
const (
	// RotationAccept: a wave's cells accept the current and the next value.
	RotationAccept = "accept"
	// RotationSwitch: the router's origins send the next value.
	RotationSwitch = "switch"
	// RotationDrop: a wave's cells accept the next value only.
	RotationDrop = "drop"
)

// OriginDigests are the origin-verify values a rotation rotates between,
// as SHA-256 digests in hex (engine.OriginDigest), never the values: the
// records are readable by everyone who reads the backend.
type OriginDigests struct {
	// From is the value the rotation replaces ("" when it was not known:
	// the stack files were recovered after the switch).
	From string `json:"from,omitempty"`
	// To is the value the rotation ships.
	To string `json:"to"`
}

// Canary phases: where a router canary stands.
const (
	// CanaryStarting: recorded, the smoke phase's update not yet done.
	CanaryStarting = "starting"
	// CanaryHeader: the staging distribution runs the candidate for
	// requests carrying the smoke header.
	CanaryHeader = "header"
	// CanaryWeight: a share of all viewers goes to the staging
	// distribution.
	CanaryWeight = "weight"
	// CanaryPromoting: both bakes passed; the primary takes the candidate.
	CanaryPromoting = "promoting"
	// CanaryDiscarding: the staging distribution goes back to the primary.
	CanaryDiscarding = "discarding"
	// CanaryDone: nothing of the canary is left on the edge.
	CanaryDone = "done"
)

// CanaryRecord is a router canary's durable state, saved before and after
// every step so a rerun after kill -9 resumes it or finishes its revert,
// and `cellctl status` and `health` can show a canary nobody watches.
type CanaryRecord struct {
	Phase string `json:"phase"`
	// PhaseSince is when the phase's traffic split took effect.
	PhaseSince time.Time `json:"phaseSince,omitzero"`
	// Outcome is set once the canary is over: promoted, discarded,
	// unchanged, first-deploy, reverted.
	Outcome string `json:"outcome,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Primary is the version the primary distribution runs throughout;
	// Candidate the version canaried on the staging distribution.
	Primary             string `json:"primaryFunctionArn,omitempty"`
	Candidate           string `json:"candidateFunctionArn,omitempty"`
	StagingDistribution string `json:"stagingDistributionId,omitempty"`
	// Header and HeaderValue select the staging distribution in the smoke
	// phase (not a secret: it only picks a distribution).
	Header      string  `json:"header,omitempty"`
	HeaderValue string  `json:"headerValue,omitempty"`
	Weight      float64 `json:"weight,omitempty"`
	IdleTTL     int     `json:"idleTtl,omitempty"`
	MaximumTTL  int     `json:"maximumTtl,omitempty"`
	// PrimaryTable is the routing table version the primary serves (0:
	// unknown); CandidateTable the version the candidate carries.
	PrimaryTable   int64 `json:"primaryTableVersion,omitempty"`
	CandidateTable int64 `json:"candidateTableVersion,omitempty"`
	// Phases are the smoke and weighted phases as they ran.
	Phases []StepRecord `json:"phases,omitempty"`
	// Inputs and Deployed fingerprint the router's desired inputs and its
	// deployed outputs when the canary left the router shipped (promoted,
	// unchanged, first deploy): the next router step with the same
	// fingerprints has nothing to change and runs no engine.
	Inputs   string `json:"inputs,omitempty"`
	Deployed string `json:"deployed,omitempty"`
	// Function fingerprints the edge function's rendered code and
	// configuration when the canary left the router shipped: the next
	// router step that renders the same function, with the primary still
	// on the version shipped then, has no new version to canary — its
	// other changes go to both distributions in one update.
	Function string `json:"function,omitempty"`
	// Finished is when the canary ended.
	Finished time.Time `json:"finished,omitzero"`
}

// Unfinished reports whether something of the canary may still be on the
// edge (a phase's traffic split, or a revert not done).
func (c *CanaryRecord) Unfinished() bool { return c != nil && c.Outcome == "" }

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
