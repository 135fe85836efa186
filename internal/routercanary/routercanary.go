// Package routercanary ships a router change the way cells are shipped:
// gradually, gated, and undone on breach. A new edge function version (a
// new routing table or handler) first runs on the router's CloudFront
// staging distribution only, for requests carrying a smoke-test header;
// then for a weighted share of all viewers (at most 15 %, CloudFront's
// cap); then, if the staging distribution's 5xx rate and the function's
// own errors stayed within their thresholds through both bakes, the
// primary distribution takes exactly the canaried version (promotion). On
// a breach, or too little traffic to judge, the staging distribution is
// reverted to what the primary runs and the primary is never touched.
//
// The canary is a step kind of the one gated-change machine: its state is
// an executor.CanaryRecord — in a record of its own (kind router-canary,
// `cellctl router canary`) or in a rollout's record (deploy's router
// step) — saved through the executor's journal before and after every
// step (a failed save stops it), under the fleet lock's one holder, its
// bakes the executor's bake loop (executor.Baker) in the one verdict
// vocabulary. A canary killed in any phase is resumed by the next run, or
// its revert finished; `cellctl status` and `health` show one nobody
// finished. A router step whose inputs and deployed outputs are those the
// last shipped canary recorded has nothing to change: no engine run.
//
// Each step is an `up` of the router stack with the traffic split as
// data (stackrun.Inputs.Router); the gate is the fleet's gate evaluator
// (waves/gate) over the edge signals (waves/signal.Edge), failing closed.
// The package drives the engine and CloudWatch through small interfaces;
// tests run whole canaries against fakes.
package routercanary

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/gated"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router/canary"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/executor/fromwaves"
	"github.com/cellctl/cellctl/waves/gate"
	"github.com/cellctl/cellctl/waves/signal"
)

// Defaults of a canary; every one is an Options field.
const (
	DefaultWeight            = 0.05
	DefaultIdleTTL           = 300
	DefaultMaximumTTL        = 600
	DefaultHeaderBake        = 5 * time.Minute
	DefaultWeightBake        = 15 * time.Minute
	DefaultPoll              = 30 * time.Second
	DefaultHeaderMinRequests = 50
	DefaultWeightMinRequests = 500
)

// Env is what a canary runs against: a gated change's surroundings
// (gated.Env) and what only a canary needs.
type Env struct {
	gated.Env
	// Token returns the smoke header's value; nil: 16 random hex digits.
	Token func() (string, error)
	// Journal, when set, is the record the canary is a step of — a
	// rollout's, whose run holds the fleet lock: the canary keeps its
	// state in that record's Canary and takes no lock. nil: the canary
	// has a record of its own and takes the fleet lock through Store as
	// Host, PID and Alive say.
	Journal *executor.Journal
	// Prepare runs once the fleet lock is held, before the first step
	// (the apply path's gates over the whole fleet); nil: nothing.
	Prepare func(ctx context.Context) error
}

// LockVerb is the fleet lock holder's verb of a canary of its own; the
// holder's id is its record's (c-…).
const LockVerb = "router canary"

// Options are a canary's choices.
type Options struct {
	// Weight is the staging share of the weighted phase (0–0.15).
	Weight float64
	// IdleTTL and MaximumTTL keep a viewer on one distribution for a
	// session in the weighted phase (seconds; CloudFront: 300–3600).
	IdleTTL, MaximumTTL    int
	HeaderBake, WeightBake time.Duration
	Poll                   time.Duration
	// HeaderMinRequests and WeightMinRequests: fewer requests in a bake
	// is inconclusive, and an inconclusive canary is never promoted.
	HeaderMinRequests, WeightMinRequests int
	// Thresholds of the edge signals (unset ones: signal.EdgeDefaults).
	Thresholds signal.Thresholds
	// Resume is `cellctl rollout resume`: the one run that continues a
	// canary an operator paused (`cellctl rollout pause`).
	Resume bool
	// Discard only reverts the staging distribution to the primary's
	// version (an interrupted canary).
	Discard bool
}

// WithDefaults fills every unset option.
func (o Options) WithDefaults() Options {
	if o.Weight == 0 {
		o.Weight = DefaultWeight
	}
	if o.IdleTTL == 0 && o.MaximumTTL == 0 {
		o.IdleTTL, o.MaximumTTL = DefaultIdleTTL, DefaultMaximumTTL
	}
	if o.HeaderBake == 0 {
		o.HeaderBake = DefaultHeaderBake
	}
	if o.WeightBake == 0 {
		o.WeightBake = DefaultWeightBake
	}
	if o.Poll == 0 {
		o.Poll = DefaultPoll
	}
	if o.HeaderMinRequests == 0 {
		o.HeaderMinRequests = DefaultHeaderMinRequests
	}
	if o.WeightMinRequests == 0 {
		o.WeightMinRequests = DefaultWeightMinRequests
	}
	for _, s := range signal.Edge {
		if !o.Thresholds.Get(s.Name).IsSet() {
			o.Thresholds.Set(s.Name, s.Default)
		}
	}
	return o
}

// Scaled is the canary of a rehearsal (--bake-scale f, 0 < f ≤ 1): its
// bakes and poll shortened by f (at least a second), and its minimum
// request counts with them — a shorter bake sees proportionally fewer
// requests, so an unscaled minimum (500) could never be met and every
// rehearsal of an edge change was inconclusive.
func (o Options) Scaled(f float64) Options {
	if !(f > 0 && f < 1) {
		return o
	}
	for _, d := range []*time.Duration{&o.HeaderBake, &o.WeightBake, &o.Poll} {
		if *d > 0 {
			*d = max(time.Second, time.Duration(float64(*d)*f))
		}
	}
	for _, n := range []*int{&o.HeaderMinRequests, &o.WeightMinRequests} {
		if *n > 0 {
			*n = max(1, int(math.Ceil(float64(*n)*f)))
		}
	}
	return o
}

