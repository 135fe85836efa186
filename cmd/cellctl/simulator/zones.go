package simulator

import (
	"strings"

	"github.com/spf13/cobra"
)

// newCmdSimZone builds `cellctl sim zone`: the simulated account's Route
// 53 hosted zones. Route 53 refuses a record outside its zone's domain
// (InvalidChangeBatch), and so does the simulator for every zone it
// knows.
func newCmdSimZone(o *SimOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "zone", Short: "Add and list the simulated account's Route 53 hosted zones"}
	add := &cobra.Command{
		Use:   "add ZONE-ID DOMAIN",
		Short: "Create (or rename) a hosted zone: records outside DOMAIN are then refused in it",
		Long: `Create a hosted zone of the simulated account (or give an existing one another
domain). A record created in the zone must be DOMAIN itself or a name under it,
as Route 53 requires; anything else fails with InvalidChangeBatch ("RRSet with
DNS name app.example.com. is not permitted in zone cells.example.com.").`,
		Example: "  cellctl sim zone add Z0123456789ABCDEFGHIJ cells.example.com",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			return c.AddZone(args[0], args[1])
		},
	}
	list := &cobra.Command{
		Use: "list", Short: "List the hosted zones", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			zs, err := c.Zones()
			if err != nil {
				return err
			}
			var rows [][]string
			for _, z := range zs {
				rows = append(rows, []string{z.ID, z.Name})
			}
			return o.print(map[string]any{"zones": zs}, []string{"ZONE ID", "DOMAIN"}, rows)
		},
	}
	cmd.AddCommand(add, list)
	return cmd
}

// newCmdSimEngineVersion builds `cellctl sim engine-version`: retire an
// engine version as AWS retires old minors.
func newCmdSimEngineVersion(o *SimOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "engine-version", Short: "Retire database engine versions, as AWS stops offering old minors"}
	var restore bool
	retire := &cobra.Command{
		Use:   "retire ENGINE VERSION",
		Short: "Stop offering an engine version for new clusters (--restore offers it again)",
		Long: `Make the simulated AWS stop offering ENGINE at VERSION for new resources, as AWS
does when an Aurora PostgreSQL minor leaves the list: creating a cluster pinned to
it fails with InvalidParameterCombination ("Cannot find version 15.8 for
aurora-postgresql"). Clusters already running it keep running.`,
		Example: "  cellctl sim engine-version retire aurora-postgresql 15.8",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			return c.RetireEngineVersion(args[0], args[1], restore)
		},
	}
	retire.Flags().BoolVar(&restore, "restore", false, "offer the version again")
	list := &cobra.Command{
		Use: "list", Short: "List the retired engine versions", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			vs, err := c.RetiredEngineVersions()
			if err != nil {
				return err
			}
			var rows [][]string
			for _, v := range vs {
				engine, version, _ := strings.Cut(v, " ")
				rows = append(rows, []string{engine, version})
			}
			return o.print(map[string]any{"retired": vs}, []string{"ENGINE", "VERSION"}, rows)
		},
	}
	cmd.AddCommand(retire, list)
	return cmd
}
