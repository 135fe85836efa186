// Package root builds cellctl's command tree: the global flags and the
// one registration point of every command (NewCmdRoot).
package root

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/access"
	"github.com/cellctl/cellctl/cmd/cellctl/cell"
	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/cmd/cellctl/deploy"
	"github.com/cellctl/cellctl/cmd/cellctl/drift"
	"github.com/cellctl/cellctl/cmd/cellctl/health"
	"github.com/cellctl/cellctl/cmd/cellctl/lifecycle"
	"github.com/cellctl/cellctl/cmd/cellctl/observability"
	"github.com/cellctl/cellctl/cmd/cellctl/plan"
	"github.com/cellctl/cellctl/cmd/cellctl/quota"
	"github.com/cellctl/cellctl/cmd/cellctl/rollout"
	"github.com/cellctl/cellctl/cmd/cellctl/route"
	"github.com/cellctl/cellctl/cmd/cellctl/routercmd"
	"github.com/cellctl/cellctl/cmd/cellctl/secret"
	"github.com/cellctl/cellctl/cmd/cellctl/simulator"
	"github.com/cellctl/cellctl/cmd/cellctl/stack"
	"github.com/cellctl/cellctl/cmd/cellctl/version"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/waves/executor"
)

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	g := f.Global
	cmd := &cobra.Command{
		Use:   "cellctl",
		Short: "Run a cell-based architecture on AWS",
		Long: `cellctl provisions and operates a fleet of cells: complete, isolated copies of
the application stack, one Pulumi stack per cell, behind a global router that
maps each tenant to its cell.

The fleet lives in a repository: Pulumi.yaml (the fleet baseline),
stacks/Pulumi.cell-<id>.yaml (one per cell), stacks/Pulumi.router.yaml,
stacks/waves.yaml (rollout order) and stacks/routing.json (tenant routing).

Exit codes: 0 ok, 1 error, 2 findings (drift, quota, isolation),
3 rollout halted, 4 a stack or the fleet is locked by another operation.

Every command that changes the fleet (up, destroy, deploy, drain, undrain,
migrate, cell add, router canary, secret rotate) holds the fleet lock in
the backend while it runs; another one is refused with exit 4, naming the
holder. Read-only commands and every --dry-run never take it.

At a terminal, up, deploy, drain, undrain, migrate, cell add and destroy
ask before their first write; where nobody can answer (CI, a script) they
need --yes, or CELLCTL_SKIP_CONFIRMATIONS=true.`,
		Version:       version.Read().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if g.NoColor {
				f.IO.DisableColor()
			}
			skip, err := cmdutil.SkipConfirmations(os.Getenv(cmdutil.SkipConfirmationsEnv))
			if err != nil {
				return err
			}
			g.Yes = g.Yes || skip
			if cmdutil.IsCloudless(cmd) {
				return nil
			}
			// The cloud: --cloud, else $CELLCTL_CLOUD, else the fleet's
			// cellctl.cloud (Pulumi.yaml), else aws — settled here, once,
			// so every command reads one value from g.Cloud.
			c, err := cmdutil.ResolveCloud(g.Cloud, os.Getenv(cmdutil.CloudEnv), func() (fleet.Settings, error) {
				s, err := fleet.ReadSettings(g.Dir)
				if err != nil {
					return s, fmt.Errorf("invalid fleet configuration in %s:\n%w", g.Dir, err)
				}
				return s, nil
			})
			if err != nil {
				return err
			}
			g.Cloud = c
			if g.Parallel < 1 {
				return fmt.Errorf("--parallel must be at least 1, got %d", g.Parallel)
			}
			// Whatever a killed cellctl left in $TMPDIR (its run directory:
			// workspaces, scratch backends, pulumi output) goes first, at
			// the start of any command, so a kill -9 never leaves state on
			// disk past the next run.
			f.SweepTemp()
			return nil
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&g.Dir, "dir", ".", "fleet repository (the directory holding Pulumi.yaml)")
	pf.StringVar(&g.Backend, "backend", "", "Pulumi backend URL (default $PULUMI_BACKEND_URL, else file://<dir>/.cellctl/state)")
	pf.StringVar(&g.SecretsProvider, "secrets-provider", "", "secrets provider of a stack whose file names none: passphrase, or a KMS key such as awskms://alias/cells?region=us-east-1 (default: the one the fleet's stack files name, else passphrase)")
	pf.StringVar(&g.Cloud, "cloud", "", cmdutil.CloudHelp)
	pf.StringVarP(&g.Output, "output", "o", cmdutil.FormatTable, "output format: table, json (markdown where supported)")
	pf.IntVar(&g.Parallel, "parallel", defaultParallel(), "stacks to work on at once")
	pf.BoolVar(&g.NoColor, "no-color", false, "disable colour (also NO_COLOR=1)")
	pf.BoolVarP(&g.Yes, "yes", "y", false, "answer yes to the confirmation a fleet-changing verb asks at a terminal (needed where there is none, as in CI; also "+cmdutil.SkipConfirmationsEnv+"=true)")

	// Every command is registered here, in help order. The verbs that
	// change the fleet are marked here (mutates), and take the fleet lock
	// in cmdutil.Mutates; the gated changes — deploy, router canary,
	// secret rotate — take it through the executor's store under their
	// record's id (so a killed one is resumed) — the same lock
	// (internal/rollout).
	cmd.AddCommand(
		plan.NewCmdPlan(f, nil),
		access.NewCmdAccess(f, nil),
		version.NewCmdVersion(f),
		mutates(f, stack.NewCmdUp(f, nil), "", "up", true),
		stack.NewCmdPreview(f, nil),
		stack.NewCmdStatus(f, nil),
		mutates(f, stack.NewCmdDestroy(f, nil), "", "destroy", true),
		stack.NewCmdUnlock(f, nil),
		deploy.NewCmdDeploy(f, nil),
		routercmd.NewCmdRouter(f, nil),
		rollout.NewCmdRollout(f, func(ctx context.Context, d rollout.DeployRequest) error {
			// rollout resume|abort|undo run a deploy; resume|abort of a
			// router canary or a secret rotation run that command.
			switch d.Kind {
			case executor.KindCanary:
				return routercmd.Continue(ctx, f, d.Abort != nil, d.BakeScale)
			case executor.KindRotation:
				return secret.Continue(ctx, f, d.BakeScale)
			}
			o, err := deploy.OptionsFor(f)
			if err != nil {
				return err
			}
			o.ID, o.Image, o.Resume, o.Abort, o.ToPrevious, o.UndoTo = d.ID, d.Image, d.Resume, d.Abort, d.Undo, d.UndoTo
			o.BakeScale, o.DryRun = d.BakeScale, d.DryRun
			return deploy.Run(ctx, o)
		}),
		route.NewCmdRoute(f, nil),
		route.NewCmdCapacity(f, nil),
		quota.NewCmdQuota(f, nil),
		health.NewCmdHealth(f, nil),
		observability.NewCmdObservability(f, nil),
		route.NewCmdLanes(f, nil),
		mutates(f, cell.NewCmdCell(f), "add", "cell add", false),
		mutates(f, lifecycle.NewCmdDrain(f, nil), "", "drain", true),
		mutates(f, lifecycle.NewCmdUndrain(f, nil), "", "undrain", false),
		mutates(f, lifecycle.NewCmdMigrate(f, nil), "", "migrate", false),
		drift.NewCmdDrift(f, nil),
		// sim reset empties the simulated cloud the fleet runs in: under a
		// live rollout that is the fleet's resources gone mid-bake.
		mutates(f, simulator.NewCmdSim(f), "reset", "sim reset", false),
		secret.NewCmdSecret(f),
	)
	rejectUnknownSubcommands(cmd)
	return cmd
}

