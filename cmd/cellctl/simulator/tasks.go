package simulator

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/sim"
)

// SimTaskSetOptions are the inputs of `cellctl sim task set`.
type SimTaskSetOptions struct {
	*SimOptions
	Rule    sim.TaskRule
	Exit    int
	SQLFile string
	// exitSet records whether --exit was given (0 is a real value).
	exitSet bool
}

// newCmdSimTask builds `cellctl sim task`: how the simulated ECS tasks
// (schema migrations) end, and which ran.
func newCmdSimTask(o *SimOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task",
		Short: "Decide how simulated ECS tasks (migrations) end, and list the tasks that ran",
		Long: `The simulator runs no containers: a task RunTask starts ends as its image's
rule says (default: exit 0). Its life follows the cloud's clock: RunTask
answers PROVISIONING, each DescribeTasks moves it one step (RUNNING, then
STOPPED with the exit code), and time does too (10s provisioning, 30s
running). Its awslogs stream <prefix>/<container>/<task id> gets
"running migration: <command>" when it starts and, when it ends,
"schema_version=<image tag>" (or the rule's --log / --schema-version, or
"migration failed: exit status N").`,
	}
	cmd.AddCommand(newCmdSimTaskSet(o), newCmdSimTaskList(o), newCmdSimTaskRules(o), newCmdSimTaskClear(o))
	return cmd
}

