package engine

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"

	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
)

func preEvent(op apitype.OpType, stack, typ, name string) apitype.EngineEvent {
	return apitype.EngineEvent{ResourcePreEvent: &apitype.ResourcePreEvent{Metadata: apitype.StepEventMetadata{Op: op, URN: urn(stack, typ, name), Type: typ}}}
}

func outEvent(op apitype.OpType, stack, typ, name string) apitype.EngineEvent {
	return apitype.EngineEvent{ResOutputsEvent: &apitype.ResOutputsEvent{Metadata: apitype.StepEventMetadata{Op: op, URN: urn(stack, typ, name), Type: typ}}}
}

const vpcType = "aws:ec2/vpc:Vpc"

func vpc(stack string) map[string]any {
	return map[string]any{"urn": urn(stack, vpcType, stack+"-vpc"), "type": vpcType, "custom": true, "id": "vpc-1",
		"inputs": map[string]any{"cidrBlock": "10.1.0.0/16"}, "outputs": map[string]any{"cidrBlock": "10.1.0.0/16"}}
}

// An up of a new stack creates it in the backend, reports what it created
// (changes, planned steps, progress events), shows its outputs with
// secrets masked, and keeps the salt pulumi wrote into the workspace's
// stack file in the repository's file.
func TestUpCreatesTheStackAndReportsWhatItDid(t *testing.T) {
	var mu sync.Mutex
	var events []stackrun.Event
	fe := newFakeEngine(t, func(o *Options) {
		o.Events = func(ev stackrun.Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }
	})
	fe.cli.op = func(c *fakeCall) fakeResult {
		return fakeResult{
			Deployment: deploymentWith("cell-a", map[string]any{"albDnsName": "cell-a.elb.example.com", "dbPassword": secretOutput("hunter2")}, vpc("cell-a")),
			Events:     []apitype.EngineEvent{preEvent(apitype.OpCreate, "cell-a", vpcType, "cell-a-vpc"), outEvent(apitype.OpCreate, "cell-a", vpcType, "cell-a-vpc")},
			Summary:    map[apitype.OpType]int{apitype.OpCreate: 1},
		}
	}
	res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp})
	if res.Result != stackrun.Succeeded || res.Err != nil {
		t.Fatalf("result = %s, %v", res.Result, res.Err)
	}
	if res.Changes.Create != 1 || res.Changes.Total() != 1 {
		t.Errorf("changes = %+v, want one create", res.Changes)
	}
	if len(res.Planned) != 1 || res.Planned[0].Op != "create" || res.Planned[0].Name != "cell-a-vpc" || res.Planned[0].Type != vpcType {
		t.Errorf("planned = %+v", res.Planned)
	}
	if res.Outputs["albDnsName"] != "cell-a.elb.example.com" || res.Outputs["dbPassword"] != "[secret]" {
		t.Errorf("outputs = %v, want the DNS name and the password masked", res.Outputs)
	}
	mu.Lock()
	kinds := map[stackrun.EventKind]int{}
	for _, ev := range events {
		kinds[ev.Kind]++
	}
	mu.Unlock()
	if kinds[stackrun.ResourceStarted] != 1 || kinds[stackrun.ResourceDone] != 1 {
		t.Errorf("progress events = %v", kinds)
	}
	if got := fe.stackFile(t, "cell-a"); !strings.Contains(got, "encryptionsalt: v1:") || !strings.Contains(got, "cells:index: 1") {
		t.Errorf("the repository's stack file lacks the new salt or lost its config:\n%s", got)
	}
	bl, _, err := fe.blobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bl.(dirBlobs).path(fe.stackKey("cell-a"))); err != nil {
		t.Errorf("the stack is not in the backend: %v", err)
	}
}

// Operations that change nothing in the repository never write its stack
// file, even when pulumi wrote the workspace's copy.
func TestPreviewAndDestroyWriteNoStackFile(t *testing.T) {
	fe := newFakeEngine(t)
	writeCheckpoint(t, fe.root, "cells", "cell-b", deploymentWith("cell-b", nil, vpc("cell-b")))
	before := fe.stackFile(t, "cell-b")
	for _, op := range []stackrun.Operation{stackrun.OpPreview, stackrun.OpRefresh, stackrun.OpDestroy} {
		res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: op})
		if res.Result != stackrun.Succeeded {
			t.Errorf("%s: %s %v", op, res.Result, res.Err)
		}
		if got := fe.stackFile(t, "cell-b"); got != before {
			t.Errorf("%s changed the repository's stack file:\n%s", op, got)
		}
	}
}

