package simulator

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/sim"
)

const simNotice = `This is cellctl's simulated AWS — a rehearsal and test cloud kept in
.cellctl/sim/ of the fleet repository, or in $CELLCTL_SIM_DIR when set (one
simulated account shared by several checkouts or fleets). It is NOT AWS:
nothing here touches an AWS account. Commands run with --cloud sim deploy
into it through the real Pulumi engine, so you can rehearse rollouts,
failures and audits offline. A CELL names this fleet's cell (its Pulumi
project's stack), never another fleet's in a shared account.`

// SimOptions are the inputs of `cellctl sim …`.
type SimOptions struct {
	*cmdutil.Factory
	// Account is --account: the simulated AWS account the command reads
	// and changes ("" = the home account).
	Account string
}

// simDir is the simulated cloud's directory (the home account's).
func (o *SimOptions) simDir() (string, error) {
	fl, err := o.Fleet()
	if err != nil {
		return "", err
	}
	return cmdutil.SimDir(fl), nil
}

// cloud is the simulated cloud of the --account the command works in:
// every per-account command (resources, faults, latency, alarms, quotas,
// health, zones, keys, tasks…) goes through here, so each of them acts
// in one account and the flag means the same everywhere.
func (o *SimOptions) cloud() (*sim.Cloud, error) {
	dir, err := o.simDir()
	if err != nil {
		return nil, err
	}
	c, err := sim.OpenAccount(dir, o.Account)
	if err != nil {
		return nil, fmt.Errorf("--account: %w", err)
	}
	return c, nil
}

// qualify makes a --cell (or CELL) name this fleet's stack only: the
// simulated account may hold other fleets with the same cell ids
// (sim.QualifiedStack).
func (o *SimOptions) qualify(cell string) string {
	fl, err := o.Fleet()
	if err != nil {
		return cell
	}
	return sim.QualifiedStack(fl.Project, cell)
}

// stackNames lists the fleet's stacks, for checking a fault's --cell.
func (o *SimOptions) stackNames() []string {
	fl, err := o.Fleet()
	if err != nil {
		return nil
	}
	return fl.StackNames()
}

// print writes v as JSON with -o json, else the table rows.
func (o *SimOptions) print(v any, headers []string, rows [][]string) error {
	if o.Global.Output == cmdutil.FormatJSON {
		return render.JSON(o.IO.Out, v)
	}
	if len(rows) == 0 {
		fmt.Fprintln(o.IO.Out, "(none)")
		return nil
	}
	fmt.Fprint(o.IO.Out, o.Styles().Table(headers, rows))
	return nil
}

// NewCmdSim builds `cellctl sim`.
func NewCmdSim(f *cmdutil.Factory) *cobra.Command {
	opts := &SimOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Control the simulated AWS (a rehearsal cloud, not AWS)",
		Long:  simNotice + "\n\nInject faults, add latency, set alarm states and quotas, or edit a live\nresource behind Pulumi's back (drift). Name the account's hosted zones\n(sim zone add) and retire engine versions (sim engine-version retire).",
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := cmd.Root().PersistentPreRunE(cmd, args); err != nil {
				return err
			}
			return f.CheckOutput(cmdutil.FormatTable, cmdutil.FormatJSON)
		},
	}
	cmd.AddCommand(newCmdSimResources(opts), newCmdSimFault(opts), newCmdSimLatency(opts), newCmdSimAlarm(opts),
		newCmdSimQuota(opts), newCmdSimEdit(opts), newCmdSimReset(opts), newCmdSimCode(opts))
	cmd.AddCommand(newCmdSimHealth(opts))                             // sim_health.go
	cmd.AddCommand(newCmdSimEdge(opts))                               // edge.go
	cmd.AddCommand(newCmdSimZone(opts), newCmdSimEngineVersion(opts)) // zones.go
	cmd.AddCommand(newCmdSimKMS(opts))                                // kms.go
	cmd.AddCommand(newCmdSimTask(opts), newCmdSimSQL(opts))           // tasks.go
	cmd.AddCommand(NewCmdSimAccount(opts, nil))                       // account.go
	cmd.PersistentFlags().StringVar(&opts.Account, "account", "", "the simulated AWS account to act in: its 12-digit `id`, as registered with 'cellctl sim account role' (default: the home account)")
	return cmd
}

