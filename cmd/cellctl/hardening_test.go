package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/router"
)

// unlock must refuse a path before it reaches the backend (it used to say
// "../../../etc/passwd is not locked").
func TestUnlockRefusesInvalidStackName(t *testing.T) {
	stdout, stderr, code := cellctl(t, "unlock", "../../../etc/passwd", "--dir", "../..")
	want := `error: "../../../etc/passwd" is not a valid stack name: stacks are "router" and cell ids`
	if code != exitcode.Error || !strings.Contains(stderr, want) || stdout != "" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
}

// A fault that could never fire is refused before the simulated cloud is
// touched (it used to be stored silently).
func TestSimFaultAddRefusesWhatNeverFires(t *testing.T) {
	for args, want := range map[string]string{
		"--cell cell-z":         `unknown cell or stack "cell-z": the fleet's stacks are cell-a, cell-b, cell-c, cell-d, router`,
		"--type rds/clusterz":   `unknown resource type "rds/clusterz"`,
		"--name cell-a-[":       `bad name pattern "cell-a-["`,
		"--times 0":             "times must be at least 1, got 0",
		"--cell a --op explode": `invalid operation "explode"`,
	} {
		_, stderr, code := cellctl(t, append([]string{"sim", "fault", "add", "--dir", "../.."}, strings.Fields(args)...)...)
		if code != exitcode.Error || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, %s", args, code, stderr)
		}
	}
}

// plan refuses a routing table over the cap, naming the numbers, before
// anything is rendered. (Past the routing image every table up to the cap
// fits the default 128 MB function: TestPlanStrictWithAMillionPinnedTenants.)
func TestPlanRefusesOversizeTable(t *testing.T) {
	dir := t.TempDir()
	base, err := txtar.ParseFile("../../testdata/config/base.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range base.Files {
		p := filepath.Join(dir, f.Name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := router.MaxOverrides + 1
	var b strings.Builder
	b.WriteString(`{"version": 1, "buckets": 16, "cells": {"cell-a": {"state": "active", "weight": 1, "buckets": ["0-7"]}, "cell-b": {"state": "active", "weight": 1, "buckets": ["8-15"]}}, "overrides": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"tenant": "t-%08d", "cell": "cell-a", "state": "active"}`, i)
	}
	b.WriteString("]}")
	if err := os.WriteFile(filepath.Join(dir, "stacks/routing.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := cellctl(t, "plan", "--dir", dir)
	want := fmt.Sprintf("stacks/routing.json:1: overrides: has %d overrides; at most %d are allowed", n, router.MaxOverrides)
	if code != exitcode.Error || !strings.Contains(stderr, want) || stdout != "" {
		t.Fatalf("exit %d\nstdout %.200q\nstderr %.400q", code, stdout, stderr)
	}
}

// A 131 KB tenant id used to be echoed whole in the error: the message
// names its length and shows 64 bytes. (The -o json report still carries
// the id as given, in its "tenant" field, for scripts to match on.)
func TestRouteTruncatesAHugeTenantID(t *testing.T) {
	huge := strings.Repeat("t", 131<<10)
	_, stderr, code := cellctl(t, "route", "--dir", "../..", huge)
	want := `tenant id "` + strings.Repeat("t", 64) + `"… (134144 bytes in all) is 134144 bytes long`
	if code != exitcode.Error || !strings.Contains(stderr, want) || len(stderr) > 1000 {
		t.Fatalf("exit %d, stderr %.300q (%d bytes)", code, stderr, len(stderr))
	}
}
