package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router/component"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

const queueType = "aws:sqs/queue:Queue"

// interrupted is cell-b's state after a killed up: the VPC in the state,
// a queue's create in flight.
func interrupted() map[string]any {
	d := deploymentWith("cell-b", nil, vpc("cell-b"))
	d["pending_operations"] = []any{map[string]any{"resource": map[string]any{"urn": urn("cell-b", queueType, "cell-b-queue"), "type": queueType, "custom": true}, "type": "creating"}}
	return d
}

func stateURNs(t *testing.T, fe *fakeEngine, stack string) (resources map[string]string, pending int) {
	t.Helper()
	latest, _ := fe.cli.latest(fe.root, stack)
	var d struct {
		Resources []struct {
			URN string `json:"urn"`
			ID  string `json:"id"`
		} `json:"resources"`
		Pending []json.RawMessage `json:"pending_operations"`
	}
	if err := json.Unmarshal(latest, &d); err != nil {
		t.Fatal(err)
	}
	resources = map[string]string{}
	for _, r := range d.Resources {
		resources[r.URN] = r.ID
	}
	return resources, len(d.Pending)
}

// An up after a killed one repairs the state first: a create that
// completed in the cloud is adopted with its id (never created twice),
// and the report says so.
func TestUpAdoptsTheInterruptedRunsCompletedCreate(t *testing.T) {
	qURN := urn("cell-b", queueType, "cell-b-queue")
	var asked []string
	fe := newFakeEngine(t, func(o *Options) {
		o.Cloud.ResolvePending = func(_ context.Context, stack string, urns []string) (map[string]string, error) {
			asked = append(asked, urns...)
			return map[string]string{qURN: "https://sqs/cell-b-queue"}, nil
		}
	})
	writeCheckpoint(t, fe.root, "cells", "cell-b", interrupted())
	res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp})
	if res.Result != stackrun.Succeeded {
		t.Fatalf("%s: %v", res.Result, res.Err)
	}
	if len(asked) != 1 || asked[0] != qURN {
		t.Errorf("the cloud was asked about %v", asked)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, want := range []string{"interrupted with 1 operation(s) in flight", "repaired: 1 interrupted create(s) had completed and were adopted, 0 had not and were cleared"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	resources, pending := stateURNs(t, fe, "cell-b")
	if resources[qURN] != "https://sqs/cell-b-queue" || pending != 0 {
		t.Errorf("state after the repair: resources %v, %d pending", resources, pending)
	}
	verbs := strings.Join(fe.cli.calledVerbs(), ",")
	if !strings.Contains(verbs, "stack import,refresh") || !strings.HasSuffix(verbs, "up,stack output,stack output,stack history") {
		t.Errorf("commands = %s; want the import and refresh before the up", verbs)
	}
}

// Without a cloud that can say which creates completed, the operator is
// told to check; with a repair that loses the adopted create, nothing else
// runs and the orphan is named.
func TestInterruptedRunWithoutACertainRepair(t *testing.T) {
	fe := newFakeEngine(t)
	writeCheckpoint(t, fe.root, "cells", "cell-b", interrupted())
	res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp})
	if res.Result != stackrun.Succeeded || !strings.Contains(strings.Join(res.Notes, "\n"), "check the cloud for resources the interrupted run may have created (then run `cellctl up --refresh`)") {
		t.Fatalf("%s %v, notes %q", res.Result, res.Err, res.Notes)
	}

	qURN := urn("cell-b", queueType, "cell-b-queue")
	lossy := newFakeEngine(t, func(o *Options) {
		o.Cloud.ResolvePending = func(context.Context, string, []string) (map[string]string, error) {
			return map[string]string{qURN: "q-1"}, nil
		}
	})
	writeCheckpoint(t, lossy.root, "cells", "cell-b", interrupted())
	lossy.cli.op = func(c *fakeCall) fakeResult {
		if c.Verb == "refresh" {
			return fakeResult{Deployment: deploymentWith("cell-b", nil, vpc("cell-b"))} // as pulumi v3.274's flag did
		}
		t.Errorf("%s ran after a repair that lost a resource", c.Verb)
		return fakeResult{}
	}
	res = lossy.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp})
	if res.Result != stackrun.Failed || !strings.Contains(res.Err.Error(), "created 1 resource(s) that the repair could not adopt into the state: "+queueType+" cell-b-queue (q-1); nothing else was run") {
		t.Fatalf("%s: %v", res.Result, res.Err)
	}

	failing := newFakeEngine(t, func(o *Options) {
		o.Cloud.ResolvePending = func(context.Context, string, []string) (map[string]string, error) {
			return nil, errors.New("DescribeQueues: throttled")
		}
	})
	writeCheckpoint(t, failing.root, "cells", "cell-b", interrupted())
	res = failing.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp})
	if res.Result != stackrun.Failed || !strings.Contains(res.Err.Error(), "checking interrupted creates: DescribeQueues: throttled") || len(failing.cli.callsOf("up")) != 0 {
		t.Fatalf("%s: %v", res.Result, res.Err)
	}
}

