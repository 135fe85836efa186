package simulator

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/sim"
)

// SimEdgeOptions are the inputs of `cellctl sim edge set|show|clear`.
type SimEdgeOptions struct {
	*SimOptions
	Target         sim.EdgeTarget
	ErrorRate      string
	FunctionErrors string
	set            map[string]bool
}

func (o *SimEdgeOptions) profile() (sim.EdgeProfile, error) {
	var p sim.EdgeProfile
	if o.set["error-rate"] {
		v, err := sim.ParsePercent(o.ErrorRate)
		if err != nil {
			return p, err
		}
		p.ErrorRate = &v
	}
	if o.set["function-errors"] {
		v, err := sim.ParsePercent(o.FunctionErrors)
		if err != nil {
			return p, fmt.Errorf("--function-errors: %w", err)
		}
		p.FunctionErrorRate = &v
	}
	return p, nil
}

// newCmdSimEdge builds `cellctl sim edge`.
func newCmdSimEdge(so *SimOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "edge",
		Short: "Make an edge function build (routing table version or package) bad or good on the simulated CloudFront",
		Long: `The router's distributions serve the fleet's viewer requests (2400/min),
split by the continuous deployment policy: a SingleWeight policy sends its
weight to the staging distribution, a SingleHeader one the smoke traffic
(60/min, standing in for the client that sends the header on AWS). What
those requests meet is the profile of the edge function build the
distribution runs — by package SHA-256, then by the routing table version
baked into it — served as AWS/CloudFront Requests, 5xxErrorRate and
LambdaExecutionError to the same readers a router canary uses on AWS.`,
	}
	o := &SimEdgeOptions{SimOptions: so}
	set := &cobra.Command{
		Use:   "set (--router-table N | --edge-code SHA256) [--error-rate P] [--function-errors P]",
		Short: "Set what an edge build serves",
		Example: `  cellctl sim edge set --router-table 8 --error-rate 20%
  cellctl sim edge set --edge-code 3q2+7w== --function-errors 5%`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.set = map[string]bool{"error-rate": cmd.Flags().Changed("error-rate"), "function-errors": cmd.Flags().Changed("function-errors")}
			p, err := o.profile()
			if err != nil {
				return err
			}
			c, err := o.cloud()
			if err != nil {
				return err
			}
			if err := c.SetEdgeHealth(o.Target, p); err != nil {
				return err
			}
			return simEdgeShow(o)
		},
	}
	addEdgeTargetFlags(set, &o.Target)
	set.Flags().StringVar(&o.ErrorRate, "error-rate", "", "share of viewer requests answered 5xx, e.g. 20%")
	set.Flags().StringVar(&o.FunctionErrors, "function-errors", "", "share of requests on which the function fails (LambdaExecutionError, and a 5xx), e.g. 5%")
	show := &cobra.Command{
		Use:   "show",
		Short: "List the edge builds' profiles",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return simEdgeShow(o) },
	}
	clear := &cobra.Command{
		Use:   "clear [--router-table N | --edge-code SHA256]",
		Short: "Remove edge profiles (all without flags)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			return c.ClearEdgeHealth(o.Target)
		},
	}
	addEdgeTargetFlags(clear, &o.Target)
	cmd.AddCommand(set, show, clear)
	return cmd
}

func addEdgeTargetFlags(cmd *cobra.Command, t *sim.EdgeTarget) {
	cmd.Flags().Int64Var(&t.TableVersion, "router-table", 0, "the routing table version the profile applies to")
	cmd.Flags().StringVar(&t.CodeSha256, "edge-code", "", "the function package's `sha256` (base64 SHA-256: the CodeSha256 that 'aws lambda get-function' reports)")
}

func simEdgeShow(o *SimEdgeOptions) error {
	c, err := o.cloud()
	if err != nil {
		return err
	}
	got, err := c.EdgeHealth()
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var rows [][]string
	for _, k := range keys {
		rows = append(rows, []string{strings.Replace(k, ":", " ", 1), optPercent(got[k].ErrorRate), optPercent(got[k].FunctionErrorRate)})
	}
	return o.print(got, []string{"BUILD", "5XX", "FUNCTION ERRORS"}, rows)
}
