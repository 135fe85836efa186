package simulator

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/sim"
)

// SimHealthOptions are the inputs of `cellctl sim health set|clear`.
type SimHealthOptions struct {
	*SimOptions
	Target sim.HealthTarget

	ErrorRate    string
	P99          time.Duration
	Requests     float64
	NoTraffic    bool
	HealthyTasks int
	History      int

	// set records which flags were given (a zero value is a real value:
	// --error-rate 0%, --healthy-tasks 0).
	set map[string]bool
}

// profile builds the profile from the flags that were given.
func (o *SimHealthOptions) profile() (sim.HealthProfile, error) {
	var p sim.HealthProfile
	if o.set["error-rate"] {
		v, err := sim.ParsePercent(o.ErrorRate)
		if err != nil {
			return p, err
		}
		p.ErrorRate = &v
	}
	if o.set["p99"] {
		d := sim.Duration(o.P99)
		p.P99 = &d
	}
	if o.set["requests-per-minute"] && o.NoTraffic {
		return p, fmt.Errorf("--no-traffic and --requests-per-minute contradict each other; give one")
	}
	if o.set["requests-per-minute"] {
		p.RequestsPerMinute = &o.Requests
	}
	if o.NoTraffic {
		zero := 0.0
		p.RequestsPerMinute = &zero
	}
	if o.set["healthy-tasks"] {
		p.HealthyTasks = &o.HealthyTasks
	}
	return p, nil
}

// newCmdSimHealth builds `cellctl sim health`.
func newCmdSimHealth(so *SimOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Set and show the simulated cells' traffic and health (drives their alarms)",
		Long: `Every simulated cell with a load balancer serves traffic each minute:
requests, 5xx responses, p99 latency and healthy tasks. What it serves
comes from the default profile (600 requests/min, 1 of them 5xx: 0.167%,
p99 120ms, every task healthy), overridden by the profile of the image the
cell runs, overridden by the cell's own profile. Each minute's 5xx count is
a whole number, round(requests × rate): at 600 requests/min --error-rate
1.2% reads 1.167%. The cells' CloudWatch alarms are
evaluated from these metrics against their own thresholds, and the
simulator's CloudWatch endpoint serves them to the same readers cellctl
uses on AWS. A state set with ` + "`sim alarm set`" + ` holds until ` + "`sim health clear`" + `.`,
	}
	cmd.AddCommand(newCmdSimHealthSet(so), newCmdSimHealthShow(so), newCmdSimHealthClear(so))
	return cmd
}

func newCmdSimHealthSet(so *SimOptions) *cobra.Command {
	o := &SimHealthOptions{SimOptions: so}
	cmd := &cobra.Command{
		Use:   "set (--image IMAGE | --cell CELL) [flags]",
		Short: "Mark an image bad (or good), or override one cell's health",
		Example: `  cellctl sim health set --image registry/app:v2 --error-rate 3% --p99 900ms
  cellctl sim health set --cell cell-b --healthy-tasks 0
  cellctl sim health set --cell cell-c --no-traffic`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.set = map[string]bool{}
			for _, name := range []string{"error-rate", "p99", "requests-per-minute", "healthy-tasks"} {
				o.set[name] = cmd.Flags().Changed(name)
			}
			return simHealthSetRun(o)
		},
	}
	addTargetFlags(cmd, &o.Target)
	cmd.Flags().StringVar(&o.ErrorRate, "error-rate", "", "share of requests answered 5xx, e.g. 3% or 0.5%")
	cmd.Flags().DurationVar(&o.P99, "p99", 0, "p99 target response time, e.g. 900ms")
	cmd.Flags().Float64Var(&o.Requests, "requests-per-minute", 0, "traffic in requests per minute (0 = no traffic)")
	cmd.Flags().BoolVar(&o.NoTraffic, "no-traffic", false, "serve no requests at all (a gate then has too little traffic to judge)")
	cmd.Flags().IntVar(&o.HealthyTasks, "healthy-tasks", 0, "healthy tasks (default: the service's desired count)")
	return cmd
}

