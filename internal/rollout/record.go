// Package rollout keeps what a rollout did and who is doing one: the
// rollout record (waves, cells, each cell's configuration before and after,
// states, every gate reading, times) and the one-rollout-at-a-time lock.
// Both live in the Pulumi backend beside the stacks (file:// or s3://,
// through gocloud.dev/blob as Pulumi's own file backend does), so a CI job
// on another machine can read a rollout and continue it.
package rollout

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"

	"github.com/cellctl/cellctl/waves/gate"
)

// State is the state of a rollout as a whole.
type State string

const (
	Running    State = "running"
	Completed  State = "completed"
	Halted     State = "halted"      // a gate halted it; nothing rolled back
	RolledBack State = "rolled_back" // a wave breached and was restored
	Failed     State = "failed"      // an error stopped it (see Error)
)

// Done reports whether a rollout in this state will not continue.
func (s State) Done() bool { return s == Completed || s == Halted || s == RolledBack }

// CellState is where one cell is in a rollout.
type CellState string

const (
	CellPending     CellState = "pending"      // its wave has not started
	CellUpdating    CellState = "updating"     // being updated to After
	CellBaking      CellState = "baking"       // updated; the gate is polling
	CellPassed      CellState = "passed"       // its wave was promoted: runs After
	CellBreached    CellState = "breached"     // the gate failed on it
	CellRollingBack CellState = "rolling_back" // being restored to Before
	CellRolledBack  CellState = "rolled_back"  // runs Before again
	CellUntouched   CellState = "untouched"    // a later wave that never started
	CellUnchanged   CellState = "unchanged"    // already ran the desired state: not updated, not baked
)

// CellStates is every cell state, in lifecycle order.
var CellStates = []CellState{CellPending, CellUpdating, CellBaking, CellPassed, CellBreached,
	CellRollingBack, CellRolledBack, CellUntouched, CellUnchanged}

// WaveState is where one wave is.
type WaveState string

const (
	WavePending     WaveState = "pending"
	WaveUpdating    WaveState = "updating"
	WaveBaking      WaveState = "baking"
	WavePassed      WaveState = "passed"
	WaveBreached    WaveState = "breached"
	WaveRollingBack WaveState = "rolling_back"
	WaveRolledBack  WaveState = "rolled_back"
	WaveHalted      WaveState = "halted"
	WaveUnchanged   WaveState = "unchanged" // every cell already matched
)

// ConfigValue is one stack configuration value. A secret is kept only as
// the ciphertext the stack's secrets provider wrote, never in plaintext.
type ConfigValue struct {
	Value  string `json:"value"`
	Secret bool   `json:"secret,omitempty"`
}

// Config is a cell's full configuration as deployed: every stack config
// key ("cells:image", "aws:region") and its value. It is what a rollback
// restores, so it is read from the stack as last deployed, never from the
// repository's files.
type Config map[string]ConfigValue

// Image is the configuration's container image ("" when unset).
func (c Config) Image(project string) string { return c[project+":image"].Value }

// Record is one rollout.
type Record struct {
	ID    string `json:"id"`
	State State  `json:"state"`
	// Image is the --image override, "" when the rollout ships the repo's
	// desired state as is.
	Image string `json:"image,omitempty"`
	// Through and OnlyWave record --through / --wave.
	Through  string `json:"through,omitempty"`
	OnlyWave string `json:"only_wave,omitempty"`
	// Holder is who started the rollout; Resumes lists who continued it.
	Holder  Holder   `json:"holder"`
	Resumes []Holder `json:"resumes,omitempty"`
	// Abandoned lists holders whose lock was broken with Abandon.
	Abandoned []Holder   `json:"abandoned,omitempty"`
	Created   time.Time  `json:"created"`
	Updated   time.Time  `json:"updated"`
	Ended     *time.Time `json:"ended,omitempty"`
	Waves     []Wave     `json:"waves"`
	// Error is why a failed rollout stopped; Reason why a gate stopped it
	// (which cell, signal, reading and threshold).
	Error  string `json:"error,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Revision counts the writes of this record.
	Revision int `json:"revision"`
}

// Wave is one wave of a rollout.
type Wave struct {
	Name  string        `json:"name"`
	Bake  time.Duration `json:"bake_ns"`
	State WaveState     `json:"state"`
	// Gate is the wave's gate as it was when the wave ran, for the record.
	Gate        GateSummary `json:"gate"`
	Cells       []Cell      `json:"cells"`
	Started     *time.Time  `json:"started,omitempty"`
	BakeStarted *time.Time  `json:"bake_started,omitempty"`
	Ended       *time.Time  `json:"ended,omitempty"`
	Decision    string      `json:"decision,omitempty"`
	Reason      string      `json:"reason,omitempty"`
	Rebakes     int         `json:"rebakes,omitempty"` // times --rebake re-ran this bake
}

// GateSummary is the gate a wave ran with, in words.
type GateSummary struct {
	Thresholds     map[string]string `json:"thresholds,omitempty"` // cell → "error_rate_5xx < 0.5%, …"
	MinRequests    int               `json:"min_requests"`
	Poll           time.Duration     `json:"poll_ns"`
	OnBreach       string            `json:"on_breach"`
	OnInconclusive string            `json:"on_inconclusive"`
}

// Cell is one cell of a rollout.
type Cell struct {
	ID    string    `json:"id"`
	State CellState `json:"state"`
	// Before is the configuration the cell ran before its wave started
	// (recorded before the wave's first update); After what it was
	// updated to.
	Before  Config      `json:"before,omitempty"`
	After   Config      `json:"after,omitempty"`
	Update  gate.Update `json:"update"`
	Polls   []gate.Poll `json:"polls,omitempty"`
	Started *time.Time  `json:"started,omitempty"`
	Ended   *time.Time  `json:"ended,omitempty"`
	Error   string      `json:"error,omitempty"`
}

// Cell returns the record of a cell and its wave's index, or nil, -1.
func (r *Record) Cell(id string) (*Cell, int) {
	for i := range r.Waves {
		for j := range r.Waves[i].Cells {
			if r.Waves[i].Cells[j].ID == id {
				return &r.Waves[i].Cells[j], i
			}
		}
	}
	return nil, -1
}

// Wave returns the wave with that name, or nil.
func (r *Record) Wave(name string) *Wave {
	for i := range r.Waves {
		if r.Waves[i].Name == name {
			return &r.Waves[i]
		}
	}
	return nil
}

// AddPoll appends a gate poll to its cell's record. Polls of cells the
// record does not hold are an error: a reading must never be dropped.
func (r *Record) AddPoll(p gate.Poll) error {
	c, _ := r.Cell(p.Cell)
	if c == nil {
		return fmt.Errorf("rollout %s has no cell %q", r.ID, p.Cell)
	}
	c.Polls = append(c.Polls, p)
	return nil
}

var idPattern = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$`)

// NewID makes a rollout id: its start time (sortable, readable) and a
// random suffix so two rollouts in the same second differ.
func NewID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// ValidID reports whether id has the shape NewID makes; ids become object
// keys, so nothing else is accepted from a command line.
func ValidID(id string) bool { return idPattern.MatchString(id) }
