package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

// RefreshDrift accounts for every cloud resource of the state: read and
// the same, changed (each property old → new, secrets masked), deleted
// out of band, or not checked with why — and never writes the state.
func TestRefreshDriftReportsEveryResource(t *testing.T) {
	fe := newFakeEngine(t)
	res := func(name string, inputs map[string]any) map[string]any {
		return map[string]any{"urn": urn("cell-b", queueType, name), "type": queueType, "custom": true, "id": name, "inputs": inputs}
	}
	writeCheckpoint(t, fe.root, "cells", "cell-b", deploymentWith("cell-b", nil,
		res("same", nil), res("changed", nil), res("deleted", nil), res("failed", nil), res("silent", nil), providerRes("cell-b")))
	meta := func(op apitype.OpType, name string, old, new map[string]any, diff map[string]apitype.PropertyDiff) apitype.StepEventMetadata {
		m := apitype.StepEventMetadata{Op: op, URN: urn("cell-b", queueType, name), Type: queueType, DetailedDiff: diff}
		if old != nil {
			m.Old = &apitype.StepEventStateMetadata{Inputs: old}
		}
		if new != nil {
			m.New = &apitype.StepEventStateMetadata{Inputs: new}
		}
		return m
	}
	oldIn := map[string]any{"visibilityTimeoutSeconds": 30, "tags": map[string]any{"cell": "cell-b"}, "policy": map[string]any{secretSig: "x", "ciphertext": "c"}}
	newIn := map[string]any{"visibilityTimeoutSeconds": 60, "tags": map[string]any{"cell": "cell-b", "owner": "someone"}, "policy": "[secret]"}
	diff := map[string]apitype.PropertyDiff{"visibilityTimeoutSeconds": {}, "tags.owner": {}, "policy": {}}
	fe.cli.op = func(c *fakeCall) fakeResult {
		if !c.has("--preview-only") {
			t.Errorf("drift ran a refresh that writes the state: %v", c.Args)
		}
		return fakeResult{Events: []apitype.EngineEvent{
			{ResourcePreEvent: &apitype.ResourcePreEvent{Metadata: meta(apitype.OpRefresh, "same", nil, nil, nil)}},
			{ResOutputsEvent: &apitype.ResOutputsEvent{Metadata: meta(apitype.OpSame, "same", oldIn, oldIn, nil)}},
			{ResOutputsEvent: &apitype.ResOutputsEvent{Metadata: meta(apitype.OpUpdate, "changed", oldIn, newIn, diff)}},
			{ResOutputsEvent: &apitype.ResOutputsEvent{Metadata: meta(apitype.OpDelete, "deleted", oldIn, nil, nil)}},
			{ResourcePreEvent: &apitype.ResourcePreEvent{Metadata: meta(apitype.OpRefresh, "failed", nil, nil, nil)}},
			{DiagnosticEvent: &apitype.DiagnosticEvent{URN: urn("cell-b", queueType, "failed"), Severity: "error", Message: "AccessDenied: sqs:GetQueueAttributes\nmore"}},
		}}
	}
	got, err := fe.RefreshDrift(context.Background(), "cell-b")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]RefreshedResource{}
	for _, r := range got {
		byName[r.Name] = r
	}
	if len(got) != 5 {
		t.Fatalf("resources = %+v, want the 5 custom resources (no provider)", got)
	}
	if byName["same"].State != RefreshSame || byName["deleted"].State != RefreshDeleted {
		t.Errorf("same = %+v, deleted = %+v", byName["same"], byName["deleted"])
	}
	ch := byName["changed"]
	want := []RefreshChange{{Path: "policy", Old: "[secret]", New: "[secret]"}, {Path: "tags.owner", Old: "(absent)", New: "someone"}, {Path: "visibilityTimeoutSeconds", Old: "30", New: "60"}}
	if ch.State != RefreshChanged || len(ch.Changes) != 2 || ch.Changes[0] != want[1] || ch.Changes[1] != want[2] {
		t.Errorf("changed = %+v, want %v (an unchanged secret is not a change)", ch, want[1:])
	}
	if f := byName["failed"]; f.State != RefreshNotChecked || f.Reason != "the read failed: AccessDenied: sqs:GetQueueAttributes" {
		t.Errorf("failed = %+v", f)
	}
	if s := byName["silent"]; s.State != RefreshNotChecked || s.Reason != "the refresh reported nothing for it" {
		t.Errorf("silent = %+v", s)
	}
	if c := fe.cli.callsOf("refresh"); len(c) != 1 || c[0].Env["PULUMI_SKIP_CONFIRMATIONS"] != "" {
		t.Errorf("the refresh preview must run without PULUMI_SKIP_CONFIRMATIONS: %v", c)
	}
	// On a file backend the state is the checkpoint's: the refresh
	// preview is the only start of the CLI.
	if v := fe.cli.calledVerbs(); !slices.Equal(v, []string{"refresh"}) {
		t.Errorf("a file backend's drift check ran %v, want only the refresh", v)
	}
	if _, err := fe.RefreshDrift(context.Background(), "cell-a"); !errors.Is(err, ErrNotDeployed) {
		t.Errorf("a stack never deployed: %v", err)
	}
}