func addTargetFlags(cmd *cobra.Command, t *sim.HealthTarget) {
	cmd.Flags().StringVar(&t.Image, "image", "", "the image the profile applies to, wherever it runs")
	cmd.Flags().StringVar(&t.Cell, "cell", "", "the cell (cell-b or b) the profile applies to")
}

func simHealthSetRun(o *SimHealthOptions) error {
	p, err := o.profile()
	if err != nil {
		return err
	}
	c, err := o.cloud()
	if err != nil {
		return err
	}
	target := o.Target
	target.Cell = o.qualify(target.Cell)
	got, err := c.SetHealth(target, p)
	if err != nil {
		return err
	}
	what := "image " + o.Target.Image
	if o.Target.Cell != "" {
		what = "cell " + o.Target.Cell
	}
	return o.print(map[string]any{"target": o.Target, "profile": got}, []string{"FOR", "REQ/MIN", "5XX", "P99", "HEALTHY TASKS"},
		[][]string{{what, optFloat(got.RequestsPerMinute), optPercent(got.ErrorRate), optDuration(got.P99), optInt(got.HealthyTasks)}})
}

func newCmdSimHealthShow(so *SimOptions) *cobra.Command {
	o := &SimHealthOptions{SimOptions: so}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show each simulated cell's health now, its profile and its alarms",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			rep, err := c.Health(o.History)
			if err != nil {
				return err
			}
			var rows [][]string
			for _, cs := range rep.Status {
				var alarms []string
				for _, a := range cs.Alarms {
					if a.State != sim.AlarmOK {
						alarms = append(alarms, a.AlarmName+"="+a.State)
					}
				}
				if len(alarms) == 0 {
					alarms = []string{"all OK"}
				}
				rate := "-"
				if cs.Now.Requests > 0 {
					rate = strconv.FormatFloat(100*(cs.Now.Target5xx+cs.Now.ELB5xx)/cs.Now.Requests, 'f', 2, 64) + "%"
				}
				p99 := "-"
				if cs.Now.P99 > 0 {
					p99 = time.Duration(cs.Now.P99 * float64(time.Second)).String()
				}
				rows = append(rows, []string{cs.Stack, cs.Image, cs.Source, strconv.FormatFloat(cs.Now.Requests, 'f', -1, 64), rate, p99,
					fmt.Sprintf("%d/%d", cs.Now.Healthy, cs.Now.Desired), strings.Join(alarms, ", ")})
			}
			return o.print(rep, []string{"CELL", "IMAGE", "PROFILE", "REQ/MIN", "5XX", "P99", "HEALTHY", "ALARMS"}, rows)
		},
	}
	cmd.Flags().IntVar(&o.History, "history", 0, "also report the last N minutes per cell (-o json)")
	return cmd
}

func newCmdSimHealthClear(so *SimOptions) *cobra.Command {
	o := &SimHealthOptions{SimOptions: so}
	cmd := &cobra.Command{
		Use:   "clear [--image IMAGE | --cell CELL]",
		Short: "Remove health profiles (all without flags); clearing a cell also releases its hand-set alarm states",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			target := o.Target
			target.Cell = o.qualify(target.Cell)
			if err := c.ClearHealth(target); err != nil {
				return err
			}
			return nil
		},
	}
	addTargetFlags(cmd, &o.Target)
	return cmd
}

func optFloat(v *float64) string {
	if v == nil {
		return "(inherit)"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func optPercent(v *float64) string {
	if v == nil {
		return "(inherit)"
	}
	return strconv.FormatFloat(*v*100, 'f', -1, 64) + "%"
}

func optDuration(v *sim.Duration) string {
	if v == nil {
		return "(inherit)"
	}
	return v.String()
}

func optInt(v *int) string {
	if v == nil {
		return "(inherit)"
	}
	return strconv.Itoa(*v)
}
