package simulator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/sim/store"
)

// sim task set/rules/list/clear and sim sql list, in table and JSON.
func TestSimTaskCommands(t *testing.T) {
	fx := newSimFixture(t)
	out := fx.must("table", "task", "set", "--image", "registry/app:v2", "--exit", "0", "--log", "applied 2 migrations", "--schema-version", "7")
	if !strings.Contains(out, "registry/app:v2") || !strings.Contains(out, "exit 0") {
		t.Errorf("set printed:\n%s", out)
	}
	sqlFile := filepath.Join(t.TempDir(), "m.sql")
	os.WriteFile(sqlFile, []byte("CREATE TABLE orders (id int);\n"), 0o644)
	fx.must("table", "task", "set", "--image", "registry/app:v3", "--hang", "--sql", sqlFile)
	if _, err := fx.run("table", "task", "set", "--image", "x", "--hang", "--no-start", "gone"); err == nil {
		t.Error("--hang with --no-start is refused")
	}
	if _, err := fx.run("table", "task", "set", "--exit", "1"); err == nil {
		t.Error("--image is required")
	}
	var rules struct {
		Rules []store.TaskRule `json:"rules"`
	}
	if err := json.Unmarshal([]byte(fx.must("json", "task", "rules")), &rules); err != nil || len(rules.Rules) != 2 ||
		rules.Rules[0].Exit == nil || rules.Rules[0].SchemaVersion != "7" || !rules.Rules[1].Hang || rules.Rules[1].SQLFile != sqlFile || rules.Rules[1].SQL != "" {
		t.Fatalf("rules = %+v, %v", rules, err)
	}
	if got, _ := fx.cloud().TaskRules(); got[1].SQL != "CREATE TABLE orders (id int);\n" {
		t.Errorf("the rule keeps the file's SQL: %+v", got[1])
	}

	// A recorded run (as RunTask leaves one) lists with its exit code.
	c := fx.cloud()
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	exit := 0
	if err := c.WithTasks(true, func(ta *store.TaskAPI) error {
		ta.ECS.Tasks["arn:t"] = &store.TaskRecord{ARN: "arn:aws:ecs:us-east-1:123456789012:task/cellctl-a/0123456789abcdef0123456789abcdef", ID: "0123456789abcdef0123456789abcdef",
			Cluster: "cellctl-a", Stack: "cells/cell-a", Family: "cellctl-a-migrate", Revision: 2, Region: "us-east-1", StartedBy: "cellctl",
			LastStatus: "STOPPED", DesiredStatus: "STOPPED", StopCode: "EssentialContainerExited", Created: now, Entered: now, StoppedAt: &now,
			Containers: []*store.TaskContainer{{Name: "migrate", Image: "registry/app:v2", Essential: true, Command: []string{"migrate", "up"}, ExitCode: &exit, LastStatus: "STOPPED"}}}
		ta.RecordStatement(store.SQLStatement{Time: now, Region: "us-east-1", Cluster: "cellctl-a-db", Stack: "cells/cell-a", Database: "app", SQL: "CREATE USER app_user WITH LOGIN", Source: "data-api", Mode: "scripted"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	out = fx.must("table", "task", "list")
	for _, want := range []string{"0123456789abcdef0123456789abcdef", "cellctl-a", "cellctl-a-migrate:2", "registry/app:v2", "migrate up", "STOPPED (EssentialContainerExited)"} {
		if !strings.Contains(out, want) {
			t.Errorf("task list lacks %q:\n%s", want, out)
		}
	}
	var runs struct {
		Tasks []map[string]any `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(fx.must("json", "task", "list")), &runs); err != nil || len(runs.Tasks) != 1 ||
		runs.Tasks[0]["taskDefinition"] != "cellctl-a-migrate:2" || runs.Tasks[0]["exitCode"] != 0.0 || runs.Tasks[0]["cluster"] != "cellctl-a" {
		t.Fatalf("task list -o json = %+v, %v", runs, err)
	}
	if out := fx.must("table", "task", "list", "--cell", "cell-b"); !strings.Contains(out, "(none)") {
		t.Errorf("cell-b ran no task:\n%s", out)
	}
	if out := fx.must("table", "sql", "list", "--cluster", "cellctl-a-db"); !strings.Contains(out, "CREATE USER app_user WITH LOGIN") || !strings.Contains(out, "data-api") {
		t.Errorf("sql list:\n%s", out)
	}
	if out := fx.must("table", "sql", "list", "--cell", "cell-b"); !strings.Contains(out, "(none)") {
		t.Errorf("sql list for cell-b:\n%s", out)
	}
	fx.must("table", "task", "clear")
	if out := fx.must("table", "task", "list"); !strings.Contains(out, "(none)") {
		t.Errorf("after clear:\n%s", out)
	}
	// sim reset empties the task files too.
	fx.must("table", "reset")
	if stmts, _ := fx.cloud().Statements(""); len(stmts) != 0 {
		t.Errorf("after reset: %+v", stmts)
	}
}
