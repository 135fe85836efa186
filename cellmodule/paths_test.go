package cellmodule

import (
	"reflect"
	"testing"
)

// The serving paths are required paths, the same values (so the
// simulator's data plane and `plan` name them alike): the task's object
// writes and reads under its prefix and its queue's sends and receives —
// nothing ECS does to start it, and no other cell's resource.
func TestServingPathsAreTheTasksRequestPath(t *testing.T) {
	required := map[string]bool{}
	for _, p := range RequiredPaths("cell-b", "123456789012", true, "") {
		required[p.Name+"|"+p.Principal+"|"+p.Action+"|"+p.Resource+p.Suffix] = true
	}
	var got [][3]string
	for _, p := range ServingPaths("cell-b") {
		if !required[p.Name+"|"+p.Principal+"|"+p.Action+"|"+p.Resource+p.Suffix] {
			t.Errorf("%s is not a required path", p.Name)
		}
		got = append(got, [3]string{p.Principal, p.Action, p.Resource + p.Suffix})
	}
	want := [][3]string{
		{"cell-b/task-role", "s3:PutObject", BucketLabel + "/cells/cell-b/probe"},
		{"cell-b/task-role", "s3:GetObject", BucketLabel + "/cells/cell-b/probe"},
		{"cell-b/task-role", "sqs:SendMessage", "cell-b/queue"},
		{"cell-b/task-role", "sqs:ReceiveMessage", "cell-b/queue"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("serving paths = %v, want %v", got, want)
	}
}
