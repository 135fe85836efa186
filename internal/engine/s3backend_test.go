package engine

import (
	"bytes"
	"context"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/cellctl/cellctl/internal/stackrun"
)

// fakeS3Bucket serves an empty bucket from gofakes3 (in memory, on
// loopback) and returns its backend URL, named the way `pulumi login`
// takes a custom endpoint, with the AWS SDK's environment pointed at it.
func fakeS3Bucket(t *testing.T) (url string, mem *s3mem.Backend, bucket string) {
	t.Helper()
	bucket = "cells-state"
	mem = s3mem.New()
	if err := mem.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(srv.Close)
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIAGOFAKES3", "AWS_SECRET_ACCESS_KEY": "gofakes3-not-a-secret", "AWS_SESSION_TOKEN": "",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_PROFILE": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
	} {
		t.Setenv(k, v)
	}
	return "s3://" + bucket + "?endpoint=" + srv.URL + "&s3ForcePathStyle=true&region=us-east-1", mem, bucket
}

// newS3FakeEngine is a fake engine whose backend is an S3 bucket
// (fakeS3Bucket). The fake CLI keeps the stacks in a directory of its own
// and mirrors it into the bucket after every command, so the engine's own
// reads go through the S3 client as they would against a real bucket.
func newS3FakeEngine(t *testing.T) *fakeEngine {
	t.Helper()
	url, mem, bucket := fakeS3Bucket(t)
	fe := newFakeEngine(t, func(o *Options) { o.Backend = url })
	fe.cli.mirror = func(_, root string) {
		want := map[string]bool{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			key := filepath.ToSlash(rel)
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			want[key] = true
			_, err = mem.PutObject(bucket, key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil)
			return err
		})
		if err != nil {
			t.Errorf("mirroring the fake's backend into the bucket: %v", err)
		}
		list, err := mem.ListBucket(bucket, nil, gofakes3.ListBucketPage{})
		if err != nil {
			t.Errorf("listing the bucket: %v", err)
			return
		}
		for _, c := range list.Contents {
			if !want[c.Key] {
				_, _ = mem.DeleteObject(bucket, c.Key)
			}
		}
	}
	return fe
}