// rejectUnknownSubcommands makes every command group below root fail on a
// word that names none of its subcommands (`cellctl rollout pause` when
// there is no pause): cobra's "unknown command" error, exit 1, where
// cobra alone prints the group's help and exits 0, so a script calling a
// verb that does not exist would silently "succeed". A group run bare
// still prints its help; its usage stays the group's (no "[flags]" line
// for a group that only lists commands).
func rejectUnknownSubcommands(root *cobra.Command) {
	usage := root.UsageFunc()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root || !c.HasSubCommands() || c.Runnable() {
			return
		}
		group := c
		group.Args = cobra.NoArgs
		group.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		group.SetUsageFunc(func(c *cobra.Command) error {
			if c == group {
				run := c.RunE
				c.RunE = nil
				defer func() { c.RunE = run }()
			}
			return usage(c)
		})
	}
	walk(root)
}

// mutates marks cmd (or its subcommand sub) as the fleet-changing verb,
// with the emergency override flag when override. It returns cmd.
func mutates(f *cmdutil.Factory, cmd *cobra.Command, sub, verb string, override bool) *cobra.Command {
	target := cmd
	if sub != "" {
		target = nil
		for _, c := range cmd.Commands() {
			if c.Name() == sub {
				target = c
			}
		}
		if target == nil {
			panic("cellctl: " + cmd.Name() + " has no subcommand " + sub)
		}
	}
	if override {
		cmdutil.AddOverrideFlag(target)
	}
	cmdutil.Mutates(f, target, verb)
	return cmd
}

func defaultParallel() int {
	if n := runtime.NumCPU(); n < 4 {
		return 4
	}
	return runtime.NumCPU()
}
