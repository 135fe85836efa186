package cmdutil

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/engine"
)

// A cell is skipped as unchanged only when its stack's last operation
// completed with nothing pending.
func TestLastRunJudgesTheStacksLastOperation(t *testing.T) {
	for _, tc := range []struct {
		st   engine.StackStatus
		ok   bool
		why  string
		fail bool
	}{
		{engine.StackStatus{LastKind: "update", LastResult: "succeeded"}, true, "", false},
		{engine.StackStatus{LastKind: "update", LastResult: "failed"}, false, "its last update failed", false},
		{engine.StackStatus{LastKind: "update", LastResult: "succeeded", PendingOps: 2}, false, "2 operation(s) pending", false},
		{engine.StackStatus{Error: "corrupt state"}, false, "", true},
	} {
		ok, why, err := lastRun(&tc.st)
		if ok != tc.ok || !strings.Contains(why, tc.why) || (err != nil) != tc.fail {
			t.Errorf("%+v: %v %q %v", tc.st, ok, why, err)
		}
	}
}
