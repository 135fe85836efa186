// Package routercanary ships a router change the way cells are shipped:
// gradually, gated, and undone on breach. A new edge function version (a
// new routing table or handler) first runs on the router's CloudFront
// staging distribution only, for requests carrying a smoke-test header;
// then for a weighted share of all viewers (at most 15 %, CloudFront's
// cap); then, if the staging distribution's 5xx rate and the function's
// own errors stayed within their thresholds through both bakes, the
// primary distribution takes the candidate version (promotion). On a
// breach, or too little traffic to judge, the staging distribution is
// reverted to what the primary runs and the primary is never touched.
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
	"io"
	"math"
	"time"

	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/runplan"
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

// Env is what a canary runs against.
type Env struct {
	// Runner runs one stack's operation (internal/engine).
	Runner runplan.StackRunner
	// Outputs reads a deployed stack's outputs.
	Outputs func(ctx context.Context, stack string) (map[string]any, error)
	// Reader returns the CloudWatch reader of a region; CloudFront's
	// metrics are read in us-east-1 (signal.MetricsRegion).
	Reader func(ctx context.Context, region string) (gate.Reader, error)
	// Clock is the bake's clock (nil: the wall clock), the executor's as
	// every gated change's.
	Clock executor.Clock
	// Log receives one line per step and poll (stderr).
	Log io.Writer
	// Token returns the smoke header's value; nil: 16 random hex digits.
	Token func() (string, error)
}

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
	Unchanged   = "unchanged"    // the edge function did not change: nothing to canary
	Promoted    = "promoted"     // the primary runs the candidate
	Discarded   = "discarded"    // a bake breached or was inconclusive: staging reverted
	Reverted    = "reverted"     // --discard
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

