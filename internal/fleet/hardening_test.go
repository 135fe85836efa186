package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/edge"
)

// writeFleet lays base.txtar out in a real directory (the loader's
// os-backed path: regular-file checks, O_NONBLOCK opens).
func writeFleet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, f := range caseFS(t, nil) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func replaceWith(t *testing.T, dir, name string, make func(path string) error) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := make(p); err != nil {
		t.Fatal(err)
	}
}

func loadErr(t *testing.T, dir string) string {
	t.Helper()
	f, err := Load(dir)
	if err == nil {
		t.Fatalf("loaded: %+v", f)
	}
	return err.Error()
}

// /dev/zero used to exhaust memory (Go "fatal error: out of memory").
func TestDevZeroRefused(t *testing.T) {
	dir := writeFleet(t)
	replaceWith(t, dir, "stacks/routing.json", func(p string) error { return os.Symlink("/dev/zero", p) })
	want := "stacks/routing.json: cannot read: a character device, not a regular file: cellctl reads only regular files"
	if got := loadErr(t, dir); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// A FIFO used to hang plan forever (and ignore SIGTERM); it is refused
// without being opened for a blocking read.
func TestFIFORefused(t *testing.T) {
	for _, name := range []string{"stacks/routing.json", "stacks/Pulumi.cell-b.yaml", "Pulumi.yaml"} {
		t.Run(name, func(t *testing.T) {
			dir := writeFleet(t)
			replaceWith(t, dir, name, func(p string) error { return syscall.Mkfifo(p, 0o644) })
			got := loadErr(t, dir)
			want := name + ": cannot read: a named pipe (FIFO), not a regular file: cellctl reads only regular files"
			if got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestOversizeFilesRefused(t *testing.T) {
	dir := writeFleet(t)
	big := "config:\n  cells:index: 2\n" + strings.Repeat("# padding\n", MaxConfigFileBytes/10+1)
	if err := os.WriteFile(filepath.Join(dir, "stacks/Pulumi.cell-b.yaml"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	got := loadErr(t, dir)
	want := fmt.Sprintf("stacks/Pulumi.cell-b.yaml: the file is 1.0 MiB (%d bytes); at most 1.0 MiB (1048576 bytes) is allowed for a fleet configuration file", len(big))
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// A 50 MB cells:image was accepted; a value past MaxValueBytes is refused
// before any pattern runs, and never echoed.
func TestHugeValueRefused(t *testing.T) {
	dir := writeFleet(t)
	img := "registry.example.com/" + strings.Repeat("a", 600<<10) + ":1"
	if err := os.WriteFile(filepath.Join(dir, "stacks/Pulumi.cell-b.yaml"), []byte("config:\n  cells:index: 2\n  cells:image: "+img+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := loadErr(t, dir)
	want := "stacks/Pulumi.cell-b.yaml:3: cells:image: is 614423 bytes long; at most 4096 bytes are allowed for any value"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// An unreadable stack file is one problem: its cell still counts as
// declared, so waves.yaml and routing.json do not add "unknown cell".
func TestUnreadableStackFileIsOneProblem(t *testing.T) {
	dir := writeFleet(t)
	replaceWith(t, dir, "stacks/Pulumi.cell-b.yaml", func(p string) error { return os.Symlink(filepath.Join(dir, "gone.yaml"), p) })
	_, err := Load(dir)
	errs := diag.Errors(err)
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "stacks/Pulumi.cell-b.yaml: file not found") {
		t.Fatalf("want exactly the unreadable file, got %d: %v", len(errs), err)
	}
}

// 50 MB of unknown keys produced 4.4 M errors; the cap keeps 50 per file
// and counts the rest.
func TestErrorsCappedPerFile(t *testing.T) {
	dir := writeFleet(t)
	var b strings.Builder
	b.WriteString("config:\n  cells:index: 2\n")
	for i := 0; i < 20000; i++ {
		b.WriteString("  cells:k")
		b.WriteString(strings.Repeat("x", 1+i%7))
		b.WriteString(string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26)))
		b.WriteString(": 1\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "stacks/Pulumi.cell-b.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	errs := diag.Errors(err)
	if len(errs) != diag.MaxPerFile+1 {
		t.Fatalf("%d errors listed, want %d + the summary", len(errs), diag.MaxPerFile)
	}
	last := errs[len(errs)-1].Error()
	if !strings.Contains(last, "more problems in this file (only the first 50 are shown)") || diag.Omitted(err) == 0 {
		t.Fatalf("summary = %q", last)
	}
	if first := strings.SplitN(err.Error(), "\n", 2)[0]; !strings.HasSuffix(first, "problems (50 shown):") {
		t.Fatalf("header = %q", first)
	}
}

func routingWithOverrides(n int) string {
	var b strings.Builder
	b.WriteString(`{"version": 1, "buckets": 16, "cells": {"cell-a": {"state": "active", "weight": 1, "buckets": ["0-7"]}, "cell-b": {"state": "active", "weight": 1, "buckets": ["8-15"]}}, "overrides": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"tenant": "0c9f0000-7d1e-4b2a-9f3c-%012x", "cell": "cell-b", "state": "active"}`, i)
	}
	b.WriteString("]}\n")
	return b.String()
}

// The edge's memory check runs at load: with the routing image, the cap
// of a million overrides fits the default 128 MB function (it once fit
// 82,972), and the loader says nothing of memory.
func TestMillionOverridesFitTheDefaultEdgeMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a table of a million overrides")
	}
	dir := writeFleet(t)
	n := router.MaxOverrides
	if edge.MaxOverridesFor(edge.DefaultMemoryMB) != n {
		t.Fatalf("128 MB fits %d overrides, want the cap %d", edge.MaxOverridesFor(edge.DefaultMemoryMB), n)
	}
	if err := os.WriteFile(filepath.Join(dir, "stacks/routing.json"), []byte(routingWithOverrides(n)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(dir)
	if err != nil || f.Router.EdgeMemoryMB != edge.DefaultMemoryMB || len(f.Routing.Overrides()) != n {
		t.Fatalf("a million overrides at 128 MB: %v", err)
	}
}

// cells:tenantFrom says where the edge reads the tenant id; a value it
// cannot read is refused at its line.
func TestTenantFromIsCheckedAtItsLine(t *testing.T) {
	dir := writeFleet(t)
	router := "config:\n  aws:region: us-east-1\n  cells:tenantFrom: jwt:tid\n"
	if err := os.WriteFile(filepath.Join(dir, "stacks/Pulumi.router.yaml"), []byte(router), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(dir)
	if err != nil || f.Router.TenantFrom != "jwt:tid" {
		t.Fatalf("jwt:tid: %v %+v", err, f.Router)
	}
	for value, want := range map[string]string{
		"cookie:tid": `stacks/Pulumi.router.yaml:3: cells:tenantFrom: must be "header" (the tenant header) or "jwt:<claim>"`,
		`"jwt:"`:     `stacks/Pulumi.router.yaml:3: cells:tenantFrom: jwt:: the claim must be 1-128 printable ASCII characters`,
	} {
		router := "config:\n  aws:region: us-east-1\n  cells:tenantFrom: " + value + "\n"
		if err := os.WriteFile(filepath.Join(dir, "stacks/Pulumi.router.yaml"), []byte(router), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := loadErr(t, dir); !strings.HasPrefix(got, want) {
			t.Errorf("%s:\n got %s\nwant %s…", value, got, want)
		}
	}
}

// cells:edgeVersionsKept is how many newest edge function versions the
// router keeps; out of range is refused at its line.
func TestEdgeVersionsKeptIsReadAndCheckedAtItsLine(t *testing.T) {
	dir := writeFleet(t)
	f, err := Load(dir)
	if err != nil || f.Router.EdgeVersionsKept != DefaultEdgeVersionsKept {
		t.Fatalf("default: %v %+v", err, f.Router)
	}
	router := "config:\n  aws:region: us-east-1\n  cells:edgeVersionsKept: 3\n"
	if err := os.WriteFile(filepath.Join(dir, "stacks/Pulumi.router.yaml"), []byte(router), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err = Load(dir); err != nil || f.Router.EdgeVersionsKept != 3 {
		t.Fatalf("3: %v %+v", err, f.Router)
	}
	for _, value := range []string{"0", "1001", "ten"} {
		router := "config:\n  aws:region: us-east-1\n  cells:edgeVersionsKept: " + value + "\n"
		if err := os.WriteFile(filepath.Join(dir, "stacks/Pulumi.router.yaml"), []byte(router), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := loadErr(t, dir); !strings.HasPrefix(got, "stacks/Pulumi.router.yaml:3: cells:edgeVersionsKept:") {
			t.Errorf("%s: %s", value, got)
		}
	}
}
