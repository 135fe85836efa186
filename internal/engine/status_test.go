package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
)

func providerRes(stack string) map[string]any {
	return map[string]any{"urn": urn(stack, "pulumi:providers:aws", "default"), "type": "pulumi:providers:aws", "custom": true, "id": "p1"}
}

// Status tells, per stack, whether it is deployed, its last update, how
// many cloud resources it holds (providers and the stack itself are not
// resources), what an interrupted run left pending, and its outputs with
// secrets masked. A stack never deployed is just not deployed.
func TestStatusReadsEachStacksState(t *testing.T) {
	fe := newFakeEngine(t, func(o *Options) { o.Parallel = 3 })
	fe.cli.op = func(c *fakeCall) fakeResult {
		d := deploymentWith("cell-a", map[string]any{"albDnsName": "a.elb", "token": secretOutput("t0ken")}, vpc("cell-a"), providerRes("cell-a"))
		d["pending_operations"] = []any{map[string]any{"resource": map[string]any{"urn": urn("cell-a", "aws:sqs/queue:Queue", "q"), "type": "aws:sqs/queue:Queue"}, "type": "creating"}}
		return fakeResult{Deployment: d}
	}
	if res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp}); res.Err != nil {
		t.Fatal(res.Err)
	}
	writeCheckpoint(t, fe.root, "cells", "cell-c", "{not json")
	st, err := fe.Status(context.Background(), []string{"cell-a", "cell-b", "cell-c"})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := st[0], st[1], st[2]
	if !a.Deployed || a.Resources != 1 || a.LastKind != "update" || a.LastResult != "succeeded" || a.UpdateCount != 1 || a.PendingOps != 1 {
		t.Errorf("cell-a = %+v", a)
	}
	if a.LastUpdate == nil || a.LastUpdate.Format("2006-01-02T15:04:05Z") != "2026-11-30T05:00:00Z" {
		t.Errorf("cell-a's last update = %v", a.LastUpdate)
	}
	if a.Outputs["albDnsName"] != "a.elb" || a.Outputs["token"] != "[secret]" {
		t.Errorf("cell-a's outputs = %v", a.Outputs)
	}
	if b.Deployed || b.Error != "" || b.Name != "cell-b" {
		t.Errorf("cell-b was never deployed: %+v", b)
	}
	if c.Deployed || !strings.Contains(c.Error, "the state of stack cell-c is corrupt") {
		t.Errorf("cell-c's broken checkpoint must be named: %+v", c)
	}
}

// Protected lists what a destroy would refuse to delete.
func TestProtectedListsProtectedResources(t *testing.T) {
	fe := newFakeEngine(t)
	db := map[string]any{"urn": urn("cell-b", "aws:rds/cluster:Cluster", "cell-b-db"), "type": "aws:rds/cluster:Cluster", "custom": true, "protect": true}
	writeCheckpoint(t, fe.root, "cells", "cell-b", deploymentWith("cell-b", nil, vpc("cell-b"), db))
	got, err := fe.Protected(context.Background(), "cell-b")
	if err != nil || len(got) != 1 || got[0] != "aws:rds/cluster:Cluster cell-b-db" {
		t.Fatalf("protected = %v, %v", got, err)
	}
	if _, err := fe.Protected(context.Background(), "cell-a"); !errors.Is(err, stackrun.ErrNotDeployed) {
		t.Fatalf("a stack never deployed: %v, want ErrNotDeployed", err)
	}
}

// DeployedOutputs is the one reader of deployed outputs: secrets are
// masked, a stack never deployed (or holding nothing) is ErrNotDeployed —
// on a file backend straight from the checkpoint, on a backend only the
// CLI reads (here a diy backend on Google Cloud Storage; S3's is read
// directly, TestHeldStackOnS3IsReadWithoutTheCLI) through pulumi.
func TestDeployedOutputs(t *testing.T) {
	fe := newFakeEngine(t)
	writeCheckpoint(t, fe.root, "cells", "cell-b", deploymentWith("cell-b", map[string]any{"albDnsName": "b.elb", "key": secretOutput("k")}))
	writeCheckpoint(t, fe.root, "cells", "cell-c", nil)
	outs, err := fe.DeployedOutputs(context.Background(), "cell-b")
	if err != nil || outs["albDnsName"] != "b.elb" || outs["key"] != "[secret]" {
		t.Fatalf("outputs = %v, %v", outs, err)
	}
	for _, s := range []string{"cell-a", "cell-c"} {
		if _, err := fe.DeployedOutputs(context.Background(), s); !errors.Is(err, ErrNotDeployed) {
			t.Errorf("%s: %v, want ErrNotDeployed", s, err)
		}
	}
	if len(fe.cli.calledVerbs()) != 0 {
		t.Errorf("a file backend's outputs ran pulumi: %v", fe.cli.calledVerbs())
	}

	remote := newFakeEngine(t, func(o *Options) { o.Backend = "gs://cells-state" })
	dir := remote.cli.root("gs://cells-state")
	writeCheckpoint(t, dir, "cells", "cell-b", deploymentWith("cell-b", map[string]any{"albDnsName": "b.elb", "key": secretOutput("k")}))
	outs, err = remote.DeployedOutputs(context.Background(), "cell-b")
	if err != nil || outs["albDnsName"] != "b.elb" || outs["key"] != "[secret]" {
		t.Fatalf("remote outputs = %v, %v", outs, err)
	}
	if _, err := remote.DeployedOutputs(context.Background(), "cell-a"); !errors.Is(err, ErrNotDeployed) {
		t.Errorf("remote cell-a: %v, want ErrNotDeployed", err)
	}
}

