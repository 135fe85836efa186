package provider_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// One stack's truncated resource file fails only that stack's calls, as
// AWS would: the other cells deploy, and the corrupt file is never
// overwritten (which would lose every resource it held).
func TestCorruptShardIsConfinedToItsStack(t *testing.T) {
	a := simtest.New(t, "cell-a", "us-east-1")
	b := simtest.On(t, provider.Options{Dir: a.Cloud.Dir(), Stack: "cell-b"}, "us-east-1")
	qa := a.Create(simtest.TQueue, "cell-a-jobs", simtest.PM())
	qb := b.Create(simtest.TQueue, "cell-b-jobs", simtest.PM())

	path := filepath.Join(a.Cloud.Dir(), store.ResourcesDir, "cells", "cell-b.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	truncated := data[:len(data)/2]
	if err := os.WriteFile(path, truncated, 0o644); err != nil {
		t.Fatal(err)
	}

	// cell-a: create, update, read, delete all work.
	qa2 := a.Create(simtest.TQueue, "cell-a-dlq", simtest.PM())
	if _, err := a.TryUpdate(qa, simtest.PM("delaySeconds", 5)); err != nil {
		t.Fatalf("cell-a update: %v", err)
	}
	if r := a.Read(qa); r.ID == "" {
		t.Fatalf("cell-a read lost its queue: %+v", r)
	}
	if err := a.Delete(qa2); err != nil {
		t.Fatalf("cell-a delete: %v", err)
	}
	if rs, err := a.Cloud.Resources(store.Filter{Stack: "cell-a"}); err != nil || len(rs) != 1 {
		t.Fatalf("cell-a resources = %d, %v", len(rs), err)
	}

	// cell-b: every call fails, naming the file; none answers "not found".
	var ce *store.CorruptError
	_, err = b.TryCreate(simtest.TQueue, "cell-b-dlq", simtest.PM())
	if !errors.As(err, &ce) || ce.Path != path || ce.Stack != "cell-b" {
		t.Fatalf("cell-b create: %v", err)
	}
	simtest.WantErr(t, err, "cell-b.json is corrupt", "other stacks are unaffected", "cellctl sim reset")
	if _, err := b.TryUpdate(qb, simtest.PM("delaySeconds", 5)); !errors.As(err, &ce) {
		t.Fatalf("cell-b update: %v", err)
	}
	if err := b.Delete(qb); !errors.As(err, &ce) {
		t.Fatalf("cell-b delete must fail, not report the queue gone: %v", err)
	}
	if _, _, _, err := provider.ReadLive(b.Cloud, "cell-b", simtest.TQueue, qb.ID); !errors.As(err, &ce) {
		t.Fatalf("cell-b read must fail, not report the queue gone: %v", err)
	}
	if _, err := a.Cloud.Resources(store.Filter{}); !errors.As(err, &ce) {
		t.Fatalf("listing every stack must say one is unreadable: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, truncated) {
		t.Fatalf("the corrupt file was rewritten")
	}

	// Restored, cell-b works again.
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryUpdate(qb, simtest.PM("delaySeconds", 5)); err != nil {
		t.Fatalf("restored cell-b update: %v", err)
	}
}
