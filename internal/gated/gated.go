// Package gated holds what every gated change of the fleet — a rollout
// (internal/deploy), a router canary (internal/routercanary), a secret
// rotation (internal/originsecret) — runs against: the one Env the
// composition root (cmd/cellctl/cmdutil.Factory.DeployEnv) builds once.
// Each change embeds it and adds only what is its own.
package gated

import (
	"context"
	"io"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/runplan"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/gate"
)

// Env is a gated change's surroundings: the fleet it changes, the engine
// and CloudWatch it changes and judges it through, the records and lock
// it keeps, its clock and log, and who this run is in the fleet lock.
type Env struct {
	// Fleet is the fleet's desired state (internal/desired): the
	// repository plus what earlier rollouts shipped and kept. The router
	// canary fingerprints the router's inputs from it (nil: every canary
	// ships).
	Fleet *fleet.Fleet
	// Runner runs one stack's operation through the apply path
	// (internal/apply.Runner: its gates, then the engine).
	Runner runplan.StackRunner
	// Outputs reads a deployed stack's outputs (secrets masked); nil,
	// nil when it was never deployed.
	Outputs func(ctx context.Context, stack string) (map[string]any, error)
	// Reader returns the CloudWatch reader of an account and region (a
	// cell's Access: its role, its region; CloudFront's metrics are read
	// in the router's account in us-east-1, signal.MetricsRegion).
	Reader func(ctx context.Context, a fleet.Access) (gate.Reader, error)
	// LinkedChange says how the engine applies a router change that
	// touches a setting CloudFront locks on the linked primary
	// distribution (price class, aliases, certificate, HTTP version):
	// each of the router's ups runs the unlink sequence (detach the
	// policy, apply, attach it again; engine.RouterLinkedChange; "":
	// none). A dry run prints it; nil: not asked.
	LinkedChange func(ctx context.Context) (string, error)
	// Store keeps the records of every rollout, canary and rotation and
	// the fleet lock (internal/adapters/backend). A store that lists
	// them (executor.Lister) lets a change find what earlier runs left.
	// The secret rotation needs one that lists and says so in its own
	// field (originsecret.Rotator.Store).
	Store executor.Store
	// Clock is the change's one clock (nil: the wall clock).
	Clock executor.Clock
	// Log receives the change's lines: one per step and poll (stderr).
	Log io.Writer
	// Host and PID name this run in the fleet lock; Alive says whether a
	// holder on this host still runs (rollout.ProcessAlive; nil: every
	// holder is presumed alive — never steal a lock on a guess).
	Host  string
	PID   int
	Alive func(executor.Holder) bool
}

// Clocked is the change's clock: Clock, or the wall clock when unset.
func (e *Env) Clocked() executor.Clock {
	if e.Clock == nil {
		return executor.RealClock{}
	}
	return e.Clock
}
