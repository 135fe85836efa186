package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/internal/stackrun"
)

func TestLockHolders(t *testing.T) {
	host, _ := os.Hostname()
	msg := "the stack is currently locked by 2 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.\n" +
		"  file:///x/.pulumi/locks/organization/cells/cell-a/1.json: created by root@" + host + " (pid 999999999) at 2026-11-30T05:00:00Z\n" +
		"  file:///x/.pulumi/locks/organization/cells/cell-a/2.json: created by ops@elsewhere (pid 1) at 2026-11-30T05:01:00Z"
	hs := lockHolders(msg)
	if len(hs) != 2 {
		t.Fatalf("holders = %+v", hs)
	}
	if !hs[0].Stale || hs[0].PID != 999999999 || hs[0].User != "root" {
		t.Errorf("a dead pid on this host is stale: %+v", hs[0])
	}
	if hs[1].Stale {
		t.Errorf("a holder on another host is never called stale: %+v", hs[1])
	}
	if !rollout.ProcessAlive(os.Getpid()) {
		t.Error("this process is alive")
	}
}

func TestInlineProjectDropsMain(t *testing.T) {
	p := filepath.Join(t.TempDir(), "Pulumi.yaml")
	src := "name: cells\nruntime: go\nmain: cmd/cells\nstackConfigDir: stacks\nconfig:\n  cells:natMode: single\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := inlineProject(p)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	if strings.Contains(got, "main:") || !strings.Contains(got, "stackConfigDir: stacks") || !strings.Contains(got, "cells:natMode: single") {
		t.Fatalf("inline project:\n%s", got)
	}
}

func TestParsePending(t *testing.T) {
	ops, err := parsePending([]byte(`{"resources":[],"pending_operations":[
		{"resource":{"urn":"urn:pulumi:cell-a::cells::aws:ec2/vpc:Vpc::cell-a-vpc","type":"aws:ec2/vpc:Vpc"},"type":"creating"},
		{"resource":{"urn":"urn:pulumi:cell-a::cells::aws:sqs/queue:Queue::cell-a-queue","type":"aws:sqs/queue:Queue","id":"q"},"type":"updating"}]}`))
	if err != nil || len(ops) != 2 || ops[0].Kind != "creating" || ops[1].ID != "q" {
		t.Fatalf("ops = %+v, %v", ops, err)
	}
	if ops, err := parsePending(nil); err != nil || ops != nil {
		t.Fatalf("empty deployment: %v %v", ops, err)
	}
}

func TestChangesOf(t *testing.T) {
	c := changesOf(map[string]int{"create": 2, "update": 1, "same": 5, "replace": 1, "create-replacement": 1}, nil)
	if c != (stackrun.Changes{Create: 2, Update: 1, Same: 5, Replace: 2}) || c.Total() != 5 {
		t.Fatalf("changes = %+v", c)
	}
	planned := []stackrun.Change{{Op: "create"}, {Op: "delete"}, {Op: "update"}, {Op: "same"}}
	if c := changesOf(nil, planned); c != (stackrun.Changes{Create: 1, Update: 1, Delete: 1}) {
		t.Fatalf("from planned: %+v", c)
	}
}

func TestInputsNeverChangeTheLoadedFleet(t *testing.T) {
	f, err := fleet.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	same, err := withInputs(f, "cell-d", stackrun.Inputs{})
	if err != nil || same != f {
		t.Fatalf("no inputs: the fleet itself (%v)", err)
	}
	released, err := withInputs(f, "cell-d", stackrun.Inputs{ReleaseProtection: true})
	if err != nil {
		t.Fatal(err)
	}
	if !released.Cell("cell-d").Releasing || f.Cell("cell-d").Releasing {
		t.Fatal("the run's fleet releases cell-d; the loaded fleet must not")
	}
	if released.Cell("cell-a") != f.Cell("cell-a") {
		t.Fatal("other cells are shared, not copied")
	}
	prev := f.Cell("cell-b").Cell
	prev.Image = "registry.example.com/app:0.9.0"
	rolled, err := withInputs(f, "cell-b", stackrun.Inputs{Cell: &prev})
	if err != nil || rolled.Cell("cell-b").Image != prev.Image || f.Cell("cell-b").Image == prev.Image {
		t.Fatalf("a given configuration is deployed as data: %v", err)
	}
	if _, err := withInputs(f, "cell-a", stackrun.Inputs{Cell: &prev}); err == nil || !strings.Contains(err.Error(), "cell-b's") {
		t.Fatalf("another cell's configuration is refused: %v", err)
	}
	if _, err := withInputs(f, "router", stackrun.Inputs{ReleaseProtection: true}); err == nil {
		t.Fatal("cell inputs on the router are refused")
	}
}

func TestCleanErrKeepsStderr(t *testing.T) {
	err := errors.New("failed to run update: exit status 255\ncode: 255\nstdout: lots of progress\nstderr: error: the stack is locked\n")
	if got := cleanErr(err).Error(); got != "error: the stack is locked" {
		t.Fatalf("cleanErr = %q", got)
	}
}

func TestPassphrase(t *testing.T) {
	t.Setenv("PULUMI_CONFIG_PASSPHRASE", "")
	t.Setenv("PULUMI_CONFIG_PASSPHRASE_FILE", "")
	if _, err := passphrase(Options{}); err == nil || !strings.Contains(err.Error(), "PULUMI_CONFIG_PASSPHRASE") {
		t.Fatalf("real clouds must not fall back to the demo passphrase: %v", err)
	}
	if p, err := passphrase(Options{AllowDemoPassphrase: true}); err != nil || p != DemoPassphrase {
		t.Fatalf("demo: %q %v", p, err)
	}
	f := filepath.Join(t.TempDir(), "pass")
	os.WriteFile(f, []byte("from-file\n"), 0o600)
	t.Setenv("PULUMI_CONFIG_PASSPHRASE_FILE", f)
	if p, _ := passphrase(Options{AllowDemoPassphrase: true}); p != "from-file" {
		t.Fatalf("file passphrase = %q", p)
	}
}
