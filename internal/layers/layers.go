// Package layers names cellctl's layers and which package sits in which,
// so a test (layers_test.go, over `go list`) can keep them apart: a
// package imports only packages of its own layer or a lower one, and a
// command never imports another command. docs/ARCHITECTURE.md draws the
// same picture.
package layers

import "strings"

// Layer is a rank: a package may import packages of its own or a lower
// rank only.
type Layer int

const (
	// Base: facts and helpers with no knowledge of cells (AWS facts and
	// naming, safe files, diagnostics, outcomes, terminal streams, the
	// offline renderer).
	Base Layer = iota
	// Domain: the fleet, the routing table and its transitions, the waves
	// model and its signals, the cell's spec, the AWS rule book, a stack
	// run's request.
	Domain
	// Programs: the Pulumi programs (the cell template, the router
	// component, the stacks that compose them).
	Programs
	// Infrastructure: the engine, the cloud bundle, the AWS readers, the
	// simulator, the backend's lock and record store.
	Infrastructure
	// UseCases: one package per verb family, and their views.
	UseCases
	// Commands: the composition root (cmd/cellctl/cmdutil) and the
	// commands, one package per noun; cmd/cells is the program binary.
	Commands
)

func (l Layer) String() string {
	return [...]string{"base", "domain", "programs", "infrastructure", "use cases", "commands"}[l]
}

// Module is the module path the table below is relative to.
const Module = "github.com/cellctl/cellctl"

// byPrefix places each package: the longest matching entry wins; an entry
// ending in "/..." covers the package and everything below it.
var byPrefix = map[string]Layer{
	"internal/awsfacts":    Base,
	"internal/awsname":     Base,
	"internal/awssts":      Base,
	"internal/cellid":      Base,
	"internal/safefile":    Base,
	"internal/diag":        Base,
	"internal/outcome":     Base,
	"internal/iostreams":   Base,
	"internal/props":       Base,
	"internal/exitcode":    Base,
	"internal/offline":     Base,
	"internal/policy":      Base,
	"internal/awsapi/...":  Infrastructure,
	"internal/awsapi/wire": Base,

	"router":          Domain,
	"router/canary":   Domain,
	"router/edge":     Domain,
	"waves":           Domain,
	"waves/signal":    Domain,
	"waves/gate":      Domain,
	"cellmodule/spec": Domain,
	"internal/fleet":  Domain,
	// fleettest loads the repository's demo fleet (with overlays) for
	// tests of every layer above the domain.
	"internal/fleet/fleettest": Domain,
	"internal/awsmodel":        Domain,
	"internal/access":          Domain,
	"internal/netpath":         Domain,
	"internal/stackrun":        Domain,
	"internal/runplan":         Domain,

	"cellmodule":       Programs,
	"router/component": Programs,
	"stacks":           Programs,

	"internal/engine":  Infrastructure,
	"internal/cloud":   Infrastructure,
	"internal/sim/...": Infrastructure,
	"internal/rollout": Infrastructure,
	// edgeversions prunes the router's old Lambda@Edge versions after a
	// router change (the engine calls it, through awsapi.Lambda).
	"internal/edgeversions": Infrastructure,

	"internal/apply":         UseCases,
	"internal/plan":          UseCases,
	"internal/isolation":     UseCases,
	"internal/quota":         UseCases,
	"internal/deploy":        UseCases,
	"internal/gated":         UseCases, // the one env of a gated change
	"internal/drift":         UseCases,
	"internal/lifecycle":     UseCases,
	"internal/health":        UseCases,
	"internal/observability": UseCases,
	"internal/desired":       UseCases,
	"internal/routercanary":  UseCases,
	"internal/originsecret":  UseCases,
	"internal/render/...":    UseCases,
	"waves/executor/...":     UseCases,
	// The executor's adapters: its Updater, Migrator and Store over the
	// engine, ECS and the backend, and the cell spec ⇄ record codec.
	"internal/adapters/...": UseCases,
	"internal/layers":       Base,
	"internal/pgtest":       Base,
	"internal/iamsim":       Base,
	"internal/motojudge":    Base,
	"internal/e2e":          Commands,
	"cmd/...":               Commands,
}

// Of returns the layer of a package of the module (its import path
// relative to Module) and whether the table places it.
func Of(rel string) (Layer, bool) {
	best, layer, found := -1, Base, false
	for p, l := range byPrefix {
		tree := strings.HasSuffix(p, "/...")
		root := strings.TrimSuffix(p, "/...")
		match := rel == root || (tree && strings.HasPrefix(rel, root+"/"))
		if match && len(p) > best {
			best, layer, found = len(p), l, true
		}
	}
	return layer, found
}

// Command returns the command package a path belongs to ("" when it is
// not one): cmd/cellctl/<noun>, cmd/cellctl itself, or cmd/cells.
func Command(rel string) string {
	if rel == "cmd/cellctl" || rel == "cmd/cells" {
		return rel
	}
	if rest, ok := strings.CutPrefix(rel, "cmd/cellctl/"); ok {
		noun, _, _ := strings.Cut(rest, "/")
		return "cmd/cellctl/" + noun
	}
	return ""
}

// MayImportCommands says which command packages may import other command
// packages: the binary's main imports the root, the root assembles the
// nouns. Every command may import the composition root.
var MayImportCommands = map[string]bool{"cmd/cellctl": true, "cmd/cellctl/root": true}

// CompositionRoot is the package every command wires through.
const CompositionRoot = "cmd/cellctl/cmdutil"

// SimulatorUsers are the only packages that may import the simulator:
// the cloud bundle (which serves it behind the same clients as AWS) and
// the `cellctl sim` commands. Nothing else may know it is not AWS.
var SimulatorUsers = map[string]bool{"internal/cloud": true, "cmd/cellctl/simulator": true}

// Simulator is the simulator's facade. Its subpackages (the store, the
// provider, the health model, the AWS APIs, and simtest) may import each
// other; outside the simulator only SimulatorUsers may import any of them.
const Simulator = "internal/sim"

// SimulatorTestSupport drives the simulated provider for tests: no
// production package imports it.
const SimulatorTestSupport = Simulator + "/simtest"

// TestSupport are the packages only tests may import: the simulator's
// test driver, the real-PostgreSQL test lock, the IAM judge (it runs
// @cloud-copilot/iam-simulate, AGPL-3.0, which the product must never
// depend on) and the AWS API judge (it starts moto, an emulator, which
// the product must never talk to as if it were AWS).
var TestSupport = map[string]bool{SimulatorTestSupport: true, "internal/pgtest": true, "internal/iamsim": true, "internal/motojudge": true}

// IsSimulator reports whether a package is the simulator or one of its
// subpackages.
func IsSimulator(rel string) bool { return rel == Simulator || strings.HasPrefix(rel, Simulator+"/") }

// PulumiFree are packages that must not reach any Pulumi package, not
// even through another package. The fuzz targets' packages (make fuzz):
// a fuzz build compiles everything its package reaches with the fuzzer's
// instrumentation, so when internal/fleet reached the pulumi-aws SDK
// (through the AWS model, for four STS checks) a cold `make test`
// compiled sixteen of the SDK's packages once more for it. And the
// packages that describe and show a stack run (stackrun, runplan,
// progress), which need no engine.
var PulumiFree = []string{
	"internal/fleet", "router", "router/edge", "waves",
	"internal/stackrun", "internal/runplan", "internal/render/progress",
}

// RenderRoot is the view layer's shared base (styles, tables, the
// per-command View): its subpackages (the live progress, each noun's
// views) import it, and it imports none of them, so the view folder
// depends one way only.
const RenderRoot = "internal/render"
