package simulator

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/sim"
)

// newCmdSimKMS builds `cellctl sim kms`: the simulated account's KMS keys,
// for fleets whose stack files name `secretsprovider: awskms://…`.
func newCmdSimKMS(o *SimOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kms",
		Short: "Create, disable and deny the simulated account's KMS keys (awskms:// secrets providers)",
		Long: `The simulated account's KMS keys. A fleet whose secrets provider is
awskms://alias/NAME?region=REGION encrypts its stack secrets with one: the
pulumi CLI and cellctl both call the simulator's KMS API (Encrypt, Decrypt,
GenerateDataKey, DescribeKey) through the AWS SDK, as on AWS. Disable a key
or deny its callers to rehearse what AWS answers then (DisabledException,
AccessDeniedException).`,
	}
	row := func(k sim.KMSKey) []string {
		state := k.State
		if k.Denied {
			state += " (callers denied)"
		}
		return []string{k.ID, strings.Join(k.Aliases, ","), k.Region, state}
	}
	headers := []string{"KEY ID", "ALIASES", "REGION", "STATE"}
	var region, alias, description string
	create := &cobra.Command{
		Use:     "create",
		Short:   "Create a symmetric encryption key",
		Example: "  cellctl sim kms create --alias cells --region us-east-1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			k, err := c.CreateKMSKey(region, alias, description)
			if err != nil {
				return err
			}
			return o.print(k, headers, [][]string{row(k)})
		},
	}
	create.Flags().StringVar(&alias, "alias", "", "alias of the key (alias/NAME or NAME)")
	create.Flags().StringVar(&description, "description", "", "description of the key")
	cmd.PersistentFlags().StringVar(&region, "region", "us-east-1", "the key's region")
	action := func(use, short, act string) *cobra.Command {
		return &cobra.Command{
			Use: use + " KEY", Short: short, Args: cobra.ExactArgs(1),
			// The key the example acts on, created first: each help text
			// is a session that works on its own (the doc test runs it).
			Example: "  cellctl sim kms create --alias cells --region us-east-1\n  cellctl sim kms " + use + " alias/cells",
			RunE: func(cmd *cobra.Command, args []string) error {
				c, err := o.cloud()
				if err != nil {
					return err
				}
				k, err := c.SetKMSKey(region, args[0], act)
				if err != nil {
					return err
				}
				return o.print(k, headers, [][]string{row(k)})
			},
		}
	}
	list := &cobra.Command{
		Use: "list", Short: "List the keys", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			keys, err := c.KMSKeys()
			if err != nil {
				return err
			}
			var rows [][]string
			for _, k := range keys {
				rows = append(rows, row(k))
			}
			return o.print(map[string]any{"keys": keys}, headers, rows)
		},
	}
	cmd.AddCommand(create, list,
		action("disable", "Disable a key: Encrypt and Decrypt fail with DisabledException", "disable"),
		action("enable", "Enable a disabled key", "enable"),
		action("deny", "Deny every caller the key (AccessDeniedException), as a key policy would", "deny"),
		action("allow", "Allow the callers again", "allow"),
		action("schedule-deletion", "Schedule a key's deletion (KMSInvalidStateException)", "schedule-deletion"))
	return cmd
}