// On an S3 backend as on a file backend, what only reads a stack's state
// — status, the deployed outputs, the state an up checks for pending
// operations, the select before an operation, the stack list and copies a
// preview of a new stack needs — reads the bucket, not the CLI: before,
// `status` of a deployed and a new stack ran the CLI five times (stack
// select, history, export and output; a select of the new one), the
// deployed outputs twice, and each operation a select first.
func TestHeldStackOnS3IsReadWithoutTheCLI(t *testing.T) {
	fe := newS3FakeEngine(t)
	ctx := context.Background()
	fe.cli.op = func(c *fakeCall) fakeResult {
		if c.Verb != "up" {
			return fakeResult{}
		}
		return fakeResult{Deployment: map[string]any{"resources": []any{
			map[string]any{"urn": urn("cell-a", "pulumi:pulumi:Stack", "cells-cell-a"), "type": "pulumi:pulumi:Stack", "custom": false,
				"outputs": map[string]any{"region": "us-east-1"}},
			map[string]any{"urn": urn("cell-a", "aws:ec2/vpc:Vpc", "vpc"), "type": "aws:ec2/vpc:Vpc", "custom": true, "id": "vpc-1"},
		}}}
	}
	if res := fe.RunStack(ctx, stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp}); res.Result != stackrun.Succeeded {
		t.Fatalf("first up of cell-a: %s %v", res.Result, res.Err)
	}
	if fe.Backend() != fe.opts.Backend || !strings.HasPrefix(fe.Backend(), "s3://") {
		t.Fatalf("backend %s, want the bucket", fe.Backend())
	}
	if _, err := os.Stat(filepath.Join(fe.root, ".pulumi")); err == nil {
		t.Fatal("the state went to the fleet's file backend, not the bucket")
	}
	first := strings.Join(fe.cli.calledVerbs(), ",")
	if !strings.HasPrefix(first, "stack select,stack init,") {
		t.Fatalf("a stack the bucket lacks must be selected and created by the CLI; ran %s", first)
	}

	ran := func(what string, f func()) []string {
		t.Helper()
		before := len(fe.cli.calledVerbs())
		f()
		got := fe.cli.calledVerbs()[before:]
		t.Logf("%s: %d CLI start(s) %v", what, len(got), got)
		return got
	}
	var st []*StackStatus
	if got := ran("status of cell-a and cell-b", func() {
		var err error
		if st, err = fe.Status(ctx, []string{"cell-a", "cell-b"}); err != nil {
			t.Fatal(err)
		}
	}); len(got) != 0 {
		t.Errorf("status on an S3 backend ran the CLI: %v", got)
	}
	if a := st[0]; !a.Deployed || a.Resources != 1 || a.UpdateCount != 1 || a.LastResult != "succeeded" || a.Outputs["region"] != "us-east-1" || a.Error != "" {
		t.Errorf("cell-a's status from the bucket = %+v", a)
	}
	if b := st[1]; b.Deployed || b.Error != "" {
		t.Errorf("cell-b (never deployed) = %+v", b)
	}
	if got := ran("deployed outputs of cell-a", func() {
		out, err := fe.DeployedOutputs(ctx, "cell-a")
		if err != nil || out["region"] != "us-east-1" {
			t.Errorf("deployed outputs = %v, %v", out, err)
		}
		if _, err := fe.DeployedOutputs(ctx, "cell-b"); err != ErrNotDeployed {
			t.Errorf("deployed outputs of a new stack: %v, want ErrNotDeployed", err)
		}
	}); len(got) != 0 {
		t.Errorf("the deployed outputs on an S3 backend ran the CLI: %v", got)
	}
	for _, op := range []stackrun.Operation{stackrun.OpUp, stackrun.OpPreview, stackrun.OpRefresh} {
		got := ran(string(op)+" of cell-a", func() {
			if res := fe.RunStack(ctx, stackrun.Request{Stack: "cell-a", Op: op}); res.Result != stackrun.Succeeded {
				t.Fatalf("%s of cell-a: %s %v", op, res.Result, res.Err)
			}
		})
		if len(got) == 0 || got[0] != string(op) || slices.ContainsFunc(got, func(v string) bool { return v == "stack select" || v == "stack export" || v == "stack ls" }) {
			t.Errorf("%s of a stack the bucket holds ran %v, want the operation first and no select, export or list", op, got)
		}
	}
	// A preview of a stack the bucket lacks runs against a scratch file
	// backend holding a copy of the others: the copies and the list come
	// from the bucket; only the scratch backend's own stack is the CLI's.
	if got := ran("preview of cell-b", func() {
		if res := fe.RunStack(ctx, stackrun.Request{Stack: "cell-b", Op: stackrun.OpPreview}); res.Result != stackrun.Succeeded {
			t.Fatalf("preview of cell-b: %s %v", res.Result, res.Err)
		}
	}); slices.Contains(got, "stack export") || slices.Contains(got, "stack ls") {
		t.Errorf("the preview of a new stack read the bucket through the CLI: %v", got)
	}
}

// A backend in pulumi's legacy layout (no meta.yaml, stacks directly under
// .pulumi/stacks/) or another meta.yaml version is left to the CLI; an
// empty one, or one at version 1, is read directly.
func TestOnlyTheProjectLayoutIsReadDirectly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		held  bool
	}{
		{"empty", nil, true},
		{"version 1", map[string]string{".pulumi/meta.yaml": "version: 1\n"}, true},
		{"legacy layout", map[string]string{".pulumi/stacks/cell-a.json": "{}"}, false},
		{"another version", map[string]string{".pulumi/meta.yaml": "version: 2\n"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := newFakeEngine(t)
			for name, body := range tc.files {
				p := filepath.Join(fe.root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, held, err := fe.readCheckpoint(context.Background(), "cell-a"); held != tc.held || err != nil {
				t.Errorf("read directly = %v, %v; want %v", held, err, tc.held)
			}
		})
	}
}
