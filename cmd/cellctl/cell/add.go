// Package cell holds `cellctl cell …`: commands that change the set of
// cells of the fleet (add).
package cell

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	lc "github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/progress"
	"github.com/cellctl/cellctl/internal/render/routing"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/waves/executor"
)

// NewCmdCell builds `cellctl cell`.
func NewCmdCell(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "cell", Short: "Add cells to the fleet"}
	cmd.AddCommand(NewCmdAdd(f, nil))
	return cmd
}

// AddOptions are the inputs of `cellctl cell add`.
type AddOptions struct {
	IO   *iostreams.IOStreams
	Load func() (*fleet.Fleet, error)
	// LoadWith loads the fleet with files not yet written (the new
	// cell's), for the preflights that run before anything is written.
	LoadWith func(files map[string][]byte) (*fleet.Fleet, error)
	Engine   func(fl *fleet.Fleet, events func(stackrun.Event)) (lc.Engine, error)
	Parallel int
	View     render.View[*lc.AddReport]
	// Yes skips the confirmation asked at a terminal (--yes).
	Yes bool
	// QuotaCheck checks the new cell fits the account's quotas before it
	// is created, as up does (nil: no check); --skip-quota-check turns it
	// off.
	QuotaCheck     func(ctx context.Context, fl *fleet.Fleet, newCells []string) error
	SkipQuotaCheck bool
	// Bootstrap runs the new cell database's users and grants after its
	// up (cmdutil.Factory.Bootstrap).
	Bootstrap func(ctx context.Context, cell *fleet.Cell, outputs map[string]any) error
	// Migrator runs the new cell's schema migration before it gets
	// tenants, and Record keeps it where status and deploy read a cell's
	// schema (cmdutil.Factory.CellMigrator, KeepRecord).
	Migrator func(fl *fleet.Fleet, eng lc.Engine) executor.Migrator
	Record   func(ctx context.Context, rec *executor.Record) error
	Records  func(ctx context.Context) ([]*executor.Record, error)

	ID     string
	Index  int
	Wave   string
	Take   string
	DryRun bool

	Account, Role, ExternalID string
	HostedZoneID, FleetDomain string
}