func newCmdSimResources(o *SimOptions) *cobra.Command {
	var filter sim.Filter
	cmd := &cobra.Command{
		Use:   "resources",
		Short: "List the simulated cloud's live resources",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			f := filter
			f.Stack = o.qualify(f.Stack)
			rs, err := c.Resources(f)
			if err != nil {
				return err
			}
			var rows [][]string
			for _, r := range rs {
				rows = append(rows, []string{r.Stack, r.Type, r.Name, r.ID, r.Region, strings.Join(r.Edited, ",")})
			}
			return o.print(map[string]any{"resources": rs}, []string{"STACK", "TYPE", "NAME", "ID", "REGION", "EDITED"}, rows)
		},
	}
	cmd.Flags().StringVar(&filter.Stack, "cell", "", "only this stack or cell")
	cmd.Flags().StringVar(&filter.Type, "type", "", "only this type (aws:rds/cluster:Cluster, rds/cluster, …)")
	cmd.Flags().StringVar(&filter.Region, "region", "", "only this region")
	cmd.Flags().StringVar(&filter.Name, "name", "", "only names matching this glob")
	return cmd
}

func newCmdSimFault(o *SimOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "fault", Short: "Make simulated AWS operations fail on purpose"}
	var fl sim.Fault
	add := &cobra.Command{
		Use:   "add",
		Short: "Add a fault: matching operations fail (once by default)",
		Example: `  cellctl sim fault add --cell cell-c --type rds/cluster --op create
  cellctl sim fault add --cell cell-b --name 'cell-b-alb*' --always`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sim.CheckFault(fl, o.stackNames()); err != nil {
				return err
			}
			fl := fl
			fl.Stack = o.qualify(fl.Stack)
			c, err := o.cloud()
			if err != nil {
				return err
			}
			added, err := c.AddFault(fl)
			if err != nil {
				return err
			}
			return o.print(added, []string{"ID", "CELL", "OP", "TYPE", "NAME", "TIMES"}, [][]string{faultRow(added)})
		},
	}
	add.Flags().StringVar(&fl.Stack, "cell", "", "stack or cell the fault applies to (default: all)")
	add.Flags().StringVar(&fl.Op, "op", "", "operation: create, update, delete, read (default: all)")
	add.Flags().StringVar(&fl.Type, "type", "", "resource type (default: all)")
	add.Flags().StringVar(&fl.Name, "name", "", "logical name or glob (default: all)")
	add.Flags().IntVar(&fl.Times, "times", 1, "how many operations fail")
	add.Flags().BoolVar(&fl.Always, "always", false, "fail every matching operation until cleared")
	add.Flags().StringVar(&fl.Code, "code", "", "AWS error code to report (default InjectedFault)")
	add.Flags().StringVar(&fl.Message, "message", "", "text added to the error")
	add.Flags().BoolVar(&fl.LoseAnswer, "lose-answer", false, "creates only: carry the create out, then fail it (the resource exists but the engine is never told: an orphan)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the faults",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			fs, err := c.Faults()
			if err != nil {
				return err
			}
			var rows [][]string
			for _, f := range fs {
				rows = append(rows, faultRow(f))
			}
			return o.print(map[string]any{"faults": fs}, []string{"ID", "CELL", "OP", "TYPE", "NAME", "TIMES"}, rows)
		},
	}
	clear := &cobra.Command{
		Use:   "clear [ID...]",
		Short: "Remove faults (all when no id is given)",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return c.ClearFaults()
			}
			for _, id := range args {
				if err := c.RemoveFault(id); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.AddCommand(add, list, clear)
	return cmd
}

