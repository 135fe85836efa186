package sim

import "github.com/cellctl/cellctl/internal/sim/store"

// The simulator's ECS tasks and Data API statements (store/ecs.go): the
// task rules `cellctl sim task set` writes, the runs `sim task list`
// shows, the statements `sim sql list` shows. The methods are
// store.Cloud's (SetTaskRule, TaskRules, Tasks, ClearTasks, Statements,
// LogLines).
type (
	TaskRule     = store.TaskRule
	TaskRun      = store.TaskRun
	SQLStatement = store.SQLStatement
)

// MatchStack reports whether a stack pattern names the stack of a key
// (see store.MatchStack).
func MatchStack(pattern, key string) bool { return store.MatchStack(pattern, key) }
