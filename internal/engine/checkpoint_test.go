package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
)

const goodCheckpoint = `{"version":3,"checkpoint":{"stack":"cell-b","latest":{"manifest":{},"resources":[]}}}`

func checkpointEngine(t *testing.T) (*Engine, string) {
	t.Helper()
	root := t.TempDir()
	e := &Engine{backend: "file://" + filepath.ToSlash(root), opts: Options{Fleet: &fleet.Fleet{Project: "cells"}}}
	if err := os.MkdirAll(filepath.Join(root, ".pulumi", "stacks", "cells"), 0o755); err != nil {
		t.Fatal(err)
	}
	return e, root
}

func TestCheckpointTruncatedIsNamedWithItsBackups(t *testing.T) {
	e, root := checkpointEngine(t)
	file := filepath.Join(root, ".pulumi", "stacks", "cells", "cell-b.json")
	if err := os.WriteFile(file, []byte(goodCheckpoint[:40]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file+".bak", []byte(goodCheckpoint), 0o644); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(root, ".pulumi", "history", "cells", "cell-b")
	os.MkdirAll(hist, 0o755)
	for _, n := range []string{"cell-b-1764500000000000000.checkpoint.json", "cell-b-1764600000000000000.checkpoint.json"} {
		if err := os.WriteFile(filepath.Join(hist, n), []byte(goodCheckpoint), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A broken history entry is never offered.
	os.WriteFile(filepath.Join(hist, "cell-b-1764700000000000000.checkpoint.json"), []byte("{"), 0o644)

	err := e.checkCheckpoint("cell-b")
	var ce *CorruptStateError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a CorruptStateError", err)
	}
	msg := err.Error()
	for _, want := range []string{file + ": unexpected end of JSON input", "truncated", "nothing was run",
		"cp " + file + ".bak " + file,
		"cp " + filepath.Join(hist, "cell-b-1764600000000000000.checkpoint.json") + " " + file,
		"pulumi stack import --stack cell-b", "cellctl up cell-b --refresh"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "1764700000000000000") {
		t.Errorf("a broken history checkpoint is offered:\n%s", msg)
	}
}

func TestCheckpointGarbageWithoutBackups(t *testing.T) {
	e, root := checkpointEngine(t)
	file := filepath.Join(root, ".pulumi", "stacks", "cells", "cell-b.json")
	for _, bad := range []string{"", "[]", `{"version":3}`, "\x00\x00\x00", `{"version":3,"checkpoint":{"latest":"x"}}`} {
		if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		err := e.checkCheckpoint("cell-b")
		if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "no backup") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}

func TestCheckpointGoodOrAbsentPasses(t *testing.T) {
	e, root := checkpointEngine(t)
	if err := e.checkCheckpoint("cell-b"); err != nil {
		t.Fatalf("no checkpoint yet: %v", err)
	}
	file := filepath.Join(root, ".pulumi", "stacks", "cells", "cell-b.json")
	for _, good := range []string{goodCheckpoint, `{"version":3,"checkpoint":{"stack":"cell-b"}}`} {
		os.WriteFile(file, []byte(good), 0o644)
		if err := e.checkCheckpoint("cell-b"); err != nil {
			t.Fatalf("%s: %v", good, err)
		}
	}
	other := &Engine{backend: "s3://bucket", opts: e.opts}
	if err := other.checkCheckpoint("cell-b"); err != nil {
		t.Fatalf("a non-file backend is read by pulumi itself: %v", err)
	}
}

// A SIGKILL between fileblob's create of <file>.attrs and its write leaves
// it empty beside an intact checkpoint: removed, and said so.
func TestCheckpointEmptyAttrsRepaired(t *testing.T) {
	e, root := checkpointEngine(t)
	var log strings.Builder
	e.opts.Log = &log
	file := filepath.Join(root, ".pulumi", "stacks", "cells", "cell-b.json")
	os.WriteFile(file, []byte(goodCheckpoint), 0o644)
	for _, broken := range []string{"", `{"user.content_type":"text/pl`} {
		os.WriteFile(file+".attrs", []byte(broken), 0o644)
		if err := e.checkCheckpoint("cell-b"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(file + ".attrs"); !os.IsNotExist(err) {
			t.Fatalf("%q: the broken .attrs is still there (%v)", broken, err)
		}
	}
	if !strings.Contains(log.String(), "removed "+file+".attrs") || !strings.Contains(log.String(), "empty") {
		t.Fatalf("log: %q", log.String())
	}
	// A good sidecar stays.
	good := `{"user.content_type":"text/plain; charset=utf-8","md5":"x"}`
	os.WriteFile(file+".attrs", []byte(good), 0o644)
	if err := e.checkCheckpoint("cell-b"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file + ".attrs"); string(got) != good {
		t.Fatalf("a good .attrs was changed: %q", got)
	}
	// Beside a corrupt checkpoint nothing is repaired: the error says it all.
	os.WriteFile(file, []byte("{"), 0o644)
	os.WriteFile(file+".attrs", nil, 0o644)
	if err := e.checkCheckpoint("cell-b"); err == nil {
		t.Fatal("corrupt checkpoint passed")
	}
	if _, err := os.Stat(file + ".attrs"); err != nil {
		t.Fatal("the sidecar of a corrupt checkpoint was removed")
	}
}

// On an S3 backend a broken checkpoint is named as on a file backend, by
// its s3:// URL, with the backup and history objects to restore from and
// the AWS CLI's copy command pointed at the backend's own endpoint. Before,
// the check ran on file backends only, and an S3 stack's broken checkpoint
// surfaced as the CLI's bare JSON error.
func TestCheckpointOnS3IsNamedWithItsBackups(t *testing.T) {
	url, mem, bucket := fakeS3Bucket(t)
	put := func(key, data string) {
		t.Helper()
		if _, err := mem.PutObject(bucket, key, map[string]string{}, strings.NewReader(data), int64(len(data)), nil); err != nil {
			t.Fatal(err)
		}
	}
	put(".pulumi/meta.yaml", "version: 1\n")
	stack := ".pulumi/stacks/cells/cell-b.json"
	put(stack, goodCheckpoint[:40])
	put(stack+".bak", goodCheckpoint)
	hist := ".pulumi/history/cells/cell-b/"
	put(hist+"cell-b-1764500000000000000.checkpoint.json", goodCheckpoint)
	put(hist+"cell-b-1764600000000000000.checkpoint.json", goodCheckpoint)
	put(hist+"cell-b-1764700000000000000.checkpoint.json", "{")
	e := &Engine{backend: url, opts: Options{Fleet: &fleet.Fleet{Project: "cells"}}}

	err := e.checkCheckpoint("cell-b")
	var ce *CorruptStateError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a CorruptStateError", err)
	}
	endpoint := url[strings.Index(url, "endpoint=")+len("endpoint=") : strings.Index(url, "&")]
	obj := "s3://" + bucket + "/" + stack
	msg := err.Error()
	for _, want := range []string{obj + ": unexpected end of JSON input", "truncated", "nothing was run",
		"aws s3 cp --endpoint-url " + endpoint + " " + obj + ".bak " + obj,
		"s3://" + bucket + "/" + hist + "cell-b-1764600000000000000.checkpoint.json " + obj,
		"cellctl up cell-b --refresh"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "1764700000000000000") || strings.Contains(msg, "?endpoint") {
		t.Errorf("a broken history checkpoint, or the URL's query, is in the message:\n%s", msg)
	}

	// A good checkpoint passes.
	put(stack, goodCheckpoint)
	if err := e.checkCheckpoint("cell-b"); err != nil {
		t.Errorf("a good checkpoint: %v", err)
	}
}
