package routercanary

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router/canary"
	"github.com/cellctl/cellctl/waves/executor"
)

// Where a canary run starts (Route.Start).
const (
	StartDiscard          = "discard"            // --discard: revert the staging distribution
	StartNothingToDiscard = "nothing-to-discard" // --discard with no canary in flight: no engine run, no record
	StartFirstDeploy      = "first-deploy"       // nothing serves viewers yet: deploy ungated
	StartUnchanged        = "unchanged"          // inputs and deployed outputs as last shipped: no engine run
	StartSameFunction     = "same-function"      // the edge function as last shipped: one update of both distributions, nothing to canary
	StartFresh            = "fresh"              // a new canary from the smoke phase
	StartAgain            = "again"              // the unfinished canary's smoke phase anew
	StartJudged           = "judged"             // the unfinished canary's phase was judged: discard it
	StartBake             = "bake"               // continue the unfinished canary's bake
	StartPromote          = "promote"            // finish the unfinished canary's promotion
	StartFinishRevert     = "finish-revert"      // finish the unfinished canary's revert
	StartUnknown          = "unknown"            // a record this cellctl cannot continue
)

// Route is the path a canary run takes, decided before anything changes
// from the canary's record and the deployed router: where it starts and
// the phases it then goes through, in order. Run follows it; the dry run
// (Plan) prints it.
type Route struct {
	// Record is the record the canary's state is in ("" : a new one).
	Record string `json:"record,omitempty"`
	Start  string `json:"start"`
	// Primary is what the primary distribution runs now ("" when the
	// router is not deployed).
	Primary string `json:"primaryFunctionArn,omitempty"`
	// Phases are the steps, each an up of the router stack (the last may
	// be left out when a phase ends the canary: a breach discards it, an
	// unchanged edge function has nothing to canary).
	Phases []PlannedPhase `json:"phases"`
	// Note is what the route cannot tell before it runs.
	Note string `json:"note,omitempty"`

	inputs, deployed string // the fingerprints an unchanged router recorded
	function         string // the rendered edge function's fingerprint
	unrecorded       string // a canary phase the deployed router shows and no record has
	why              string // why a resumed canary runs its smoke phase again
}

// PlannedPhase is one step of a route.
type PlannedPhase struct {
	Phase string `json:"phase"` // header, weight, promote, revert, deploy
	Stack string `json:"stack"`
	Does  string `json:"does"`
	// Update says the phase deploys the router stack (false: a resumed
	// bake, its split deployed already).
	Update bool `json:"update"`
	// Bake is the phase's bake (what is left of it for a resumed bake);
	// MinRequests the fewest requests it must see.
	Bake        time.Duration `json:"bake,omitempty"`
	MinRequests int           `json:"minRequests,omitempty"`
}

// route decides where a run starts from the record's canary state prev
// and the deployed router's outputs. It only reads (the router's inputs,
// the records' last shipped canary).
func (c *run) route(ctx context.Context, outs map[string]any, prev *executor.CanaryRecord) (*Route, error) {
	rt := &Route{Record: c.id(), Primary: primaryOf(outs)}
	if prev == nil || !prev.Unfinished() && !c.o.Discard {
		rt.Record = "" // a finished canary's record is replaced
	}
	switch {
	case c.o.Discard:
		if !prev.Unfinished() && rt.Primary == "" {
			return nil, errors.New("router canary --discard: the router is not deployed (no primaryFunctionArn output): nothing to revert")
		}
		rt.Start = StartDiscard
		if !prev.Unfinished() && !inFlight(outs) {
			rt.Start, rt.Record = StartNothingToDiscard, ""
		}
	case prev.Unfinished():
		c.resumeRoute(rt, outs, prev)
	case len(outs) == 0 || rt.Primary == "":
		rt.Start = StartFirstDeploy
	default:
		phase, _ := outs["canaryPhase"].(string)
		stable := phase == "" || phase == string(canary.Stable)
		inputs, err := c.inputs(ctx)
		if err != nil {
			return nil, err
		}
		rt.inputs, rt.function, rt.Start = inputs.inputs, inputs.function, StartFresh
		if stable && inputs.inputs != "" {
			last := c.lastShipped(ctx)
			if last == nil || last.Function == "" || inputs.function == "" {
				rt.Note = "no shipped canary recorded how the edge function rendered: should the smoke phase's update publish no new version, the canary ends there and one more update puts both distributions back on the primary's version"
			}
			switch {
			case last == nil:
			case last.Inputs == inputs.inputs && last.Deployed == Deployed(outs):
				rt.Start, rt.deployed, rt.Note = StartUnchanged, last.Deployed, ""
			case inputs.function != "" && last.Function == inputs.function && shipped(last) == rt.Primary &&
				stringOf(outs, "stagingFunctionArn") == rt.Primary:
				// The function renders as it did when the version both
				// distributions run was shipped: an update publishes no
				// new version.
				rt.Start = StartSameFunction
			}
		}
		if !stable {
			rt.unrecorded = phase
		}
	}
	rt.Phases = c.phases(rt, prev)
	return rt, nil
}