// NewCmdAdd builds `cellctl cell add`.
func NewCmdAdd(f *cmdutil.Factory, runF func(*AddOptions) error) *cobra.Command {
	opts := &AddOptions{IO: f.IO, Load: f.TableLoader(), LoadWith: f.TableLoaderWith(), Engine: f.RoutingEngine, QuotaCheck: f.QuotaCheck, Bootstrap: f.Bootstrap,
		Migrator: f.CellMigrator, Record: f.KeepRecord, Records: func(context.Context) ([]*executor.Record, error) { return f.Records() }}
	cmd := &cobra.Command{
		Use:   "add [ID]",
		Short: "Create a cell, deploy it, then give it tenants and publish the router",
		Long: `Add a cell in one command, each step saying what it did:

1. pick the id (default: the next free cell-<letters>) and cells:index
   (--index; default: one above the highest, so VPC 10.N.0.0/16 is new);
2. validate the fleet with the cell's stacks/Pulumi.<id>.yaml and its line
   in a wave of stacks/waves.yaml (--wave; default: the last), and run
   every preflight on that fleet — the offline audits, access to its
   account, its quotas and hosted zone — before either file is written:
   a refusal writes nothing, and --dry-run runs the same preflights;
3. write the two files (the rest of waves.yaml stays as it is);
4. deploy the cell alone, on the image the fleet last shipped (what
   deploy would give it; said when it is not the repository's); once the
   fleet's cells have a schema, migrate its database from that image;
5. only once it is up, give it buckets (--take auto: its share, moved from
   the most loaded cells with the fewest moves; or a number), save
   stacks/routing.json and publish the router.

Until step 5 the cell has no traffic: a failure leaves the fleet serving as
before and says what was left and how to continue (the same command again
continues with the files already written) or undo.

--account ID puts the cell in its own AWS account (cells:account), and
--role the IAM role there that its provider and every cellctl reader assume
(aws:assumeRole; a name is taken in --account). Its provider writes the
cell's DNS records, so --hosted-zone-id and --fleet-domain name a zone in
that account (a subdomain delegated to it) when the fleet's zone is not.
Step 2 proves the role can be assumed and lands in that account, that the
zone is there and holds the cell's name, and that the account's quotas
have room, before anything is written or created.`,
		Example: `  cellctl cell add --dry-run
  cellctl cell add cell-eu1 --index 20 --wave canary --take 64`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			if !cmd.Flags().Changed("index") {
				opts.Index = -1 // lifecycle's "pick the next free index"
			} else if opts.Index < 0 || opts.Index > lc.MaxIndex {
				// A given index is checked here, before the sentinel above
				// can swallow it: -1 once meant "auto" and picked 5.
				return fmt.Errorf("--index %d: cells:index is from 0 to %d (VPC 10.N.0.0/16); leave --index out to take the next free one", opts.Index, lc.MaxIndex)
			}
			opts.Parallel = f.Global.Parallel
			opts.Yes = f.Global.Yes
			var err error
			if opts.View, err = render.Pick(f.Global.Output, addFormats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return addRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Index, "index", 0, "cells:index (VPC 10.N.0.0/16); default: one above the highest in use")
	cmd.Flags().StringVar(&opts.Wave, "wave", "", "wave of stacks/waves.yaml to put the cell in (default: the last)")
	cmd.Flags().StringVar(&opts.Take, "take", "auto", `buckets to give the cell once it is up: "auto" (its share) or a number`)
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be written, deployed and moved; change nothing")
	cmd.Flags().StringVar(&opts.Account, "account", "", "AWS account (12 digits) the cell lives in: cells:account in its stack file")
	cmd.Flags().StringVar(&opts.Role, "role", "", "IAM role (ARN, or a name in --account) the cell's provider and cellctl's readers assume: aws:assumeRole")
	cmd.Flags().StringVar(&opts.ExternalID, "external-id", "", "external id the --role's trust policy requires")
	cmd.Flags().StringVar(&opts.HostedZoneID, "hosted-zone-id", "", "Route 53 zone for the cell's records (cells:hostedZoneId), in the cell's account")
	cmd.Flags().StringVar(&opts.FleetDomain, "fleet-domain", "", "the domain --hosted-zone-id holds; the cell is <id>.<domain> (cells:fleetDomain)")
	cmd.Flags().BoolVar(&opts.SkipQuotaCheck, "skip-quota-check", false, "create the cell without checking the account's quotas first")
	return cmd
}

var addFormats = []render.Format[*lc.AddReport]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, rep *lc.AddReport) error {
		for _, tr := range rep.Transitions {
			routing.Transition(render.Out(io), io.Out, tr)
		}
		if rep.DryRun {
			fmt.Fprintln(io.Out, "\ndry run: nothing was written, deployed or published")
		} else if len(rep.Published) > 0 {
			fmt.Fprintf(io.Out, "\n%s is up in wave %q and the router serves routing table version %d\n", rep.Cell, rep.Wave, rep.Published[len(rep.Published)-1])
		}
		return nil
	}},
	render.JSONFormat(func(rep *lc.AddReport) any { return rep }),
}

func addRun(ctx context.Context, opts *AddOptions) error {
	take, err := router.ParseTake(opts.Take)
	if err != nil {
		return err
	}
	display := progress.New(opts.IO)
	env := &lc.Env{
		Load:     opts.Load,
		LoadWith: opts.LoadWith,
		Engine:   func(fl *fleet.Fleet) (lc.Engine, error) { return opts.Engine(fl, display.Handle) },
		Parallel: opts.Parallel,
		Log:      opts.IO.ErrLines(),
		Events:   display.Handle,
		Stop:     cmdutil.Graceful(ctx, cmdutil.StacksInFlight).Done(),
	}
	env.Bootstrap = opts.Bootstrap
	env.Migrator, env.Record, env.Records = opts.Migrator, opts.Record, opts.Records
	if !opts.SkipQuotaCheck {
		env.QuotaCheck = opts.QuotaCheck
	}
	env.Confirm = cmdutil.Confirmation{IO: opts.IO, Yes: opts.Yes, Verb: "cell add"}.Proposal
	rep, err := lc.AddCell(ctx, env, lc.AddOptions{ID: opts.ID, Index: opts.Index, Wave: opts.Wave, Take: take, DryRun: opts.DryRun,
		Account: opts.Account, Role: opts.Role, ExternalID: opts.ExternalID, HostedZoneID: opts.HostedZoneID, FleetDomain: opts.FleetDomain})
	display.Close()
	if rep != nil && len(rep.Transitions) > 0 {
		if verr := opts.View.Render(opts.IO, rep); verr != nil && err == nil {
			err = verr
		}
	}
	return err
}
