package simulator

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/awssts"
	"github.com/cellctl/cellctl/internal/sim"
)

// AccountRoleOptions are the inputs of `cellctl sim account role`.
type AccountRoleOptions struct {
	*SimOptions
	AccountID, RoleName string
	// Trust are the accounts allowed to assume the role (none: the home
	// account).
	Trust      []string
	ExternalID string
}

// NewCmdSimAccount builds `cellctl sim account`: the simulated AWS
// accounts a cell can live in and the roles cellctl assumes to reach
// them. runF, when set, replaces the role command's run (tests).
func NewCmdSimAccount(o *SimOptions, runF func(*AccountRoleOptions) error) *cobra.Command {
	var cmd *cobra.Command
	cmd = &cobra.Command{
		Use:   "account",
		Short: "Register simulated AWS accounts and the IAM roles cellctl assumes in them",
		Long: `A cell can live in its own AWS account: its stack's aws:assumeRole names a
role there, and cellctl and the engine assume it through STS. The simulator
keeps a second account as a cloud of its own (resources, quotas, health,
alarms, zones, tasks) and answers sts:AssumeRole as AWS would: the role must
exist, trust the caller's account, and get its external id when it requires
one. Act in an account with --account ID on the other sim commands.`,
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			// cobra runs only the nearest persistent hook: run sim's (output
			// checks) first. c is the command being run, cmd this group.
			if err := cmd.Parent().PersistentPreRunE(c, args); err != nil {
				return err
			}
			if o.Account != "" {
				return fmt.Errorf("--account does not apply to sim account: name the account as an argument")
			}
			return nil
		},
	}
	opts := &AccountRoleOptions{SimOptions: o}
	role := &cobra.Command{
		Use:   "role ACCOUNT-ID ROLE-NAME",
		Short: "Register an IAM role in a simulated account (creating the account)",
		Example: `  cellctl sim account role 222233334444 cellctl-deploy
  cellctl sim account role 222233334444 vendor --trust 999988887777 --external-id fleet-7f3a`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.AccountID, opts.RoleName = args[0], args[1]
			if err := awssts.CheckAccountID(opts.AccountID); err != nil {
				return err
			}
			for _, t := range opts.Trust {
				if err := awssts.CheckAccountID(t); err != nil {
					return fmt.Errorf("--trust: %w", err)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return accountRoleRun(opts)
		},
	}
	role.Flags().StringSliceVar(&opts.Trust, "trust", nil, "account ids allowed to assume the role, comma-separated (default: the home account)")
	role.Flags().StringVar(&opts.ExternalID, "external-id", "", "external id every caller must pass (AssumeRole ExternalId)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the simulated accounts and their roles",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return accountListRun(o) },
	}
	cmd.AddCommand(role, list)
	return cmd
}

func accountRoleRun(opts *AccountRoleOptions) error {
	dir, err := opts.simDir()
	if err != nil {
		return err
	}
	if err := sim.AddRole(dir, opts.AccountID, opts.RoleName, opts.Trust, opts.ExternalID); err != nil {
		return err
	}
	accts, err := sim.Accounts(dir)
	if err != nil {
		return err
	}
	for _, a := range accts {
		for _, r := range a.Roles {
			if a.ID == opts.AccountID && r.Name == opts.RoleName {
				return opts.print(r, roleHeaders, [][]string{roleRow(a, r)})
			}
		}
	}
	return nil
}

func accountListRun(o *SimOptions) error {
	dir, err := o.simDir()
	if err != nil {
		return err
	}
	accts, err := sim.Accounts(dir)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, a := range accts {
		if len(a.Roles) == 0 {
			rows = append(rows, roleRow(a, sim.Role{}))
		}
		for _, r := range a.Roles {
			rows = append(rows, roleRow(a, r))
		}
	}
	return o.print(map[string]any{"accounts": accts}, roleHeaders, rows)
}

var roleHeaders = []string{"ACCOUNT", "ROLE", "TRUSTS", "EXTERNAL ID"}

func roleRow(a sim.Account, r sim.Role) []string {
	id := a.ID
	if a.Home {
		id += " (home)"
	}
	if r.ARN == "" {
		return []string{id, "-", "-", "-"}
	}
	ext := r.ExternalID
	if ext == "" {
		ext = "-"
	}
	return []string{id, r.ARN, strings.Join(r.Trust, ","), ext}
}