// Validate refuses options CloudFront or the gate cannot honour.
func (o Options) Validate() error {
	if err := canary.CheckWeight(o.Weight); err != nil {
		return err
	}
	if err := canary.CheckStickiness(o.IdleTTL, o.MaximumTTL); err != nil {
		return err
	}
	for name, d := range map[string]time.Duration{"header bake": o.HeaderBake, "weight bake": o.WeightBake, "poll": o.Poll} {
		if d < 0 {
			return fmt.Errorf("router canary: %s %s must not be negative", name, d)
		}
	}
	if o.HeaderMinRequests < 0 || o.WeightMinRequests < 0 {
		return errors.New("router canary: min requests must not be negative")
	}
	return nil
}

// Outcomes of a canary.
const (
	FirstDeploy = "first-deploy" // nothing served traffic yet: deployed ungated
	Unchanged   = "unchanged"    // the edge function did not change: nothing to canary (and, with nothing else changed, no engine run)
	Promoted    = "promoted"     // the primary runs the candidate
	Discarded   = "discarded"    // a bake breached or was inconclusive: staging reverted
	Reverted    = "reverted"     // --discard
	// NothingToDiscard is --discard with no canary in flight: no engine
	// run, no record.
	NothingToDiscard = "nothing-to-discard"
)

// Step is one phase of a canary as it ran: its traffic split and its bake
// as the executor's one bake loop recorded it (every poll, the decision).
type Step struct {
	Phase   canary.Phase   `json:"phase"`
	Traffic canary.Traffic `json:"traffic"`
	// Decision is the bake's: pass, breach or inconclusive ("" when the
	// bake did not finish).
	Decision waves.Decision  `json:"decision,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Polls    []executor.Poll `json:"polls,omitempty"`
}

// Result is what a canary did, read from its record.
type Result struct {
	// ID is the record the canary's state is in (its own, or the rollout
	// whose router step it is).
	ID      string `json:"id,omitempty"`
	Outcome string `json:"outcome"`
	// Phase is where the canary stands (done once it is over).
	Phase string `json:"phase,omitempty"`
	// Primary is the version the primary ran before; Candidate the newest.
	Primary             string `json:"primaryFunctionArn,omitempty"`
	Candidate           string `json:"candidateFunctionArn,omitempty"`
	StagingDistribution string `json:"stagingDistributionId,omitempty"`
	// PrimaryTable and CandidateTable are the routing table versions of
	// the two (0: unknown).
	PrimaryTable   int64 `json:"primaryTableVersion,omitempty"`
	CandidateTable int64 `json:"candidateTableVersion,omitempty"`
	// Header and HeaderValue select the staging distribution in the smoke
	// phase (for a synthetic client on AWS).
	Header      string `json:"header,omitempty"`
	HeaderValue string `json:"headerValue,omitempty"`
	Steps       []Step `json:"steps,omitempty"`
	Reason      string `json:"reason,omitempty"`
	// Paused is who paused the canary (`cellctl rollout pause`), when:
	// it stopped at a step boundary and keeps the fleet's lock.
	Paused *executor.Ask `json:"paused,omitempty"`
}

// errPaused stops a canary an operator paused (run.paused).
var errPaused = errors.New("paused")

// Run runs one canary of the router stack's current program — or resumes
// the one an earlier run left unfinished, or finishes its revert.
func Run(ctx context.Context, env *Env, o Options) (*Result, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if env.Journal != nil {
		c := &run{env: env, o: o, j: env.Journal}
		err := c.run(ctx)
		return c.result(), err
	}
	if env.Store == nil {
		return nil, errors.New("router canary: no record store (the canary's record and the fleet lock)")
	}
	if o.Discard {
		// Nothing in flight is nothing to discard: said without a lock,
		// a record or an engine run (a canary started meanwhile holds
		// the lock and has a record, which the route reads).
		rt, err := Plan(ctx, env, o)
		if err != nil {
			return nil, err
		}
		if rt.Start == StartNothingToDiscard {
			if env.Log != nil {
				fmt.Fprintf(env.Log, "router canary: nothing to discard: no canary is in flight (the staging distribution runs what the primary runs, %s, and the policy is off)\n", rt.Primary)
			}
			return &Result{Outcome: NothingToDiscard, Phase: executor.CanaryDone, Primary: rt.Primary,
				Reason: "no canary in flight: nothing to discard"}, nil
		}
	}
	return runOwn(ctx, env, o)
}

// runOwn is a canary with a record of its own: it takes the fleet lock
// under that record's id (taking over the lock of the unfinished canary
// it resumes once that run's process is gone), and keeps the lock while
// the canary is unfinished — nothing else may change the fleet while
// viewers may reach the staging distribution.
func runOwn(ctx context.Context, env *Env, o Options) (*Result, error) {
	clock := env.Clocked()
	recs, err := records(ctx, env.Store)
	if err != nil {
		return nil, err
	}
	id := executor.NewID(executor.KindCanary)
	if prev := latest(recs); prev != nil && prev.Kind == executor.KindCanary && prev.Canary.Unfinished() {
		id = prev.ID
		// A canary an operator paused is continued by `cellctl rollout
		// resume` only; a discard (`rollout abort`'s) reverts it any time.
		if err := executor.Admit(prev, o.Resume || o.Discard); err != nil {
			return nil, outcome.Locked("", err)
		}
	}
	me := executor.Holder{ID: id, Verb: LockVerb, Host: env.Host, PID: env.PID, Started: clock.Now().UTC(), Nonce: nonce()}
	note, err := executor.Take(ctx, env.Store, me, func(h executor.Holder) bool { return h.Verb == LockVerb }, env.Alive)
	if err != nil {
		var le *executor.LockedError
		if errors.As(err, &le) {
			return nil, outcome.Locked("", fmt.Errorf("`cellctl router canary` changes the router and waits for no one: %w", err))
		}
		return nil, err
	}
	release := func() { _ = env.Store.Unlock(context.WithoutCancel(ctx), me) }
	if note != "" && env.Log != nil {
		fmt.Fprintf(env.Log, "router canary: %s\n", note)
	}
	rec, err := env.Store.Load(ctx, id)
	switch {
	case errors.Is(err, executor.ErrNoRecord):
		rec = &executor.Record{ID: id, Kind: executor.KindCanary, Started: me.Started}
	case err != nil:
		release()
		return nil, fmt.Errorf("router canary: reading its record %s: %w", id, err)
	}
	if env.Prepare != nil {
		if err := env.Prepare(ctx); err != nil {
			if rec.Canary.Unfinished() {
				// Still the unfinished canary's: the lock stays, in this
				// run's name, so the next run can take it over.
				if serr := env.Store.Save(context.WithoutCancel(ctx), withHolder(rec, me, executor.Interrupted, err)); serr != nil {
					return nil, errors.Join(err, fmt.Errorf("saving the record of %s: %w", id, serr))
				}
			} else {
				release()
			}
			return nil, err
		}
	}
	rec.State, rec.Holder, rec.Error, rec.Paused = executor.Running, me, "", nil
	c := &run{env: env, o: o, j: executor.NewJournal(env.Store, clock, rec)}
	if err := c.j.Update(ctx, nil); err != nil {
		release()
		return nil, err
	}
	reqs, _ := env.Store.(executor.Requests)
	c.steer = c.j.Steer(ctx, reqs, o.Resume)
	err = c.run(ctx)
	res := c.result()
	if errors.Is(err, errPaused) {
		// Paused at a step boundary, its record saved so: it keeps the
		// fleet's lock.
		res.Paused = c.j.Snapshot().Paused
		return res, nil
	}
	end := c.j.Update(ctx, func(rec *executor.Record) {
		switch cr := rec.Canary; {
		case cr == nil:
			// Stopped before it started anything (its outputs unreadable).
			rec.State, rec.Error = executor.Interrupted, errText(err)
		case cr.Unfinished():
			rec.State, rec.Error = executor.Interrupted, errText(err)
		case cr != nil && cr.Outcome == Discarded:
			rec.State, rec.Error, rec.Finished = executor.HaltedState, errText(err), cr.Finished
		default:
			rec.State, rec.Error, rec.Finished = executor.Complete, errText(err), cr.Finished
		}
	})
	if !c.canary().Unfinished() && end == nil {
		c.steer.Done(ctx)
		release()
	}
	if err == nil {
		err = end
	}
	return res, err
}