func faultRow(f sim.Fault) []string {
	times := strconv.Itoa(f.Times)
	if f.Always {
		times = "always"
	}
	return []string{f.ID, orAll(f.Stack), orAll(f.Op), orAll(f.Type), orAll(f.Name), times}
}

func orAll(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func newCmdSimLatency(o *SimOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "latency", Short: "Delay simulated AWS operations, to rehearse real timings"}
	var l sim.Latency
	var d time.Duration
	set := &cobra.Command{
		Use:     "set DURATION",
		Short:   "Add or replace a latency rule (0 removes it)",
		Example: "  cellctl sim latency set 200ms --op create\n  cellctl sim latency set 2s --type rds/cluster --op create",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if d, err = time.ParseDuration(args[0]); err != nil || d < 0 {
				return fmt.Errorf("invalid duration %q: use e.g. 200ms or 2s", args[0])
			}
			c, err := o.cloud()
			if err != nil {
				return err
			}
			l.Duration = sim.Duration(d)
			l := l
			l.Stack = o.qualify(l.Stack)
			return c.SetLatency(l)
		},
	}
	set.Flags().StringVar(&l.Stack, "cell", "", "only this stack or cell")
	set.Flags().StringVar(&l.Op, "op", "", "only this operation: create, update, delete, read, invoke")
	set.Flags().StringVar(&l.Type, "type", "", "only this resource type")
	list := &cobra.Command{
		Use: "list", Short: "List latency rules",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			ls, err := c.Latencies()
			if err != nil {
				return err
			}
			var rows [][]string
			for _, l := range ls {
				rows = append(rows, []string{orAll(l.Stack), orAll(l.Op), orAll(l.Type), l.Duration.String()})
			}
			return o.print(map[string]any{"latency": ls}, []string{"CELL", "OP", "TYPE", "DELAY"}, rows)
		},
	}
	clear := &cobra.Command{
		Use: "clear", Short: "Remove every latency rule",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			return c.ClearLatency()
		},
	}
	cmd.AddCommand(set, list, clear)
	return cmd
}

func newCmdSimAlarm(o *SimOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "alarm", Short: "Set and read the state of cells' CloudWatch alarms"}
	var reason string
	set := &cobra.Command{
		Use:     "set CELL ALARM STATE",
		Short:   "Set an alarm's state: OK, ALARM or INSUFFICIENT_DATA",
		Example: "  cellctl sim alarm set cell-a cellctl-cells-cell-a-5xx-rate ALARM",
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			a, err := c.SetAlarm(o.qualify(args[0]), args[1], strings.ToUpper(args[2]), reason)
			if err != nil {
				return err
			}
			return o.print(a, []string{"CELL", "ALARM", "STATE"}, [][]string{{a.Stack, a.AlarmName, a.State}})
		},
	}
	set.Flags().StringVar(&reason, "reason", "", "state reason to record")
	list := &cobra.Command{
		Use: "list [CELL]", Short: "List alarms and their states", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			stack := ""
			if len(args) == 1 {
				stack = o.qualify(args[0])
			}
			as, err := c.Alarms(stack)
			if err != nil {
				return err
			}
			var rows [][]string
			for _, a := range as {
				rows = append(rows, []string{a.Stack, a.AlarmName, a.State, a.Reason})
			}
			return o.print(map[string]any{"alarms": as}, []string{"CELL", "ALARM", "STATE", "REASON"}, rows)
		},
	}
	cmd.AddCommand(set, list)
	return cmd
}