// Pending operations under a lock belong to a run still in flight: they
// are left alone and the up is a lock conflict.
func TestPendingOperationsUnderALockAreLeftAlone(t *testing.T) {
	fe := newFakeEngine(t, func(o *Options) {
		o.Cloud.ResolvePending = func(context.Context, string, []string) (map[string]string, error) {
			return map[string]string{urn("cell-b", queueType, "cell-b-queue"): "q-1"}, nil
		}
	})
	writeCheckpoint(t, fe.root, "cells", "cell-b", interrupted())
	lockStack(t, fe.root, "cells", "cell-b", "ci-7", 77)
	res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp})
	var locked *outcome.LockedError
	if !errors.As(res.Err, &locked) || !strings.Contains(res.Err.Error(), "ops@ci-7, pid 77") {
		t.Fatalf("%s: %v", res.Result, res.Err)
	}
	if len(fe.cli.callsOf("stack import")) != 0 || len(fe.cli.callsOf("up")) != 0 {
		t.Errorf("the state of a locked stack was changed: %v", fe.cli.calledVerbs())
	}
	if _, pending := stateURNs(t, fe, "cell-b"); pending != 1 {
		t.Errorf("pending operations = %d, want the in-flight one kept", pending)
	}
}

// The orphan audit adopts a live resource the state lost under the parent
// and provider its URN and siblings name, and refuses — running nothing —
// when either is ambiguous.
func TestOrphanAudit(t *testing.T) {
	sub := "aws:ec2/subnet:Subnet"
	comp := "cells:index:Cell"
	parent := urn("cell-b", comp, "cell-b")
	prov := urn("cell-b", "pulumi:providers:aws", "default") + "::p1"
	base := func() map[string]any {
		return deploymentWith("cell-b", nil,
			map[string]any{"urn": parent, "type": comp, "custom": false},
			map[string]any{"urn": "urn:pulumi:cell-b::cells::" + comp + "$" + vpcType + "::cell-b-vpc", "type": vpcType, "custom": true, "id": "vpc-1", "parent": parent, "provider": prov})
	}
	orphanURN := "urn:pulumi:cell-b::cells::" + comp + "$" + sub + "::cell-b-private-a"
	for _, tc := range []struct {
		name  string
		state func() map[string]any
		want  string // error fragment; "": adopted
	}{
		{"a unique parent and provider", base, ""},
		{"two candidate parents", func() map[string]any {
			d := base()
			d["resources"] = append(d["resources"].([]map[string]any), map[string]any{"urn": urn("cell-b", comp, "other"), "type": comp})
			return d
		}, "2 resources of the state could be its parent"},
		{"siblings on two providers", func() map[string]any {
			d := base()
			d["resources"] = append(d["resources"].([]map[string]any), map[string]any{"urn": "urn:pulumi:cell-b::cells::" + comp + "$" + queueType + "::q", "type": queueType, "custom": true, "parent": parent, "provider": prov + "x"})
			return d
		}, "its siblings use 2 aws providers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := newFakeEngine(t, func(o *Options) {
				o.Cloud.StackResources = func(context.Context, string) ([]cloud.CloudResource, error) {
					return []cloud.CloudResource{{URN: orphanURN, Type: sub, ID: "subnet-9"}}, nil
				}
			})
			writeCheckpoint(t, fe.root, "cells", "cell-b", tc.state())
			res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp})
			if tc.want != "" {
				var oe *OrphanError
				if !errors.As(res.Err, &oe) || !strings.Contains(res.Err.Error(), tc.want) || !strings.Contains(res.Err.Error(), "nothing was run") {
					t.Fatalf("%s: %v", res.Result, res.Err)
				}
				if len(fe.cli.callsOf("up")) != 0 || len(fe.cli.callsOf("stack import")) != 0 {
					t.Errorf("ran %v after refusing the orphan", fe.cli.calledVerbs())
				}
				return
			}
			if res.Result != stackrun.Succeeded || !strings.Contains(strings.Join(res.Notes, "\n"), "orphan audit: adopted 1 resource(s)") {
				t.Fatalf("%s %v, notes %q", res.Result, res.Err, res.Notes)
			}
			latest, _ := fe.cli.latest(fe.root, "cell-b")
			var d struct {
				Resources []stateEntry `json:"resources"`
			}
			json.Unmarshal(latest, &d)
			var got *stateEntry
			for i := range d.Resources {
				if d.Resources[i].URN == orphanURN {
					got = &d.Resources[i]
				}
			}
			if got == nil || got.Parent != parent || got.Provider != prov || !got.Custom {
				t.Fatalf("adopted entry = %+v", got)
			}
		})
	}
}