func withHolder(rec *executor.Record, h executor.Holder, st executor.RolloutState, err error) *executor.Record {
	rec.Holder, rec.State, rec.Error = h, st, errText(err)
	return rec
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// records lists the store's records (none when it cannot list). One that
// does not read hides none of the others; when it may be a canary's, the
// canary stops (fail closed: it could be the unfinished one).
func records(ctx context.Context, st executor.Store) ([]*executor.Record, error) {
	l, ok := st.(executor.Lister)
	if !ok {
		return nil, nil
	}
	recs, err := l.List(ctx)
	var bad *backend.UnreadableError
	switch {
	case err == nil:
		return recs, nil
	case errors.As(err, &bad) && !bad.Any("c-") && !bad.Any("r-"):
		return recs, nil
	case bad != nil:
		return nil, fmt.Errorf("router canary: a record that may hold an unfinished canary cannot be read: %w", err)
	}
	return nil, fmt.Errorf("router canary: reading the records: %w", err)
}

type run struct {
	env *Env
	o   Options
	j   *executor.Journal
	// steer reads the operators' requests after every save (nil: a
	// canary in a rollout's record, or a store that keeps none).
	steer *executor.Steering
}

// paused is a step boundary: when an operator asked the canary to pause,
// its record is saved paused and errPaused stops it (the staging
// distribution keeps what it runs; nothing is promoted).
func (c *run) paused(ctx context.Context) error {
	a, err := c.steer.Pause(ctx)
	if err != nil || a == nil {
		return err
	}
	c.logf("canary %s paused by %s at %s; it keeps the fleet's lock: `cellctl rollout resume %s` continues it, `cellctl rollout abort %s` reverts it",
		c.id(), a.By, a.At.UTC().Format(time.RFC3339), c.id(), c.id())
	return errPaused
}

func (c *run) logf(format string, args ...any) {
	if c.env.Log != nil {
		fmt.Fprintf(c.env.Log, "router canary: "+format+"\n", args...)
	}
}

func (c *run) now() time.Time { return c.j.Clock().Now().UTC() }

// canary is a copy of the record's canary state (nil: none yet).
func (c *run) canary() *executor.CanaryRecord {
	var out *executor.CanaryRecord
	c.j.View(func(rec *executor.Record) {
		if rec.Canary != nil {
			cp := *rec.Canary
			cp.Phases = append([]executor.StepRecord(nil), rec.Canary.Phases...)
			out = &cp
		}
	})
	return out
}

// update changes the canary's state and saves the record (fatal on error).
func (c *run) update(ctx context.Context, fn func(*executor.CanaryRecord)) error {
	return c.j.Update(ctx, func(rec *executor.Record) {
		if rec.Canary == nil {
			rec.Canary = &executor.CanaryRecord{}
		}
		fn(rec.Canary)
	})
}

func (c *run) id() string {
	var id string
	c.j.View(func(rec *executor.Record) { id = rec.ID })
	return id
}

func (c *run) run(ctx context.Context) error {
	outs, err := c.env.Outputs(ctx, fleet.RouterStack)
	if err != nil {
		return fmt.Errorf("router canary: reading the router's stack outputs: %w", err)
	}
	prev := c.canary()
	if prev.Unfinished() && !c.o.Discard {
		// A pause asked while no run drove it: stop before any step.
		if err := c.paused(ctx); err != nil {
			return err
		}
	}
	rt, err := c.route(ctx, outs, prev)
	if err != nil {
		return err
	}
	return c.follow(ctx, rt, outs, prev)
}

// follow runs the route: the canary's steps from where route says it
// starts, each phase the one the route names (a phase may end the canary
// early: a breach discards it, an unchanged function needs no canary).
func (c *run) follow(ctx context.Context, rt *Route, outs map[string]any, prev *executor.CanaryRecord) error {
	primary := primaryOf(outs)
	switch rt.Start {
	case StartDiscard:
		return c.discardCmd(ctx, outs, prev)
	case StartFirstDeploy:
		if prev.Unfinished() {
			c.resumeLog(prev)
		} else if err := c.start(ctx, &executor.CanaryRecord{Phase: executor.CanaryStarting}); err != nil {
			return err
		}
		return c.firstDeploy(ctx)
	case StartUnchanged:
		c.logf("nothing to ship: the router's inputs and deployed outputs are what they were when it was last shipped (the primary runs %s): no engine run", primary)
		return c.start(ctx, &executor.CanaryRecord{Phase: executor.CanaryDone, Outcome: Unchanged, Primary: primary,
			Reason:       "nothing changed since the router was last shipped: no engine run",
			PrimaryTable: tableVersion(outs), CandidateTable: tableVersion(outs), Inputs: rt.inputs, Function: rt.function, Deployed: rt.deployed, Finished: c.now()})
	case StartSameFunction:
		return c.sameFunction(ctx, rt, outs)
	case StartFresh:
		if rt.unrecorded != "" {
			c.logf("the router's staging distribution is in a %s phase nobody recorded (an older cellctl, or a run killed before its record); starting again from the smoke test (the primary still runs %s)", rt.unrecorded, primary)
		}
		token, err := c.token()
		if err != nil {
			return err
		}
		cr := &executor.CanaryRecord{Phase: executor.CanaryStarting, PhaseSince: c.now(), Primary: primary,
			Header: canary.DefaultHeader, HeaderValue: token, Weight: c.o.Weight, IdleTTL: c.o.IdleTTL, MaximumTTL: c.o.MaximumTTL, Inputs: rt.inputs, Function: rt.function}
		if rt.unrecorded == "" {
			// Between canaries both distributions run the newest version:
			// tableVersion is the primary's.
			cr.PrimaryTable = tableVersion(outs)
		}
		if err := c.start(ctx, cr); err != nil {
			return err
		}
		return c.fromHeader(ctx)
	}
	// The rest continue the unfinished canary prev.
	c.resumeLog(prev)
	switch rt.Start {
	case StartAgain:
		if rt.why != "" {
			c.logf("%s", rt.why)
		}
		return c.again(ctx)
	case StartJudged:
		i := lastPhase(prev, prev.Phase)
		c.logf("its %s phase was judged (%s): discarding it", prev.Phase, prev.Phases[i].Reason)
		return c.halt(ctx, prev.Phase, prev.Phases[i].Reason, "fix the routing table or the edge handler, then run `cellctl router canary` again")
	case StartBake:
		i := lastPhase(prev, prev.Phase)
		left := c.bakeOf(prev.Phase) - c.now().Sub(prev.Phases[i].BakeStart)
		c.logf("the %s phase was baking: continuing its bake (%s left)", prev.Phase, max(left, 0).Round(time.Second))
		if err := c.bake(ctx, i); err != nil {
			return err
		}
		if prev.Phase == executor.CanaryHeader {
			return c.fromWeight(ctx)
		}
		return c.promote(ctx)
	case StartPromote:
		return c.promote(ctx)
	case StartFinishRevert:
		c.logf("finishing its revert: the staging distribution goes back to %s", prev.Primary)
		if err := c.revert(ctx); err != nil {
			return fmt.Errorf("router canary %s: finishing the revert failed: %w; run `cellctl router canary --discard`", c.id(), err)
		}
		outcomeName := Discarded
		if prev.Reason == discardedByOperator {
			outcomeName = Reverted
		}
		if err := c.finish(ctx, outcomeName, nil); err != nil {
			return err
		}
		if outcomeName == Reverted {
			return nil
		}
		return &outcome.HaltedError{Wave: "router",
			Err:  fmt.Errorf("router canary %s halted (%s) and its revert was finished now: the staging distribution runs %s again and the primary never ran %s", c.id(), prev.Reason, prev.Primary, prev.Candidate),
			Next: "fix the routing table or the edge handler, then run `cellctl router canary` again"}
	}
	return fmt.Errorf("router canary %s: its record is in phase %q, which this cellctl cannot continue; run `cellctl router canary --discard`", c.id(), prev.Phase)
}

// sameFunction applies a router change whose edge function is the one
// both distributions run (StartSameFunction): one update with both on
// that version, nothing to canary. Should the update publish a new
// version after all, that version is canaried from the smoke phase — it
// never reaches viewers ungated.
func (c *run) sameFunction(ctx context.Context, rt *Route, outs map[string]any) error {
	primary := primaryOf(outs)
	if err := c.start(ctx, &executor.CanaryRecord{Phase: executor.CanaryStarting, PhaseSince: c.now(), Primary: primary,
		Weight: c.o.Weight, IdleTTL: c.o.IdleTTL, MaximumTTL: c.o.MaximumTTL, Inputs: rt.inputs, Function: rt.function}); err != nil {
		return err
	}
	after, err := c.up(ctx, canary.Traffic{Phase: canary.Stable, PrimaryFunctionArn: primary})
	if err != nil {
		return c.discardAfter(ctx, fmt.Errorf("router canary: applying the router's changes to both distributions: %w", err))
	}
	if newest := stringOf(after, "functionArn"); newest != "" && newest != primary {
		c.logf("the update published a new edge function version (%s) though the function renders as it did: canarying it", newest)
		return c.fromHeader(ctx)
	}
	c.logf("the edge function is unchanged (%s): nothing to canary; the router's other changes were applied to both distributions", primary)
	return c.update(ctx, func(cr *executor.CanaryRecord) {
		cr.Phase, cr.Outcome, cr.Finished = executor.CanaryDone, Unchanged, c.now()
		cr.Candidate, cr.PrimaryTable, cr.CandidateTable, cr.Deployed = primary, tableVersion(after), tableVersion(after), Deployed(after)
	})
}

func (c *run) resumeLog(cr *executor.CanaryRecord) {
	since := ""
	if !cr.PhaseSince.IsZero() {
		since = " since " + cr.PhaseSince.Format(time.RFC3339)
	}
	c.logf("resuming canary %s: it stopped in its %s phase%s (the primary runs %s)", c.id(), cr.Phase, since, cr.Primary)
}

// start records a new canary in the record (replacing a finished one).
func (c *run) start(ctx context.Context, cr *executor.CanaryRecord) error {
	return c.j.Update(ctx, func(rec *executor.Record) { rec.Canary = cr })
}

func (c *run) firstDeploy(ctx context.Context) error {
	c.logf("the router has never been deployed: deploying it (nothing to canary)")
	outs, err := c.upStack(ctx, nil)
	if err != nil {
		return err
	}
	inputs, _ := c.inputs(ctx)
	return c.update(ctx, func(cr *executor.CanaryRecord) {
		cr.Phase, cr.Outcome, cr.Finished = executor.CanaryDone, FirstDeploy, c.now()
		cr.Primary, cr.PrimaryTable, cr.CandidateTable = primaryOf(outs), tableVersion(outs), tableVersion(outs)
		cr.Inputs, cr.Function, cr.Deployed = inputs.inputs, inputs.function, Deployed(outs)
	})
}

// again runs the smoke phase of a resumed canary anew, with the inputs as
// they are now (the program may have changed since the last run).
func (c *run) again(ctx context.Context) error {
	inputs, err := c.inputs(ctx)
	if err != nil {
		return err
	}
	if err := c.update(ctx, func(cr *executor.CanaryRecord) { cr.Inputs, cr.Function = inputs.inputs, inputs.function }); err != nil {
		return err
	}
	return c.fromHeader(ctx)
}

func lastPhase(cr *executor.CanaryRecord, kind string) int {
	for i := len(cr.Phases) - 1; i >= 0; i-- {
		if cr.Phases[i].Kind == kind {
			return i
		}
	}
	return -1
}

func (c *run) bakeOf(phase string) time.Duration {
	if phase == executor.CanaryWeight {
		return c.o.WeightBake
	}
	return c.o.HeaderBake
}

func (c *run) minOf(phase string) int {
	if phase == executor.CanaryWeight {
		return c.o.WeightMinRequests
	}
	return c.o.HeaderMinRequests
}

// traffic is the split of a phase, from the record.
func traffic(cr *executor.CanaryRecord, phase string) canary.Traffic {
	switch phase {
	case executor.CanaryHeader:
		return canary.Traffic{Phase: canary.Header, PrimaryFunctionArn: cr.Primary, HeaderValue: cr.HeaderValue}
	case executor.CanaryWeight:
		return canary.Traffic{Phase: canary.Weight, PrimaryFunctionArn: cr.Primary, Weight: cr.Weight, IdleTTL: cr.IdleTTL, MaximumTTL: cr.MaximumTTL}
	case executor.CanaryPromoting:
		// Exactly the canaried version, whatever the program's newest is.
		return canary.Traffic{Phase: canary.Stable, PrimaryFunctionArn: cr.Candidate}
	}
	return canary.Traffic{Phase: canary.Stable, PrimaryFunctionArn: cr.Primary}
}

// enter records a phase and its step before its update runs.
func (c *run) enter(ctx context.Context, phase string) (int, error) {
	i := -1
	err := c.update(ctx, func(cr *executor.CanaryRecord) {
		cr.Phase = phase
		cr.Phases = append(cr.Phases, executor.StepRecord{Name: phase, Kind: phase, Cells: []string{fleet.RouterStack}, State: executor.WaveUpdating, Started: c.now()})
		i = len(cr.Phases) - 1
	})
	return i, err
}

// fromHeader publishes the candidate to the staging distribution for the
// smoke header, bakes, and goes on.
func (c *run) fromHeader(ctx context.Context) error {
	cr := c.canary()
	if cr.HeaderValue == "" {
		token, err := c.token()
		if err != nil {
			return err
		}
		if err := c.update(ctx, func(cr *executor.CanaryRecord) {
			cr.Header, cr.HeaderValue, cr.Weight, cr.IdleTTL, cr.MaximumTTL = canary.DefaultHeader, token, c.o.Weight, c.o.IdleTTL, c.o.MaximumTTL
		}); err != nil {
			return err
		}
		cr = c.canary()
	}
	i, err := c.enter(ctx, executor.CanaryHeader)
	if err != nil {
		return err
	}
	outs, err := c.up(ctx, traffic(cr, executor.CanaryHeader))
	if err != nil {
		return c.discardAfter(ctx, fmt.Errorf("router canary: publishing the candidate to the staging distribution: %w", err))
	}
	candidate, _ := outs["stagingFunctionArn"].(string)
	staging, _ := outs["stagingDistributionId"].(string)
	if cr.Candidate != "" && candidate != cr.Candidate {
		c.logf("the candidate changed since the last run (%s → %s): this smoke phase judges the new one", cr.Candidate, candidate)
	}
	if err := c.update(ctx, func(cr *executor.CanaryRecord) {
		cr.Candidate, cr.StagingDistribution, cr.PhaseSince = candidate, staging, c.now()
		cr.CandidateTable = tableVersion(outs)
	}); err != nil {
		return err
	}
	if candidate == "" || staging == "" {
		return c.discardAfter(ctx, errors.New("router canary: the router stack exports no stagingFunctionArn/stagingDistributionId: cannot tell what the staging distribution runs"))
	}
	if candidate == cr.Primary {
		if _, err := c.up(ctx, traffic(cr, executor.CanaryDiscarding)); err != nil {
			return err
		}
		deployed, err := c.env.Outputs(ctx, fleet.RouterStack)
		if err != nil {
			return err
		}
		c.logf("the edge function is unchanged (%s): nothing to canary; other router changes were applied to both distributions", cr.Primary)
		return c.update(ctx, func(cr *executor.CanaryRecord) {
			cr.Phase, cr.Outcome, cr.Finished, cr.Phases = executor.CanaryDone, Unchanged, c.now(), nil
			cr.PrimaryTable, cr.Deployed = tableVersion(deployed), Deployed(deployed)
		})
	}
	c.logf("smoke test: the staging distribution %s runs %s for requests with %s: %s; the primary keeps %s", staging, candidate, canary.DefaultHeader, cr.HeaderValue, cr.Primary)
	if err := c.baking(ctx, i); err != nil {
		return err
	}
	if err := c.bake(ctx, i); err != nil {
		return err
	}
	return c.fromWeight(ctx)
}

// fromWeight sends the weighted share of viewers to the staging
// distribution, bakes, and promotes.
func (c *run) fromWeight(ctx context.Context) error {
	if err := c.paused(ctx); err != nil {
		return err
	}
	cr := c.canary()
	i, err := c.enter(ctx, executor.CanaryWeight)
	if err != nil {
		return err
	}
	outs, err := c.up(ctx, traffic(cr, executor.CanaryWeight))
	if err != nil {
		return c.discardAfter(ctx, fmt.Errorf("router canary: switching to %g%% of viewers: %w", 100*cr.Weight, err))
	}
	if got, _ := outs["stagingFunctionArn"].(string); got != cr.Candidate {
		return c.discardAfter(ctx, fmt.Errorf("router canary: the staging distribution runs %q, not the smoke-tested %s: the function changed meanwhile; run `cellctl router canary` again", got, cr.Candidate))
	}
	if err := c.update(ctx, func(cr *executor.CanaryRecord) { cr.PhaseSince = c.now() }); err != nil {
		return err
	}
	c.logf("canary: %g%% of viewers go to the staging distribution (sessions sticky for %d–%d s)", 100*cr.Weight, cr.IdleTTL, cr.MaximumTTL)
	if err := c.baking(ctx, i); err != nil {
		return err
	}
	if err := c.bake(ctx, i); err != nil {
		return err
	}
	return c.promote(ctx)
}

// promote gives the primary exactly the canaried version.
func (c *run) promote(ctx context.Context) error {
	if err := c.paused(ctx); err != nil {
		return err
	}
	if err := c.update(ctx, func(cr *executor.CanaryRecord) { cr.Phase, cr.PhaseSince = executor.CanaryPromoting, c.now() }); err != nil {
		return err
	}
	cr := c.canary()
	outs, err := c.up(ctx, traffic(cr, executor.CanaryPromoting))
	if err != nil {
		return fmt.Errorf("router canary: promoting %s to the primary distribution: %w (the canary passed; rerun `cellctl router canary` to promote, or `cellctl router canary --discard`)", cr.Candidate, err)
	}
	if got, _ := outs["primaryFunctionArn"].(string); got != cr.Candidate {
		return fmt.Errorf("router canary: after the promotion the primary runs %q, not the canaried %s; run `cellctl router canary` again", got, cr.Candidate)
	}
	c.logf("promoted: the primary distribution runs %s", cr.Candidate)
	return c.update(ctx, func(cr *executor.CanaryRecord) {
		cr.Phase, cr.Outcome, cr.Finished = executor.CanaryDone, Promoted, c.now()
		cr.PrimaryTable, cr.Deployed = cr.CandidateTable, Deployed(outs)
	})
}

// baking records that phase step i's traffic split is in place: its bake
// starts now.
func (c *run) baking(ctx context.Context, i int) error {
	return c.update(ctx, func(cr *executor.CanaryRecord) {
		st := &cr.Phases[i]
		st.State, st.BakeStart = executor.WaveBaking, c.now()
	})
}

// bake judges the staging distribution over phase step i with the
// executor's bake loop (executor.Baker), from the step's recorded start,
// and the gate evaluator over the edge signals; every poll is saved
// before it is acted on. A breach or an inconclusive bake discards the
// canary and halts.
func (c *run) bake(ctx context.Context, i int) error {
	cr := c.canary()
	st := cr.Phases[i]
	phase := st.Kind
	reader, err := c.env.Reader(ctx, c.metricsAccess())
	if err != nil {
		return c.halt(ctx, phase, fmt.Sprintf("cannot read CloudWatch in %s: %v", signal.MetricsRegion, err),
			"the canary could not be judged (its metrics were unreadable): fix the read, then run `cellctl router canary` again")
	}
	minRequests := c.minOf(phase)
	g := &edgeGate{
		checker: &gate.Checker{Reader: reader, Gate: waves.Gate{MinRequests: minRequests, Poll: c.o.Poll}, Signals: signal.Edge},
		target:  gate.Target{Cell: fleet.RouterStack, Distribution: cr.StagingDistribution, Thresholds: c.o.Thresholds},
	}
	b := executor.Baker{Gate: g, Clock: c.j.Clock(), Record: func(p executor.Poll) error {
		for _, v := range p.Verdicts {
			c.logf("%s phase: %s", phase, verdictLine(v))
		}
		return c.update(ctx, func(cr *executor.CanaryRecord) { cr.Phases[i].Polls = append(cr.Phases[i].Polls, p) })
	}}
	res, err := b.Bake(ctx, executor.BakeSpec{Step: phase + " phase", Cells: []string{fleet.RouterStack}, Start: st.BakeStart, Duration: c.bakeOf(phase), Poll: c.o.Poll})
	if err != nil {
		if c.j.Err() != nil {
			return err
		}
		return fmt.Errorf("router canary: %w (the staging distribution still runs %s; run `cellctl router canary` again to continue, or `cellctl router canary --discard`)", err, cr.Candidate)
	}
	next := "fix the routing table or the edge handler, then run `cellctl router canary` again"
	reason := ""
	switch res.Decision {
	case waves.Breached:
		reason = res.Breach.String()
	case waves.Inconclusive:
		// An inconclusive canary is never promoted. Too little traffic (or
		// no verdict yet) says nothing about the table or the handler: say
		// so, and what would conclude it.
		reason = "inconclusive: " + res.Reason
		next = fmt.Sprintf("the canary was inconclusive, not failed (nothing shows the routing table or the edge handler is wrong): "+
			"run `cellctl router canary` again with a longer bake or more traffic, or lower its minimum (--header-min-requests / --weight-min-requests, now %d)", minRequests)
	}
	if err := c.update(ctx, func(cr *executor.CanaryRecord) {
		s := &cr.Phases[i]
		s.Decision, s.Breach, s.Reason, s.Finished = res.Decision, res.Breach, reason, c.now()
		s.State = executor.WaveDone
		if res.Decision != waves.Pass {
			s.State = executor.WaveHalted
		}
	}); err != nil {
		return err
	}
	if res.Decision == waves.Pass {
		return nil
	}
	return c.halt(ctx, phase, reason, next)
}

// edgeGate is the gate evaluator as the bake loop's Gate for the one
// target a canary judges: the staging distribution.
type edgeGate struct {
	checker *gate.Checker
	target  gate.Target
}

func (g *edgeGate) Check(ctx context.Context, q executor.GateQuery) ([]executor.Verdict, error) {
	return []executor.Verdict{fromwaves.Verdict(g.checker.Check(ctx, g.target, q.Start, q.End))}, nil
}

func verdictLine(v executor.Verdict) string {
	switch {
	case v.Breach != nil:
		return v.Breach.String()
	case v.Reason != "":
		return fmt.Sprintf("%s: %s: %s", v.Cell, v.Decision, v.Reason)
	}
	return fmt.Sprintf("%s: %s", v.Cell, v.Decision)
}

// discardedByOperator is the reason --discard records.
const discardedByOperator = "discarded by the operator (--discard)"

// halt discards the canary and returns the halt (exit 3).
func (c *run) halt(ctx context.Context, phase, reason, next string) error {
	if err := c.update(ctx, func(cr *executor.CanaryRecord) { cr.Phase, cr.Reason = executor.CanaryDiscarding, reason }); err != nil {
		return err
	}
	cr := c.canary()
	if err := c.revert(ctx); err != nil {
		return fmt.Errorf("router canary: the %s phase failed (%s) and reverting the staging distribution failed: %w; run `cellctl router canary --discard`", phase, reason, err)
	}
	if err := c.finish(ctx, Discarded, nil); err != nil {
		return err
	}
	return &outcome.HaltedError{
		Wave: "router",
		Err:  fmt.Errorf("router canary halted in its %s phase: %s; the staging distribution was reverted to %s and the primary never ran %s", phase, reason, cr.Primary, cr.Candidate),
		Next: next,
	}
}

// discardAfter reverts the staging distribution after a failed step and
// returns the step's error.
func (c *run) discardAfter(ctx context.Context, err error) error {
	if uerr := c.update(ctx, func(cr *executor.CanaryRecord) { cr.Phase, cr.Reason = executor.CanaryDiscarding, err.Error() }); uerr != nil {
		return errors.Join(err, uerr)
	}
	if derr := c.revert(ctx); derr != nil {
		return fmt.Errorf("%w; reverting the staging distribution also failed: %v (run `cellctl router canary --discard`)", err, derr)
	}
	if ferr := c.finish(ctx, Discarded, nil); ferr != nil {
		return errors.Join(err, ferr)
	}
	return err
}

// discardCmd is --discard: the staging distribution goes back to the
// primary the unfinished canary recorded (or, with no record, the one the
// deployed router names).
func (c *run) discardCmd(ctx context.Context, outs map[string]any, prev *executor.CanaryRecord) error {
	if !prev.Unfinished() {
		primary := primaryOf(outs)
		if primary == "" {
			return errors.New("router canary --discard: the router is not deployed (no primaryFunctionArn output): nothing to revert")
		}
		if err := c.start(ctx, &executor.CanaryRecord{Primary: primary, Candidate: stringOf(outs, "stagingFunctionArn")}); err != nil {
			return err
		}
	}
	if err := c.update(ctx, func(cr *executor.CanaryRecord) { cr.Phase, cr.Reason = executor.CanaryDiscarding, discardedByOperator }); err != nil {
		return err
	}
	if err := c.revert(ctx); err != nil {
		return err
	}
	c.logf("staging distribution reverted to %s, policy disabled; the primary was not touched", c.canary().Primary)
	return c.finish(ctx, Reverted, nil)
}

// revert puts the staging distribution back on the recorded primary and
// disables the policy.
func (c *run) revert(ctx context.Context) error {
	cr := c.canary()
	c.logf("discarding: the staging distribution goes back to %s, the policy is disabled", cr.Primary)
	_, err := c.up(ctx, traffic(cr, executor.CanaryDiscarding))
	return err
}

func (c *run) finish(ctx context.Context, outcomeName string, outs map[string]any) error {
	return c.update(ctx, func(cr *executor.CanaryRecord) {
		cr.Phase, cr.Outcome, cr.Finished = executor.CanaryDone, outcomeName, c.now()
		if outs != nil {
			cr.Deployed = Deployed(outs)
		}
	})
}

func (c *run) up(ctx context.Context, t canary.Traffic) (map[string]any, error) {
	return c.upStack(ctx, &t)
}

func (c *run) upStack(ctx context.Context, t *canary.Traffic) (map[string]any, error) {
	phase := "stable"
	if t != nil {
		phase = string(t.Phase)
	}
	res, err := apply.Apply(ctx, c.env.Runner, stackrun.Request{Stack: fleet.RouterStack, Op: stackrun.OpUp, Inputs: stackrun.Inputs{Router: t}})
	if err != nil {
		return nil, fmt.Errorf("router (%s): %w", phase, err)
	}
	if res.Outputs != nil {
		return res.Outputs, nil
	}
	return c.env.Outputs(ctx, fleet.RouterStack)
}

func (c *run) token() (string, error) {
	if c.env.Token != nil {
		return c.env.Token()
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// result is what the record says the canary did.
func (c *run) result() *Result {
	res := &Result{ID: c.id()}
	cr := c.canary()
	if cr == nil {
		return res
	}
	res.Outcome, res.Phase, res.Reason = cr.Outcome, cr.Phase, cr.Reason
	res.Primary, res.Candidate, res.StagingDistribution = cr.Primary, cr.Candidate, cr.StagingDistribution
	res.PrimaryTable, res.CandidateTable = cr.PrimaryTable, cr.CandidateTable
	if cr.HeaderValue != "" && cr.Candidate != cr.Primary {
		res.Header, res.HeaderValue = cr.Header, cr.HeaderValue
	}
	for _, p := range cr.Phases {
		t := traffic(cr, p.Kind)
		res.Steps = append(res.Steps, Step{Phase: t.Phase, Traffic: t, Decision: p.Decision, Reason: p.Reason, Polls: p.Polls})
	}
	return res
}

func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// primaryOf is the version the deployed primary distribution runs: the
// primaryFunctionArn output, or functionArn for a router deployed before
// the staging distribution existed (its only distribution ran it).
func primaryOf(outs map[string]any) string {
	if s, _ := outs["primaryFunctionArn"].(string); s != "" {
		return s
	}
	s, _ := outs["functionArn"].(string)
	return s
}

func stringOf(outs map[string]any, key string) string {
	s, _ := outs[key].(string)
	return s
}

// tableVersion is the router's tableVersion output: the table baked into
// the function's newest version (0: none).
func tableVersion(outs map[string]any) int64 {
	v, ok := outs["tableVersion"].(float64)
	if !ok || v != math.Trunc(v) || v < 0 {
		return 0
	}
	return int64(v)
}

// metricsAccess is where the edge metrics are read: the router's account
// (the distributions are its own), in CloudFront's metrics region.
func (c *run) metricsAccess() fleet.Access {
	if f := c.env.Fleet; f != nil && f.Router != nil {
		return f.Router.Access().InRegion(signal.MetricsRegion)
	}
	return fleet.Access{Region: signal.MetricsRegion}
}