func newCmdSimTaskSet(so *SimOptions) *cobra.Command {
	o := &SimTaskSetOptions{SimOptions: so}
	cmd := &cobra.Command{
		Use:   "set --image IMAGE [flags]",
		Short: "Set how the tasks of an image end",
		Example: `  cellctl sim task set --image registry/app:v2 --exit 1 --log "ERROR: relation orders does not exist"
  cellctl sim task set --image registry/app:v3 --hang
  cellctl sim task set --image registry/app:v4 --no-start "pull access denied for registry/app"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.exitSet = cmd.Flags().Changed("exit")
			return simTaskSetRun(o)
		},
	}
	cmd.Flags().StringVar(&o.Rule.Image, "image", "", "the image whose tasks the rule decides (required)")
	cmd.Flags().IntVar(&o.Exit, "exit", 0, "the essential container's exit code")
	cmd.Flags().StringVar(&o.Rule.Log, "log", "", "text that replaces the last log line (lines split on newlines)")
	cmd.Flags().BoolVar(&o.Rule.Hang, "hang", false, "the task stays RUNNING until StopTask")
	cmd.Flags().StringVar(&o.Rule.NoStart, "no-start", "", "the task fails to start: stopCode TaskFailedToStart, stoppedReason CannotPullContainerError: REASON")
	cmd.Flags().StringVar(&o.Rule.SchemaVersion, "schema-version", "", "the schema version the last line reports (default: the image tag)")
	cmd.Flags().StringVar(&o.SQLFile, "sql", "", "SQL file the task runs on its cell's database as cellctl_migrator (for real when CELLCTL_TEST_PGHOST names a PostgreSQL server)")
	cmd.MarkFlagRequired("image")
	return cmd
}

func simTaskSetRun(o *SimTaskSetOptions) error {
	r := o.Rule
	if o.exitSet {
		r.Exit = &o.Exit
	}
	if o.SQLFile != "" {
		b, err := os.ReadFile(o.SQLFile)
		if err != nil {
			return fmt.Errorf("--sql: %w", err)
		}
		r.SQLFile, r.SQL = o.SQLFile, string(b)
	}
	c, err := o.cloud()
	if err != nil {
		return err
	}
	got, err := c.SetTaskRule(r)
	if err != nil {
		return err
	}
	return o.print(map[string]any{"rule": ruleJSON(got)}, ruleHeaders, [][]string{ruleRow(got)})
}

var ruleHeaders = []string{"IMAGE", "OUTCOME", "LOG", "SCHEMA VERSION", "SQL"}

func ruleRow(r sim.TaskRule) []string {
	outcome := "exit 0"
	switch {
	case r.NoStart != "":
		outcome = "fails to start: " + r.NoStart
	case r.Hang:
		outcome = "hangs until stopped"
	case r.Exit != nil:
		outcome = "exit " + strconv.Itoa(*r.Exit)
	}
	return []string{r.Image, outcome, orDash(r.Log), orDash(r.SchemaVersion), orDash(r.SQLFile)}
}

// ruleJSON is a rule without its SQL text (the file is named).
func ruleJSON(r sim.TaskRule) sim.TaskRule {
	r.SQL = ""
	return r
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newCmdSimTaskList(o *SimOptions) *cobra.Command {
	var cell string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tasks RunTask started: cluster, task definition, image, command, status, exit code",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			runs, err := c.Tasks()
			if err != nil {
				return err
			}
			var rows [][]string
			shown := []sim.TaskRun{}
			for _, r := range runs {
				if cell != "" && !sim.MatchStack(o.qualify(cell), r.Stack) {
					continue
				}
				shown = append(shown, r)
				exit := "-"
				if r.ExitCode != nil {
					exit = strconv.Itoa(*r.ExitCode)
				}
				status := r.LastStatus
				if r.StopCode != "" {
					status += " (" + r.StopCode + ")"
				}
				rows = append(rows, []string{r.ID, r.Cluster, r.TaskDefinition, r.Image, strings.Join(r.Command, " "), status, exit})
			}
			return o.print(map[string]any{"tasks": shown}, []string{"TASK", "CLUSTER", "TASK DEFINITION", "IMAGE", "COMMAND", "STATUS", "EXIT"}, rows)
		},
	}
	cmd.Flags().StringVar(&cell, "cell", "", "only the tasks of this cell's clusters")
	return cmd
}

func newCmdSimTaskRules(o *SimOptions) *cobra.Command {
	return &cobra.Command{
		Use: "rules", Short: "List the task rules, by image", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			rules, err := c.TaskRules()
			if err != nil {
				return err
			}
			var rows [][]string
			out := []sim.TaskRule{}
			for _, r := range rules {
				rows = append(rows, ruleRow(r))
				out = append(out, ruleJSON(r))
			}
			return o.print(map[string]any{"rules": out}, ruleHeaders, rows)
		},
	}
}

func newCmdSimTaskClear(o *SimOptions) *cobra.Command {
	return &cobra.Command{
		Use: "clear", Short: "Remove every task rule and the recorded tasks", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			return c.ClearTasks()
		},
	}
}

// newCmdSimSQL builds `cellctl sim sql`: the statements the simulated
// Aurora clusters ran (Data API and migration tasks).
func newCmdSimSQL(o *SimOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "sql", Short: "List the SQL the simulated Aurora clusters ran (Data API, migration tasks)"}
	var cluster, cell string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the statements, oldest first",
		Long: `Every statement run through the RDS Data API (ExecuteStatement,
BatchExecuteStatement) or by a migration task's --sql rule, per cluster:
scripted (recorded and answered as a success) or, with CELLCTL_TEST_PGHOST
set, run on that PostgreSQL server (database sim_<cluster id>).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.cloud()
			if err != nil {
				return err
			}
			stmts, err := c.Statements(cluster)
			if err != nil {
				return err
			}
			var rows [][]string
			shown := []sim.SQLStatement{}
			for _, s := range stmts {
				if cell != "" && !sim.MatchStack(o.qualify(cell), s.Stack) {
					continue
				}
				shown = append(shown, s)
				sql := strings.Join(strings.Fields(s.SQL), " ")
				if len(sql) > 80 {
					sql = sql[:77] + "..."
				}
				rows = append(rows, []string{strconv.Itoa(s.Seq), s.Cluster, s.Source, s.Mode, sql, orDash(s.Error)})
			}
			return o.print(map[string]any{"statements": shown}, []string{"#", "CLUSTER", "SOURCE", "MODE", "SQL", "ERROR"}, rows)
		},
	}
	list.Flags().StringVar(&cluster, "cluster", "", "only this DB cluster (identifier or ARN)")
	list.Flags().StringVar(&cell, "cell", "", "only this cell's clusters")
	cmd.AddCommand(list)
	return cmd
}