// A backend only the CLI reads (a diy backend on Google Cloud Storage; a
// file or S3 backend is read directly) is read through pulumi: status and
// the pending operations come from an export.
func TestStatusOnARemoteBackend(t *testing.T) {
	fe := newFakeEngine(t, func(o *Options) { o.Backend = "gs://cells-state" })
	dir := fe.cli.root("gs://cells-state")
	writeCheckpoint(t, dir, "cells", "cell-b", deploymentWith("cell-b", map[string]any{"albDnsName": "b.elb"}, vpc("cell-b")))
	st, err := fe.Status(context.Background(), []string{"cell-b", "cell-a"})
	if err != nil {
		t.Fatal(err)
	}
	if !st[0].Deployed || st[0].Resources != 1 || st[0].Outputs["albDnsName"] != "b.elb" {
		t.Errorf("cell-b = %+v", st[0])
	}
	if st[1].Deployed || st[1].Error != "" {
		t.Errorf("cell-a was never deployed: %+v", st[1])
	}
	if len(fe.cli.callsOf("stack export")) == 0 {
		t.Error("the remote state was not exported")
	}
}

// Unlock removes a stale lock (its holder is gone from this host), and
// refuses — leaving the lock, exit 4 — while the holder may still run on
// another host, unless forced. A holder running on this host is a live
// pulumi's lock: refused even when forced (it used to be removed). A
// backend whose locks cannot be inspected needs --force.
func TestUnlock(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct {
		name      string
		backend   string
		host      string
		pid       int
		force     bool
		want      string // error fragment; "": unlocked
		unlocked  bool
		noHolders bool
	}{
		{name: "no lock", noHolders: true},
		{name: "a stale lock", host: host, pid: 999999999, unlocked: true},
		{name: "a live holder", host: host, pid: os.Getpid(), want: "which is still running: the lock is that process's own, so it is not removed, --force or not"},
		{name: "a live holder, forced", host: host, pid: os.Getpid(), force: true, want: "which is still running: the lock is that process's own, so it is not removed, --force or not"},
		{name: "a stale lock, forced", host: host, pid: 999999999, force: true, unlocked: true},
		{name: "a holder on another host", host: "ci-7", pid: 12, want: "locked by pid 12 on ci-7 (ops), which may still be running: cellctl cannot check a process on another host; wait for it, or use --force"},
		{name: "a holder on another host, forced", host: "ci-7", pid: 12, force: true, unlocked: true},
		{name: "a backend without inspectable locks", backend: "s3://cells-state", want: "cellctl cannot inspect locks on s3://cells-state"},
		{name: "a backend without inspectable locks, forced", backend: "s3://cells-state", force: true, noHolders: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := newFakeEngine(t, func(o *Options) {
				if tc.backend != "" {
					o.Backend = tc.backend
				}
			})
			root := fe.root
			if tc.backend != "" {
				root = fe.cli.root(tc.backend)
			}
			writeCheckpoint(t, root, "cells", "cell-b", deploymentWith("cell-b", nil))
			if tc.host != "" {
				lockStack(t, root, "cells", "cell-b", tc.host, tc.pid)
			}
			holders, err := fe.Unlock(context.Background(), "cell-b", tc.force)
			locks, _ := os.ReadDir(filepath.Join(root, ".pulumi", "locks", "organization", "cells", "cell-b"))
			if tc.want != "" {
				var locked *outcome.LockedError
				if !errors.As(err, &locked) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want a LockedError with %q", err, tc.want)
				}
				if tc.host != "" && len(locks) == 0 {
					t.Error("a refused unlock removed the lock")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(locks) != 0 {
				t.Errorf("the lock is still there")
			}
			if tc.noHolders != (len(holders) == 0) {
				t.Errorf("holders = %+v", holders)
			}
			if tc.unlocked && (len(holders) != 1 || holders[0].PID != tc.pid || holders[0].Stale != (tc.host == host) || holders[0].Running) {
				t.Errorf("holders = %+v", holders)
			}
			if tc.unlocked != (len(fe.cli.callsOf("cancel")) == 1) && tc.backend == "" {
				t.Errorf("cancel calls = %d", len(fe.cli.callsOf("cancel")))
			}
		})
	}
}