func newCmdSimQuota(o *SimOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "quota", Short: "Set and read simulated service quotas and usage"}
	set := &cobra.Command{
		Use:     "set REGION CODE VALUE",
		Short:   "Set a quota's value in a region (Service Quotas code, e.g. ec2/L-0263D0A3)",
		Example: "  cellctl sim quota set us-east-1 ec2/L-0263D0A3 10",
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := cmdutil.ParseQuantity(args[2])
			if err != nil {
				return fmt.Errorf("invalid quota value: %w", err)
			}
			c, err := o.cloud()
			if err != nil {
				return err
			}
			if err := c.SetQuota(args[0], args[1], v); err != nil {
				return err
			}
			return nil
		},
	}
	list := &cobra.Command{
		Use: "list REGION", Short: "List quotas and usage in a region", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			qs, err := c.Quotas(args[0])
			if err != nil {
				return err
			}
			us, err := c.Usage(args[0])
			if err != nil {
				return err
			}
			used := map[string]float64{}
			for _, u := range us {
				if u.Used > used[u.Code] {
					used[u.Code] = u.Used // the busiest scope (AZ, VPC…) of each quota
				}
			}
			sort.Slice(qs, func(i, j int) bool { return qs[i].Code < qs[j].Code })
			var rows [][]string
			for _, q := range qs {
				rows = append(rows, []string{q.Code, q.Name, q.Scope, fmt.Sprint(used[q.Code]), fmt.Sprint(q.Value)})
			}
			return o.print(map[string]any{"quotas": qs, "usage": us}, []string{"CODE", "QUOTA", "SCOPE", "USED", "LIMIT"}, rows)
		},
	}
	cmd.AddCommand(set, list)
	return cmd
}

func newCmdSimEdit(o *SimOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "edit CELL RESOURCE PROPERTY VALUE",
		Short: "Change a live resource behind Pulumi's back (drift), as a console click would",
		Long: `Change one property of a live simulated resource out of band. RESOURCE is a
logical name, id or ARN; PROPERTY a path such as tags.owner or
desiredCount; VALUE is JSON (plain text is taken as a string, null removes).`,
		Example: "  cellctl sim edit cell-b cell-b-service desiredCount 7",
		Args:    cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			r, err := c.Edit(o.qualify(args[0]), args[1], args[2], args[3])
			if err != nil {
				return err
			}
			return o.print(r, []string{"CELL", "NAME", "ID", "EDITED"}, [][]string{{r.Stack, r.Name, r.ID, strings.Join(r.Edited, ",")}})
		},
	}
}

func newCmdSimReset(o *SimOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "reset",
		Short: "Empty the simulated cloud (resources, faults, latency, quotas)",
		Long:  "Empty the simulated cloud: every account's resources, faults, latency, quotas\n(with --account, that account's only). The accounts and their roles stay.\nThe Pulumi state in .cellctl/state is not touched: follow with\n`cellctl up --refresh` or remove .cellctl/state too.\n\nIt holds the fleet lock while it runs, as every verb that changes the fleet\ndoes: while a rollout (or any other such verb) holds the fleet, it exits 4\nnaming the holder and empties nothing.",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			// It builds no engine, so it takes the fleet lock itself
			// (root marks it a mutating verb), before emptying anything.
			if err := o.HoldFleet(cmd.Context()); err != nil {
				return err
			}
			if o.Account != "" {
				return c.Reset()
			}
			return c.ResetEveryAccount()
		},
	}
}

func newCmdSimCode(o *SimOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "function-code NAME [FILE]",
		Short: "Print the code a simulated Lambda function was published with",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			files, err := c.FunctionCode(args[0])
			if err != nil {
				return err
			}
			if len(args) == 2 {
				content, ok := files[args[1]]
				if !ok {
					return fmt.Errorf("%s has no file %q", args[0], args[1])
				}
				fmt.Fprint(o.IO.Out, content)
				return nil
			}
			if o.Global.Output == cmdutil.FormatJSON {
				return render.JSON(o.IO.Out, files)
			}
			names := make([]string, 0, len(files))
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(o.IO.Out, "%s (%d bytes)\n", n, len(files[n]))
			}
			return nil
		},
	}
}
