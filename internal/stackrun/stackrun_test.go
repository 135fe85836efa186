package stackrun

import (
	"fmt"
	"testing"
)

// TestResourceChangesIsOneRowPerChangedResource: what the engine reports
// for an image change of a cell (the task definition replaced in three
// steps, the service updated) and the router's stack reference reads is
// two changed resources, as the run's Changes count them; a replacement
// keeps the warning any of its steps carried.
func TestResourceChangesIsOneRowPerChangedResource(t *testing.T) {
	td, cache := "aws:ecs/taskDefinition:TaskDefinition", "aws:elasticache/replicationGroup:ReplicationGroup"
	planned := []Change{
		{Op: "create-replacement", Type: td, Name: "cell-a-task", Diffs: []string{"containerDefinitions"}, Replace: []string{"containerDefinitions"}},
		{Op: "replace", Type: td, Name: "cell-a-task", Diffs: []string{"containerDefinitions"}, Replace: []string{"containerDefinitions"}},
		{Op: "update", Type: "aws:ecs/service:Service", Name: "cell-a-service", Diffs: []string{"taskDefinition"}},
		{Op: "read", Type: "pulumi:pulumi:StackReference", Name: "cell-a-outputs"},
		{Op: "same", Type: "aws:ec2/vpc:Vpc", Name: "cell-a-vpc"},
		{Op: "delete-replaced", Type: td, Name: "cell-a-task"},
		{Op: "replace", Type: cache, Name: "cell-a-cache", Diffs: []string{"engine"}, Replace: []string{"engine"}},
		{Op: "delete-replaced", Type: cache, Name: "cell-a-cache", Warning: "replaces the cache and its data"},
		{Op: "create", Type: "aws:sqs/queue:Queue", Name: "cell-a-lane-1"},
		{Op: "refresh", Type: "aws:sqs/queue:Queue", Name: "cell-a-queue"},
	}
	got := ResourceChanges(planned)
	want := []Change{
		{Op: "replace", Type: td, Name: "cell-a-task", Diffs: []string{"containerDefinitions"}, Replace: []string{"containerDefinitions"}},
		{Op: "update", Type: "aws:ecs/service:Service", Name: "cell-a-service", Diffs: []string{"taskDefinition"}},
		{Op: "replace", Type: cache, Name: "cell-a-cache", Diffs: []string{"engine"}, Replace: []string{"engine"}, Warning: "replaces the cache and its data"},
		{Op: "create", Type: "aws:sqs/queue:Queue", Name: "cell-a-lane-1"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got\n%v\nwant\n%v", got, want)
	}
	if c := (Changes{Create: 1, Update: 1, Replace: 2}); c.Total() != len(got) {
		t.Errorf("%d rows for %d changes", len(got), c.Total())
	}
}

// A stack's resources are the cloud's: not Pulumi's stack, providers or
// stack references, nor a component.
func TestCloudResource(t *testing.T) {
	for _, tc := range []struct {
		typ    string
		custom bool
		want   bool
	}{
		{"aws:ec2/vpc:Vpc", true, true},
		{"cellctl:index:Cell", false, false},
		{"pulumi:pulumi:Stack", false, false},
		{"pulumi:providers:aws", true, false},
		{"pulumi:pulumi:StackReference", true, false},
	} {
		if got := CloudResource(tc.typ, tc.custom); got != tc.want {
			t.Errorf("CloudResource(%s, custom %v) = %v, want %v", tc.typ, tc.custom, got, tc.want)
		}
	}
}
