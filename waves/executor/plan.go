package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/cellctl/cellctl/waves"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Plan is what a rollout ships: the waves in order and the configuration
// every cell of every wave should end up running. The deploy command builds
// it from waves.Plan (one Wave per waves.Wave, the gate's policy fields
// copied) and the fleet's desired cell specs (with --image applied).
type Plan struct {
	Waves []Wave `json:"waves"`
	// Desired is the configuration each cell gets, by cell id.
	Desired map[string]CellConfig `json:"desired"`
	// Repository is, for each cell the plan ships another image than its
	// stack file names (deploy --image), the image the repository names.
	// Each cell record keeps it (CellRecord.RepoImage): internal/desired
	// holds the shipped image only while the repository still says this.
	Repository map[string]string `json:"repository,omitempty"`
}

// Wave is one wave of the plan, with its gate policy as plain values.
type Wave struct {
	Name  string        `json:"name"`
	Cells []string      `json:"cells"`
	Bake  time.Duration `json:"bake"`
	// Delay is a wait before the wave's cells change (waves.Wave.Delay).
	Delay time.Duration `json:"delay,omitempty"`
	// Approve holds the wave until an operator approves it
	// (waves.Wave.Approve).
	Approve bool `json:"approve,omitempty"`
	// MaxParallel bounds how many of the wave's cells update at once; 0 is
	// all of them.
	MaxParallel int `json:"maxParallel,omitempty"`
	// Poll is how often the gate is read while the wave bakes.
	Poll           time.Duration            `json:"poll"`
	OnBreach       waves.BreachPolicy       `json:"onBreach"`
	OnInconclusive waves.InconclusivePolicy `json:"onInconclusive"`
	// Gate describes the gate in words for the dry run ("error_rate_5xx <
	// 0.5%, p99_latency_ms < 400, min 100 requests"); the Gate interface
	// does the checking.
	Gate string `json:"gate,omitempty"`
	// Exposure is the share of traffic the wave's cells serve, from the
	// routing table; nil when the caller did not compute it.
	Exposure *Exposure `json:"exposure,omitempty"`
}

// Exposure is the share of the routing table a wave's cells serve.
type Exposure struct {
	// Buckets is the fraction (0–1) of hash buckets mapped to the wave's cells.
	Buckets float64 `json:"buckets"`
	// Pinned is the fraction (0–1) of pinned tenants on the wave's cells.
	Pinned float64 `json:"pinned"`
}

// Validate checks the plan is one the executor can run: named waves, each
// cell in exactly one wave with a desired configuration, policies it
// knows. Every problem is reported at once.
func (p Plan) Validate() error {
	var errs *multierror.Error
	if len(p.Waves) == 0 {
		errs = multierror.Append(errs, fmt.Errorf("the plan has no waves"))
	}
	seenWave := map[string]bool{}
	seenCell := map[string]string{}
	for i, w := range p.Waves {
		if w.Name == "" {
			errs = multierror.Append(errs, fmt.Errorf("wave %d has no name", i+1))
		} else if seenWave[w.Name] {
			errs = multierror.Append(errs, fmt.Errorf("wave %q is listed twice", w.Name))
		}
		seenWave[w.Name] = true
		if len(w.Cells) == 0 {
			errs = multierror.Append(errs, fmt.Errorf("wave %q has no cells", w.Name))
		}
		for _, c := range w.Cells {
			if prev, dup := seenCell[c]; dup {
				errs = multierror.Append(errs, fmt.Errorf("cell %q is in wave %q and wave %q", c, prev, w.Name))
				continue
			}
			seenCell[c] = w.Name
			if _, ok := p.Desired[c]; !ok {
				errs = multierror.Append(errs, fmt.Errorf("cell %q (wave %q) has no desired configuration", c, w.Name))
			}
		}
		if w.Delay < 0 {
			errs = multierror.Append(errs, fmt.Errorf("wave %q: delay %s is negative", w.Name, w.Delay))
		}
		if w.Bake < 0 {
			errs = multierror.Append(errs, fmt.Errorf("wave %q: bake %s is negative", w.Name, w.Bake))
		}
		if w.Bake > 0 && w.Poll <= 0 {
			errs = multierror.Append(errs, fmt.Errorf("wave %q: poll must be positive to bake for %s", w.Name, w.Bake))
		}
		if w.MaxParallel < 0 {
			errs = multierror.Append(errs, fmt.Errorf("wave %q: max_parallel %d is negative", w.Name, w.MaxParallel))
		}
		switch w.OnBreach {
		case waves.HaltAndRollbackWave, waves.Halt:
		default:
			errs = multierror.Append(errs, fmt.Errorf("wave %q: on_breach %q (allowed: %s, %s)", w.Name, w.OnBreach, waves.HaltAndRollbackWave, waves.Halt))
		}
		switch w.OnInconclusive {
		case waves.InconclusiveHalt, waves.InconclusivePromote:
		default:
			errs = multierror.Append(errs, fmt.Errorf("wave %q: on_inconclusive %q (allowed: %s, %s)", w.Name, w.OnInconclusive, waves.InconclusiveHalt, waves.InconclusivePromote))
		}
	}
	return errs.ErrorOrNil()
}

// index returns the position of the wave named name, or -1.
func (p Plan) index(name string) int {
	for i, w := range p.Waves {
		if w.Name == name {
			return i
		}
	}
	return -1
}

// ID is the rollout's id: a digest of the waves (names and cells) and of
// every desired configuration. Rerunning the same deploy — same repository
// state, same --image — gives the same id, which is how a rerun finds the
// record it continues; any change to what ships is a new rollout.
func (p Plan) ID() string {
	type idWave struct {
		Name  string   `json:"n"`
		Cells []string `json:"c"`
	}
	var doc struct {
		Waves   []idWave          `json:"w"`
		Desired map[string]string `json:"d"`
		// Repo: a rollout of the same image over a repository that moved
		// meanwhile is a new rollout, so its records say what the
		// repository said when it shipped.
		Repo map[string]string `json:"r,omitempty"`
	}
	doc.Desired = map[string]string{}
	for _, w := range p.Waves {
		doc.Waves = append(doc.Waves, idWave{w.Name, w.Cells})
	}
	for c, cfg := range p.Desired {
		raw, err := cfg.canonical()
		if err != nil {
			raw = []byte(err.Error())
		}
		doc.Desired[c] = string(raw)
	}
	if len(p.Repository) > 0 {
		doc.Repo = p.Repository
	}
	raw, _ := json.Marshal(doc)
	sum := sha256.Sum256(raw)
	return "r-" + hex.EncodeToString(sum[:6])
}
