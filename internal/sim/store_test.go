package sim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// One stack's truncated resource file fails only that stack's calls, as
// AWS would: the other cells deploy, and the corrupt file is never
// overwritten (which would lose every resource it held).
func TestCorruptShardIsConfinedToItsStack(t *testing.T) {
	a := newHarness(t, "cell-a", "us-east-1")
	b := harnessOn(t, Options{Dir: a.cloud.Dir(), Stack: "cell-b"}, "us-east-1")
	qa := a.create(tQueue, "cell-a-jobs", pm())
	qb := b.create(tQueue, "cell-b-jobs", pm())

	path := filepath.Join(a.cloud.Dir(), resourcesDir, "cells", "cell-b.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	truncated := data[:len(data)/2]
	if err := os.WriteFile(path, truncated, 0o644); err != nil {
		t.Fatal(err)
	}

	// cell-a: create, update, read, delete all work.
	qa2 := a.create(tQueue, "cell-a-dlq", pm())
	if _, err := a.tryUpdate(qa, pm("delaySeconds", 5)); err != nil {
		t.Fatalf("cell-a update: %v", err)
	}
	if r := a.read(qa); r.ID == "" {
		t.Fatalf("cell-a read lost its queue: %+v", r)
	}
	if err := a.delete(qa2); err != nil {
		t.Fatalf("cell-a delete: %v", err)
	}
	if rs, err := a.cloud.Resources(Filter{Stack: "cell-a"}); err != nil || len(rs) != 1 {
		t.Fatalf("cell-a resources = %d, %v", len(rs), err)
	}

	// cell-b: every call fails, naming the file; none answers "not found".
	var ce *CorruptError
	_, err = b.tryCreate(tQueue, "cell-b-dlq", pm())
	if !errors.As(err, &ce) || ce.Path != path || ce.Stack != "cell-b" {
		t.Fatalf("cell-b create: %v", err)
	}
	wantErr(t, err, "cell-b.json is corrupt", "other stacks are unaffected", "cellctl sim reset")
	if _, err := b.tryUpdate(qb, pm("delaySeconds", 5)); !errors.As(err, &ce) {
		t.Fatalf("cell-b update: %v", err)
	}
	if err := b.delete(qb); !errors.As(err, &ce) {
		t.Fatalf("cell-b delete must fail, not report the queue gone: %v", err)
	}
	if _, _, _, err := b.cloud.read("cell-b", tQueue, qb.id); !errors.As(err, &ce) {
		t.Fatalf("cell-b read must fail, not report the queue gone: %v", err)
	}
	if _, err := a.cloud.Resources(Filter{}); !errors.As(err, &ce) {
		t.Fatalf("listing every stack must say one is unreadable: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, truncated) {
		t.Fatalf("the corrupt file was rewritten")
	}

	// Restored, cell-b works again.
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := b.tryUpdate(qb, pm("delaySeconds", 5)); err != nil {
		t.Fatalf("restored cell-b update: %v", err)
	}
}
