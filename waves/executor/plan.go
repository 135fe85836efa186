package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/cellctl/cellctl/waves"

	"github.com/hashicorp/go-multierror"
)

// Plan is what a rollout ships: the waves in order and the configuration
// every cell of every wave should end up running. The deploy command builds
// it from waves.Plan (its waves as they are, bakes scaled for a rehearsal)
// and the fleet's desired cell specs (with --image applied).
type Plan struct {
	Waves []Wave `json:"waves"`
	// Desired is the configuration each cell gets, by cell id.
	Desired map[string]CellConfig `json:"desired"`
	// Repository is, for each cell the plan ships another image than its
	// stack file names (deploy --image), the image the repository names.
	// Each cell record keeps it (CellRecord.RepoImage): internal/desired
	// holds the shipped image only while the repository still says this.
	Repository map[string]string `json:"repository,omitempty"`
	// Exposure is the share of traffic each wave's cells serve, from the
	// routing table (waves.Plan.Exposure), for the dry run; nil when the
	// caller did not compute it.
	Exposure []waves.WaveExposure `json:"exposure,omitempty"`
}

// Wave is one wave of the plan: waves.yaml's, with its gate (the executor
// reads its policies: Gate.Poll, OnBreach, OnInconclusive; the Gate
// interface does the checking).
type Wave = waves.Wave

// Exposure is the share of the routing table a wave's cells serve.
type Exposure = waves.Exposure

// exposure is the wave's share of the routing table, or nil when the plan
// carries none for it.
func (p Plan) exposure(wave string) *Exposure {
	for _, e := range p.Exposure {
		if e.Wave == wave {
			s := e.Share()
			return &s
		}
	}
	return nil
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
		if w.Bake > 0 && w.Gate.Poll <= 0 {
			errs = multierror.Append(errs, fmt.Errorf("wave %q: poll must be positive to bake for %s", w.Name, w.Bake))
		}
		if w.Parallel < 0 {
			errs = multierror.Append(errs, fmt.Errorf("wave %q: max_parallel %d is negative", w.Name, w.Parallel))
		}
		switch w.Gate.OnBreach {
		case waves.HaltAndRollbackWave, waves.Halt:
		default:
			errs = multierror.Append(errs, fmt.Errorf("wave %q: on_breach %q (allowed: %s, %s)", w.Name, w.Gate.OnBreach, waves.HaltAndRollbackWave, waves.Halt))
		}
		switch w.Gate.OnInconclusive {
		case waves.InconclusiveHalt, waves.InconclusivePromote:
		default:
			errs = multierror.Append(errs, fmt.Errorf("wave %q: on_inconclusive %q (allowed: %s, %s)", w.Name, w.Gate.OnInconclusive, waves.InconclusiveHalt, waves.InconclusivePromote))
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