// Result is what a canary did.
type Result struct {
	Outcome string `json:"outcome"`
	// Primary is the version the primary ran before; Candidate the newest.
	Primary             string `json:"primaryFunctionArn,omitempty"`
	Candidate           string `json:"candidateFunctionArn,omitempty"`
	StagingDistribution string `json:"stagingDistributionId,omitempty"`
	// Header and HeaderValue select the staging distribution in the smoke
	// phase (for a synthetic client on AWS).
	Header      string `json:"header,omitempty"`
	HeaderValue string `json:"headerValue,omitempty"`
	Steps       []Step `json:"steps,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// Run runs one canary of the router stack's current program.
func Run(ctx context.Context, env *Env, o Options) (*Result, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	c := &run{env: env, o: o, res: &Result{}}
	return c.res, c.run(ctx)
}

type run struct {
	env *Env
	o   Options
	res *Result
}

func (c *run) logf(format string, args ...any) {
	if c.env.Log != nil {
		fmt.Fprintf(c.env.Log, "router canary: "+format+"\n", args...)
	}
}

func (c *run) run(ctx context.Context) error {
	outs, err := c.env.Outputs(ctx, fleet.RouterStack)
	if err != nil {
		return fmt.Errorf("router canary: reading the router's stack outputs: %w", err)
	}
	primary := primaryOf(outs)
	if c.o.Discard {
		if primary == "" {
			return errors.New("router canary --discard: the router is not deployed (no primaryFunctionArn output): nothing to revert")
		}
		c.res.Primary = primary
		if _, err := c.up(ctx, canary.Traffic{Phase: canary.Stable, PrimaryFunctionArn: primary}); err != nil {
			return err
		}
		c.res.Outcome = Reverted
		c.logf("staging distribution reverted to %s, policy disabled; the primary was not touched", primary)
		return nil
	}
	if len(outs) == 0 || primary == "" {
		// Nothing serves viewers yet: there is no primary to protect.
		c.logf("the router has never been deployed: deploying it (nothing to canary)")
		if _, err := c.upStack(ctx, nil); err != nil {
			return err
		}
		c.res.Outcome = FirstDeploy
		return nil
	}
	c.res.Primary = primary
	if phase, _ := outs["canaryPhase"].(string); phase != "" && phase != string(canary.Stable) {
		c.logf("the last canary stopped in its %s phase; starting again from the smoke test (the primary still runs %s)", phase, primary)
	}
	token, err := c.token()
	if err != nil {
		return err
	}
	header := canary.Traffic{Phase: canary.Header, PrimaryFunctionArn: primary, HeaderValue: token}
	outs, err = c.up(ctx, header)
	if err != nil {
		return c.discardAfter(ctx, fmt.Errorf("router canary: publishing the candidate to the staging distribution: %w", err))
	}
	candidate, _ := outs["stagingFunctionArn"].(string)
	staging, _ := outs["stagingDistributionId"].(string)
	c.res.Candidate, c.res.StagingDistribution = candidate, staging
	c.res.Header, c.res.HeaderValue = canary.DefaultHeader, token
	if candidate == "" || staging == "" {
		return c.discardAfter(ctx, errors.New("router canary: the router stack exports no stagingFunctionArn/stagingDistributionId: cannot tell what the staging distribution runs"))
	}
	if candidate == primary {
		c.res.Steps = nil
		if _, err := c.up(ctx, canary.Traffic{Phase: canary.Stable, PrimaryFunctionArn: primary}); err != nil {
			return err
		}
		c.res.Outcome = Unchanged
		c.logf("the edge function is unchanged (%s): nothing to canary; other router changes were applied to both distributions", primary)
		return nil
	}
	c.logf("smoke test: the staging distribution %s runs %s for requests with %s: %s; the primary keeps %s", staging, candidate, canary.DefaultHeader, token, primary)
	if err := c.bake(ctx, header, c.o.HeaderBake, c.o.HeaderMinRequests); err != nil {
		return err
	}
	weight := canary.Traffic{Phase: canary.Weight, PrimaryFunctionArn: primary, Weight: c.o.Weight, IdleTTL: c.o.IdleTTL, MaximumTTL: c.o.MaximumTTL}
	if _, err := c.up(ctx, weight); err != nil {
		return c.discardAfter(ctx, fmt.Errorf("router canary: switching to %g%% of viewers: %w", 100*c.o.Weight, err))
	}
	c.logf("canary: %g%% of viewers go to the staging distribution (sessions sticky for %d–%d s)", 100*c.o.Weight, c.o.IdleTTL, c.o.MaximumTTL)
	if err := c.bake(ctx, weight, c.o.WeightBake, c.o.WeightMinRequests); err != nil {
		return err
	}
	outs, err = c.up(ctx, canary.Traffic{Phase: canary.Stable})
	if err != nil {
		return fmt.Errorf("router canary: promoting %s to the primary distribution: %w (the canary passed; rerun `cellctl router canary` to promote, or `cellctl router canary --discard`)", candidate, err)
	}
	if got, _ := outs["primaryFunctionArn"].(string); got != candidate {
		return fmt.Errorf("router canary: after the promotion the primary runs %q, not the canaried %s: the function changed meanwhile; run `cellctl router canary` again", got, candidate)
	}
	c.res.Outcome = Promoted
	c.logf("promoted: the primary distribution runs %s", candidate)
	return nil
}

// bake judges the staging distribution over one phase with the executor's
// bake loop (executor.Baker) and the gate evaluator over the edge signals;
// a breach or an inconclusive bake discards the canary and halts.
func (c *run) bake(ctx context.Context, t canary.Traffic, d time.Duration, minRequests int) error {
	c.res.Steps = append(c.res.Steps, Step{Phase: t.Phase, Traffic: t})
	step := &c.res.Steps[len(c.res.Steps)-1]
	reader, err := c.env.Reader(ctx, signal.MetricsRegion)
	if err != nil {
		return c.halt(ctx, t.Phase, fmt.Sprintf("cannot read CloudWatch in %s: %v", signal.MetricsRegion, err),
			"the canary could not be judged (its metrics were unreadable): fix the read, then run `cellctl router canary` again")
	}
	clock := c.env.Clock
	if clock == nil {
		clock = executor.RealClock{}
	}
	g := &edgeGate{
		checker: &gate.Checker{Reader: reader, Gate: waves.Gate{MinRequests: minRequests, Poll: c.o.Poll}, Signals: signal.Edge},
		target:  gate.Target{Cell: fleet.RouterStack, Distribution: c.res.StagingDistribution, Thresholds: c.o.Thresholds},
	}
	b := executor.Baker{Gate: g, Clock: clock, Record: func(p executor.Poll) error {
		step.Polls = append(step.Polls, p)
		for _, v := range p.Verdicts {
			c.logf("%s phase: %s", t.Phase, verdictLine(v))
		}
		return nil
	}}
	res, err := b.Bake(ctx, executor.BakeSpec{Step: string(t.Phase) + " phase", Cells: []string{fleet.RouterStack}, Start: clock.Now().UTC(), Duration: d, Poll: c.o.Poll})
	if err != nil {
		return fmt.Errorf("router canary: %w (the staging distribution still runs %s; run `cellctl router canary` again, or `cellctl router canary --discard`)", err, c.res.Candidate)
	}
	step.Decision = res.Decision
	next := "fix the routing table or the edge handler, then run `cellctl router canary` again"
	switch res.Decision {
	case waves.Breached:
		step.Reason = res.Breach.String()
	case waves.Inconclusive:
		// An inconclusive canary is never promoted. Too little traffic (or
		// no verdict yet) says nothing about the table or the handler: say
		// so, and what would conclude it.
		step.Reason = "inconclusive: " + res.Reason
		next = fmt.Sprintf("the canary was inconclusive, not failed (nothing shows the routing table or the edge handler is wrong): "+
			"run `cellctl router canary` again with a longer bake or more traffic, or lower its minimum (--header-min-requests / --weight-min-requests, now %d)", minRequests)
	default:
		return nil
	}
	return c.halt(ctx, t.Phase, step.Reason, next)
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

// halt discards the canary and returns the halt (exit 3).
func (c *run) halt(ctx context.Context, phase canary.Phase, reason, next string) error {
	c.res.Reason = reason
	if err := c.discard(ctx); err != nil {
		return fmt.Errorf("router canary: the %s phase failed (%s) and reverting the staging distribution failed: %w; run `cellctl router canary --discard`", phase, reason, err)
	}
	c.res.Outcome = Discarded
	return &outcome.HaltedError{
		Wave: "router",
		Err:  fmt.Errorf("router canary halted in its %s phase: %s; the staging distribution was reverted to %s and the primary never ran %s", phase, reason, c.res.Primary, c.res.Candidate),
		Next: next,
	}
}

// discardAfter reverts the staging distribution after a failed step and
// returns the step's error.
func (c *run) discardAfter(ctx context.Context, err error) error {
	if derr := c.discard(ctx); derr != nil {
		return fmt.Errorf("%w; reverting the staging distribution also failed: %v (run `cellctl router canary --discard`)", err, derr)
	}
	c.res.Outcome = Discarded
	return err
}

func (c *run) discard(ctx context.Context) error {
	c.logf("discarding: the staging distribution goes back to %s, the policy is disabled", c.res.Primary)
	_, err := c.up(ctx, canary.Traffic{Phase: canary.Stable, PrimaryFunctionArn: c.res.Primary})
	return err
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