// A lock conflict is an outcome.LockedError (exit 4) that tells the
// operator what to do: wait for a live holder, or unlock a stale one.
func TestLockConflictSaysWhetherToWaitOrUnlock(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct {
		name string
		host string
		pid  int
		want []string
	}{
		{"a live holder on this host", host, os.Getpid(), []string{"another operation holds the stack's lock (ops@" + host, "wait for it to finish", "cellctl unlock cell-b"}},
		{"a dead holder on this host", host, 999999999, []string{"pid 999999999", "no longer running: the lock is stale", "remove it with `cellctl unlock cell-b`"}},
		{"a holder on another host", "ci-runner-7", 1, []string{"ops@ci-runner-7, pid 1", "wait for it to finish"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := newFakeEngine(t)
			writeCheckpoint(t, fe.root, "cells", "cell-b", deploymentWith("cell-b", nil, vpc("cell-b")))
			lockStack(t, fe.root, "cells", "cell-b", tc.host, tc.pid)
			res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp})
			var locked *outcome.LockedError
			if res.Result != stackrun.Failed || !errors.As(res.Err, &locked) {
				t.Fatalf("result = %s, %v; want a LockedError", res.Result, res.Err)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, res.Err)
				}
			}
			if tc.host != host && strings.Contains(res.Err.Error(), "stale") {
				t.Error("a holder on another host is never called stale")
			}
		})
	}
}

// A failed update is told by the provider's error diagnostics (each once,
// named by resource), and lists the resources whose operation failed.
func TestFailedUpIsToldByItsDiagnostics(t *testing.T) {
	fe := newFakeEngine(t)
	writeCheckpoint(t, fe.root, "cells", "cell-b", deploymentWith("cell-b", nil))
	vpcURN := urn("cell-b", vpcType, "cell-b-vpc")
	diag := apitype.EngineEvent{DiagnosticEvent: &apitype.DiagnosticEvent{URN: vpcURN, Severity: "error", Message: "creating VPC: VpcLimitExceeded\n"}}
	fe.cli.op = func(c *fakeCall) fakeResult {
		return fakeResult{
			Events: []apitype.EngineEvent{
				preEvent(apitype.OpCreate, "cell-b", vpcType, "cell-b-vpc"),
				{DiagnosticEvent: &apitype.DiagnosticEvent{Severity: "info", Message: "ignored"}},
				{DiagnosticEvent: &apitype.DiagnosticEvent{Severity: "error", Message: "ephemeral", Ephemeral: true}},
				diag, diag,
				{ResOpFailedEvent: &apitype.ResOpFailedEvent{Metadata: apitype.StepEventMetadata{Op: apitype.OpCreate, URN: vpcURN, Type: vpcType}}},
			},
			Stderr: "error: update failed\n", Code: 255,
		}
	}
	res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp})
	if res.Result != stackrun.Failed {
		t.Fatalf("result = %s", res.Result)
	}
	if got, want := res.Err.Error(), vpcType+" cell-b-vpc: creating VPC: VpcLimitExceeded"; got != want {
		t.Errorf("error = %q, want %q (once, named by resource)", got, want)
	}
	if len(res.FailedResources) != 1 || res.FailedResources[0] != vpcType+" cell-b-vpc" {
		t.Errorf("failed resources = %v", res.FailedResources)
	}
	// Without diagnostics the CLI's stderr is the message.
	fe.cli.op = func(c *fakeCall) fakeResult { return fakeResult{Stderr: "error: the provider crashed\n", Code: 255} }
	res = fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp})
	if res.Result != stackrun.Failed || res.Err.Error() != "error: the provider crashed" {
		t.Errorf("result = %s, %v", res.Result, res.Err)
	}
}