// On a file backend status reads the checkpoint and the history directory
// itself; what it reads must be what the pulumi CLI answers for the same
// stacks (deployed, failed, pending, never deployed, corrupt).
func TestFileBackendStatusIsWhatTheCLIReads(t *testing.T) {
	defer func() { readFileBackend = true }()
	fe := newFakeEngine(t, func(o *Options) { o.Parallel = 2 })
	ok := func(*fakeCall) fakeResult {
		d := deploymentWith("cell-a", map[string]any{"albDnsName": "a.elb", "token": secretOutput("t0ken"),
			"nested": map[string]any{"list": []any{"x", secretOutput("deep")}}}, vpc("cell-a"), providerRes("cell-a"))
		d["pending_operations"] = []any{map[string]any{"resource": map[string]any{"urn": urn("cell-a", "aws:sqs/queue:Queue", "q"), "type": "aws:sqs/queue:Queue"}, "type": "creating"}}
		return fakeResult{Deployment: d}
	}
	fe.cli.op = ok
	for range 2 {
		if res := fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp}); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	fe.cli.op = func(*fakeCall) fakeResult { return fakeResult{Stderr: "error: boom\n", Code: 255} }
	writeCheckpoint(t, fe.root, "cells", "cell-b", deploymentWith("cell-b", nil, vpc("cell-b")))
	_ = fe.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp})
	writeCheckpoint(t, fe.root, "cells", "cell-d", "{not json")
	names := []string{"cell-a", "cell-b", "cell-c", "cell-d"}

	readFileBackend = false
	viaCLI, err := fe.Status(context.Background(), names)
	if err != nil {
		t.Fatal(err)
	}
	readFileBackend = true
	direct, err := fe.Status(context.Background(), names)
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		c, d := *viaCLI[i], *direct[i]
		// The CLI shows a secret nested in an output in plaintext (only a
		// whole secret output is masked); the file reader masks it too.
		if n, ok := c.Outputs["nested"].(map[string]any); ok {
			if l, ok := n["list"].([]any); ok && len(l) == 2 {
				l[1] = "[secret]"
			}
		}
		if !reflect.DeepEqual(c, d) {
			t.Errorf("%s:\n via the CLI %+v\n from files  %+v", names[i], c, d)
		}
	}
	if a := direct[0]; a.UpdateCount != 2 || a.LastResult != "succeeded" || a.PendingOps != 1 || a.Resources != 1 || a.Outputs["token"] != "[secret]" {
		t.Errorf("cell-a = %+v", a)
	}
	if b := direct[1]; b.LastResult != "failed" || !b.Deployed {
		t.Errorf("cell-b = %+v", b)
	}
}

// A history the CLI compressed is read (gzip) or left to the CLI (zstd).
func TestFileBackendHistoryFormats(t *testing.T) {
	dir := t.TempDir()
	ctx, bl := context.Background(), dirBlobs{root: dir}
	if h, n, err := lastHistory(ctx, bl, "none"); h != nil || n != 0 || err != nil {
		t.Fatalf("no history = %v, %d, %v", h, n, err)
	}
	write := func(name, body string, gz bool) {
		t.Helper()
		data := []byte(body)
		if gz {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write(data)
			zw.Close()
			data = b.Bytes()
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cell-a-1000.history.json", `{"kind":"update","result":"succeeded","startTime":10,"endTime":20}`, false)
	write("cell-a-1000.checkpoint.json", `{}`, false)
	write("cell-a-2000.history.json.gz", `{"kind":"refresh","result":"failed","startTime":30,"endTime":0}`, true)
	h, n, err := lastHistory(ctx, bl, ".")
	if err != nil || n != 2 || h.Kind != "refresh" || h.Result != "failed" || h.StartTime != 30 {
		t.Fatalf("newest = %+v, %d, %v", h, n, err)
	}
	write("cell-a-3000.history.json.zst", "(zstd)", false)
	if _, _, err := lastHistory(ctx, bl, "."); !errors.Is(err, errHistoryFormat) {
		t.Fatalf("zstd: %v, want errHistoryFormat", err)
	}
	write("cell-a-3000.history.json.zst", "", false)
	os.Remove(filepath.Join(dir, "cell-a-3000.history.json.zst"))
	write("cell-a-4000.history.json", `{not json`, false)
	if _, _, err := lastHistory(ctx, bl, "."); err == nil || !strings.Contains(err.Error(), "cell-a-4000.history.json") {
		t.Fatalf("a broken entry must be named: %v", err)
	}
}