// A refresh that stops part-way says so for what it did not reach.
func TestRefreshDriftStoppedPartWay(t *testing.T) {
	fe := newFakeEngine(t)
	writeCheckpoint(t, fe.root, "cells", "cell-b", deploymentWith("cell-b", nil, vpc("cell-b")))
	fe.cli.op = func(c *fakeCall) fakeResult { return fakeResult{Stderr: "error: the provider crashed\n", Code: 255} }
	got, err := fe.RefreshDrift(context.Background(), "cell-b")
	if err != nil || len(got) != 1 || got[0].State != RefreshNotChecked || !strings.Contains(got[0].Reason, "the refresh stopped before reading it") {
		t.Fatalf("%+v %v", got, err)
	}
}

// refreshValue renders what a drift report shows of one property.
func TestRefreshValue(t *testing.T) {
	props := map[string]any{"a": []any{"x", map[string]any{"b": 1}}, "s": map[string]any{secretSig: "x"}, "long": strings.Repeat("z", 300)}
	for path, want := range map[string]string{
		"a[0]": "x", "a[1].b": "1", "a[5]": "(absent)", "a.b": "(absent)", "s.inner": "[secret]", "missing": "(absent)", "a[": "(unreadable path)",
		"long": strings.Repeat("z", 200) + "… (300 bytes)", "a": `["x",{"b":1}]`,
	} {
		if got := refreshValue(props, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if got := refreshValue(nil, "a"); got != "(absent)" {
		t.Errorf("no properties: %q", got)
	}
}

// The provider plugin is installed once before stacks fan out — not on
// the simulated cloud, not when it is there — and a failed install says
// how to install it by hand.
func TestPreparePlugins(t *testing.T) {
	offline := newFakeEngine(t)
	if err := offline.PreparePlugins(context.Background()); err != nil || len(offline.cli.calls) != 0 {
		t.Fatalf("offline: %v, %v", err, offline.cli.calledVerbs())
	}
	online := func(t *testing.T) *fakeEngine {
		return newFakeEngine(t, func(o *Options) { o.Cloud.Offline = false })
	}
	have := online(t)
	have.cli.plugins = []map[string]any{{"name": "aws", "kind": "resource", "version": strings.TrimPrefix(AWSPluginVersion, "v")}}
	if err := have.PreparePlugins(context.Background()); err != nil || len(have.cli.callsOf("plugin install")) != 0 {
		t.Fatalf("installed: %v, %v", err, have.cli.calledVerbs())
	}
	missing := online(t)
	if err := missing.PreparePlugins(context.Background()); err != nil || len(missing.cli.callsOf("plugin install")) != 1 || !strings.Contains(missing.log.String(), "installing the pulumi-aws provider plugin "+AWSPluginVersion) {
		t.Fatalf("missing: %v, %v, log %q", err, missing.cli.calledVerbs(), missing.log.String())
	}
	broken := online(t)
	broken.cli.installErr = "downloading plugin\nerror: 403 Forbidden from github.com\n"
	err := broken.PreparePlugins(context.Background())
	if err == nil || !strings.Contains(err.Error(), "(403 Forbidden from github.com)") || !strings.Contains(err.Error(), "pulumi plugin install resource aws "+AWSPluginVersion) || !strings.Contains(err.Error(), "--cloud sim") {
		t.Fatalf("err = %v", err)
	}
}