// A router whose state has no primary distribution is deployed in two
// passes of one up: the primary without its continuous deployment policy
// (CloudFront refuses one on create), then attached; a deployed router's
// up renders it attached at once.
func TestRouterFirstUpAttachesThePolicyInASecondPass(t *testing.T) {
	var attach []bool
	fe := newFakeEngine(t, func(o *Options) {
		o.Program = func(f *fleet.Fleet) pulumi.RunFunc {
			attach = append(attach, f.Router.AttachDeploymentPolicy)
			return func(*pulumi.Context) error { return nil }
		}
	})
	for _, c := range fe.fleet.CellIDs() {
		writeCheckpoint(t, fe.root, "cells", c, deploymentWith(c, map[string]any{"albDnsName": c + ".elb"}))
	}
	fe.cli.op = func(c *fakeCall) fakeResult {
		// The primary as the pass left it: attached to its policy or not.
		policy := ""
		if attach[len(attach)-1] {
			policy = "cdp-1"
		}
		primary := map[string]any{"urn": urn("router", distributionType, component.PrimaryDistributionName(fleet.RouterStack)), "type": distributionType, "custom": true, "id": "E1",
			"outputs": map[string]any{"continuousDeploymentPolicyId": policy}}
		return fakeResult{Deployment: deploymentWith("router", nil, primary)}
	}
	attach = nil
	res := fe.RunStack(context.Background(), stackrun.Request{Stack: "router", Op: stackrun.OpUp})
	if res.Result != stackrun.Succeeded {
		t.Fatalf("%s: %v", res.Result, res.Err)
	}
	if len(attach) != 2 || attach[0] || !attach[1] {
		t.Errorf("programs rendered with attach = %v, want [false true]", attach)
	}
	if len(fe.cli.callsOf("up")) != 2 || !strings.Contains(strings.Join(res.Notes, "\n"), "then attached the policy in a second update") {
		t.Errorf("ups = %d, notes %q", len(fe.cli.callsOf("up")), res.Notes)
	}
	attach = nil
	res = fe.RunStack(context.Background(), stackrun.Request{Stack: "router", Op: stackrun.OpUp})
	if res.Result != stackrun.Succeeded || len(attach) != 1 || !attach[0] || len(fe.cli.callsOf("up")) != 3 {
		t.Errorf("a deployed router: %s %v, attach %v", res.Result, res.Err, attach)
	}
}

// A preview of stacks the backend does not hold yet runs against a
// scratch backend (the router's needs every cell too): every resource
// plans as a create, and the fleet's backend gains no stack and no file.
func TestPreviewOfUndeployedStacksLeavesTheBackendAlone(t *testing.T) {
	fe := newFakeEngine(t)
	writeCheckpoint(t, fe.root, "cells", "cell-a", deploymentWith("cell-a", nil, vpc("cell-a")))
	for _, stack := range []string{"cell-b", "router"} {
		res := fe.RunStack(context.Background(), stackrun.Request{Stack: stack, Op: stackrun.OpPreview})
		if res.Result != stackrun.Succeeded {
			t.Fatalf("%s: %s %v", stack, res.Result, res.Err)
		}
	}
	previews := fe.cli.callsOf("preview")
	if len(previews) != 2 {
		t.Fatalf("previews = %d", len(previews))
	}
	for _, p := range previews {
		if p.Env["PULUMI_BACKEND_URL"] == fe.Backend() {
			t.Errorf("the preview of %s ran against the fleet's backend", p.Stack)
		}
	}
	entries, _ := os.ReadDir(fe.root + "/.pulumi/stacks/cells")
	if len(entries) != 1 {
		t.Errorf("the fleet's backend holds %d stacks, want only cell-a", len(entries))
	}
	// A deployed stack is previewed against the fleet's backend.
	res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-a", Op: stackrun.OpPreview})
	if res.Result != stackrun.Succeeded || fe.cli.callsOf("preview")[2].Env["PULUMI_BACKEND_URL"] != fe.Backend() {
		t.Errorf("cell-a: %s %v", res.Result, res.Err)
	}
	for _, s := range []string{"cell-a", "cell-b"} {
		if strings.Contains(fe.stackFile(t, s), "originVerify") {
			t.Errorf("a preview wrote the origin-verify secret into %s's stack file", s)
		}
	}
}