// resumeRoute is where an unfinished canary continues.
func (c *run) resumeRoute(rt *Route, outs map[string]any, cr *executor.CanaryRecord) {
	rt.Primary = cr.Primary
	switch cr.Phase {
	case executor.CanaryStarting:
		rt.Start = StartAgain
		if cr.Primary == "" {
			rt.Start = StartFirstDeploy
		}
	case executor.CanaryHeader, executor.CanaryWeight:
		i := lastPhase(cr, cr.Phase)
		if i >= 0 && cr.Phases[i].State == executor.WaveHalted {
			// Judged before the run stopped: act on the recorded decision.
			rt.Start = StartJudged
			return
		}
		phase, _ := outs["canaryPhase"].(string)
		deployed := phase == cr.Phase && cr.Candidate != "" && outs["stagingFunctionArn"] == cr.Candidate && primaryOf(outs) == cr.Primary
		if i < 0 || !deployed || cr.Phases[i].State != executor.WaveBaking {
			rt.Start = StartAgain
			rt.why = fmt.Sprintf("the deployed router is not in the recorded %s phase of %s: running the smoke phase again", cr.Phase, cr.Candidate)
			return
		}
		rt.Start = StartBake
	case executor.CanaryPromoting:
		rt.Start = StartPromote
	case executor.CanaryDiscarding:
		rt.Start = StartFinishRevert
	default:
		rt.Start = StartUnknown
	}
}

// phases are the steps the route goes through from its start.
func (c *run) phases(rt *Route, prev *executor.CanaryRecord) []PlannedPhase {
	router := fleet.RouterStack
	header := PlannedPhase{Phase: executor.CanaryHeader, Stack: router, Update: true, Bake: c.o.HeaderBake, MinRequests: c.o.HeaderMinRequests,
		Does: fmt.Sprintf("the staging distribution runs the candidate for requests with %s (a smoke test); the primary keeps %s", canary.DefaultHeader, orNone(rt.Primary))}
	weight := PlannedPhase{Phase: executor.CanaryWeight, Stack: router, Update: true, Bake: c.o.WeightBake, MinRequests: c.o.WeightMinRequests,
		Does: fmt.Sprintf("%g%% of viewers go to the staging distribution (sessions sticky for %d–%d s)", 100*c.o.Weight, c.o.IdleTTL, c.o.MaximumTTL)}
	promote := PlannedPhase{Phase: executor.CanaryPromoting, Stack: router, Update: true, Does: "the primary distribution takes exactly the canaried version"}
	revert := PlannedPhase{Phase: "revert", Stack: router, Update: true, Does: fmt.Sprintf("the staging distribution goes back to what the primary runs (%s), the policy is disabled; the primary is not touched", orNone(rt.Primary))}
	switch rt.Start {
	case StartDiscard, StartJudged, StartFinishRevert:
		return []PlannedPhase{revert}
	case StartFirstDeploy:
		return []PlannedPhase{{Phase: "deploy", Stack: router, Update: true, Does: "the router has never been deployed: deploying it (nothing to canary)"}}
	case StartSameFunction:
		return []PlannedPhase{{Phase: "apply", Stack: router, Update: true,
			Does: fmt.Sprintf("the edge function is unchanged (both distributions keep %s): the router's other changes go to both distributions in one update; nothing to canary", orNone(rt.Primary))}}
	case StartFresh, StartAgain:
		return []PlannedPhase{header, weight, promote}
	case StartBake:
		i := lastPhase(prev, prev.Phase)
		left := max(c.bakeOf(prev.Phase)-c.now().Sub(prev.Phases[i].BakeStart), 0)
		if prev.Phase == executor.CanaryHeader {
			header.Bake, header.Update, header.Does = left, false, "the rest of the smoke phase's bake (its split is deployed)"
			return []PlannedPhase{header, weight, promote}
		}
		weight.Bake, weight.Update, weight.Does = left, false, "the rest of the weighted phase's bake (its split is deployed)"
		return []PlannedPhase{weight, promote}
	case StartPromote:
		return []PlannedPhase{promote}
	}
	return nil
}

// inFlight says the deployed router shows a canary nobody recorded: the
// staging distribution in a canary phase, or running another version
// than the primary.
func inFlight(outs map[string]any) bool {
	phase, _ := outs["canaryPhase"].(string)
	if phase != "" && phase != string(canary.Stable) {
		return true
	}
	staging := stringOf(outs, "stagingFunctionArn")
	return staging != "" && staging != primaryOf(outs)
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// Plan is the dry run of a canary: the route Run would take now — where it
// starts (a new canary, the unfinished one continued, nothing to change)
// and its phases in order, each an up of the router stack with its bake.
// It reads the records and the deployed router only: it takes no lock,
// saves no record and runs no engine.
func Plan(ctx context.Context, env *Env, o Options) (*Route, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	clock := env.Clocked()
	// The record the run would continue, read as Run reads it; a copy in
	// a journal that saves nowhere.
	rec := &executor.Record{Kind: executor.KindCanary, Started: clock.Now().UTC()}
	if env.Journal != nil {
		env.Journal.View(func(r *executor.Record) { rec = r })
	} else if env.Store != nil {
		recs, err := records(ctx, env.Store)
		if err != nil {
			return nil, err
		}
		if prev := latest(recs); prev != nil && prev.Kind == executor.KindCanary && prev.Canary.Unfinished() {
			rec = prev
		}
	}
	c := &run{env: env, o: o, j: executor.NewJournal(nil, clock, rec)}
	outs, err := env.Outputs(ctx, fleet.RouterStack)
	if err != nil {
		return nil, fmt.Errorf("router canary: reading the router's stack outputs: %w", err)
	}
	rt, err := c.route(ctx, outs, c.canary())
	if err != nil {
		return nil, err
	}
	if env.LinkedChange != nil && updates(rt) {
		note, err := env.LinkedChange(ctx)
		if err != nil {
			return nil, fmt.Errorf("router canary: reading the router's state: %w", err)
		}
		if note != "" {
			rt.Note = strings.TrimPrefix(rt.Note+"; "+note, "; ")
		}
	}
	return rt, nil
}

// updates reports whether a route runs an update of the router stack.
func updates(rt *Route) bool {
	for _, p := range rt.Phases {
		if p.Update {
			return true
		}
	}
	return false
}