// Requests the engine cannot run are refused before anything runs.
func TestRunStackRefusals(t *testing.T) {
	fe := newFakeEngine(t)
	for _, tc := range []struct {
		req    stackrun.Request
		result string
		want   string
	}{
		{stackrun.Request{Stack: "cell-a", Op: "apply"}, stackrun.Failed, `unknown operation "apply"`},
		{stackrun.Request{Stack: "cell-zz", Op: stackrun.OpUp}, stackrun.Failed, `unknown stack "cell-zz" (stacks of this fleet: cell-a, cell-b, cell-c, cell-d, router)`},
		{stackrun.Request{Stack: "cell-a", Op: stackrun.OpDestroy}, stackrun.Skipped, "not deployed"},
		{stackrun.Request{Stack: "cell-a", Op: stackrun.OpRefresh}, stackrun.Skipped, "not deployed"},
	} {
		res := fe.RunStack(context.Background(), tc.req)
		if res.Result != tc.result || res.Err == nil || !strings.Contains(res.Err.Error(), tc.want) {
			t.Errorf("%s %s: %s %v, want %s %q", tc.req.Op, tc.req.Stack, res.Result, res.Err, tc.result, tc.want)
		}
	}
	if n := len(fe.cli.callsOf("up")) + len(fe.cli.callsOf("destroy")) + len(fe.cli.callsOf("refresh")); n != 0 {
		t.Errorf("%d operations ran for refused requests", n)
	}
	if _, err := os.Stat(fe.root); err == nil {
		t.Error("a refused or skipped read-only run created the local state directory")
	}
}

// step is an engine step's event of a resource as pulumi sends it: its
// state's custom flag, and whether the step is the logical one (a
// replacement is three steps and one logical operation).
func step(pre bool, op apitype.OpType, typ, name string, custom, logical bool) apitype.EngineEvent {
	md := apitype.StepEventMetadata{Op: op, URN: urn("cell-a", typ, name), Type: typ, Logical: logical,
		New: &apitype.StepEventStateMetadata{Type: typ, URN: urn("cell-a", typ, name), Custom: custom}}
	if pre {
		return apitype.EngineEvent{ResourcePreEvent: &apitype.ResourcePreEvent{Metadata: md}}
	}
	return apitype.EngineEvent{ResOutputsEvent: &apitype.ResOutputsEvent{Metadata: md}}
}

// An up's counts are of the cloud's resources, as status, plan and the
// simulator count them: not the stack, the cell's component, a provider
// or a stack reference (pulumi's own summary counts the stack and the
// component: "create 83" for a cell status called 81), and a replacement
// once; progress reports the same resources.
func TestUpCountsTheCloudResources(t *testing.T) {
	var mu sync.Mutex
	done := 0
	fe := newFakeEngine(t, func(o *Options) {
		o.Events = func(ev stackrun.Event) {
			if ev.Kind == stackrun.ResourceDone {
				mu.Lock()
				done++
				mu.Unlock()
			}
		}
	})
	const cellType, refType, provType = "cellctl:index:Cell", "pulumi:pulumi:StackReference", "pulumi:providers:aws"
	var evs []apitype.EngineEvent
	for _, pre := range []bool{true, false} {
		evs = append(evs,
			step(pre, apitype.OpCreate, "pulumi:pulumi:Stack", "cells-cell-a", false, true),
			step(pre, apitype.OpCreate, provType, "default_6_83_4", true, true),
			step(pre, apitype.OpCreate, cellType, "cell-a", false, true),
			step(pre, apitype.OpRead, refType, "router-outputs", true, true),
			step(pre, apitype.OpCreate, vpcType, "cell-a-vpc", true, true),
			step(pre, apitype.OpSame, "aws:sqs/queue:Queue", "cell-a-queue", true, true),
			step(pre, apitype.OpCreateReplacement, "aws:ecs/taskDefinition:TaskDefinition", "cell-a-task", true, false),
			step(pre, apitype.OpReplace, "aws:ecs/taskDefinition:TaskDefinition", "cell-a-task", true, true),
			step(pre, apitype.OpDeleteReplaced, "aws:ecs/taskDefinition:TaskDefinition", "cell-a-task", true, false),
		)
	}
	fe.cli.op = func(c *fakeCall) fakeResult {
		return fakeResult{
			Deployment: deploymentWith("cell-a", nil, vpc("cell-a")),
			Events:     evs,
			Summary:    map[apitype.OpType]int{apitype.OpCreate: 4, apitype.OpSame: 1, apitype.OpReplace: 1},
		}
	}
	res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp})
	if res.Result != stackrun.Succeeded {
		t.Fatalf("result = %s, %v", res.Result, res.Err)
	}
	if want := (stackrun.Changes{Create: 1, Same: 1, Replace: 1}); res.Changes != want {
		t.Errorf("changes = %+v, want %+v (the cloud's resources only)", res.Changes, want)
	}
	for _, c := range res.Planned {
		if !strings.HasPrefix(c.Type, "aws:") {
			t.Errorf("planned lists %s %s, which the cloud does not hold", c.Type, c.Name)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if done != 5 {
		t.Errorf("progress reported %d resources done, want the 5 cloud resource steps", done)
	}
}
