package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// driftReport is the -o json document of `cellctl drift`.
type driftReport struct {
	Checks []string `json:"checks"`
	Cells  []struct {
		Cell     string `json:"cell"`
		Skew     int    `json:"skew"`
		Behind   int    `json:"behind"`
		Cloud    int    `json:"cloud"`
		Excepted int    `json:"excepted"`
		Ignored  int    `json:"ignored"`
		Deployed string `json:"deployedImage"`
		Repo     string `json:"repoImage"`
	} `json:"cells"`
	Findings []driftFinding `json:"findings"`
	Excepted []driftFinding `json:"excepted"`
	Notes    []string       `json:"notes"`
}

type driftFinding struct {
	Kind, Cell, Status, Key, Type, Resource, Property, Old, New, Detail, Next string
	URN                                                                       string `json:"urn"`
}

func (d driftReport) find(cell, what string) *driftFinding {
	for i, f := range d.Findings {
		if f.Cell == cell && (f.Key == what || f.Property == what || f.Resource == what) {
			return &d.Findings[i]
		}
	}
	return nil
}

func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func writeText(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDrift audits two cells of the deployed demo fleet on the simulated
// cloud (a copy of the deployed fixture: the other cells and the router
// are deployed too, and every check names the two cells or finds only
// theirs) the three ways: a clean fleet is clean; an out-of-band
// edit is cloud drift naming resource, property, old and new, without the
// state changing; an ignored property is not reported; an unreadable
// resource is not_checked; a baseline override is skew until it is
// excepted with a reason; a cell one image behind is named by --behind.
func TestDrift(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	cells := []string{"cell-a", "cell-b"}

	// Freshly deployed, nothing changed: every check is clean.
	var clean driftReport
	r := cellctl(t, dir, append([]string{"drift", "-o", "json"}, cells...)...)
	if r.code != 0 {
		t.Fatalf("a freshly deployed fleet has no drift: %s", r)
	}
	decode(t, r, &clean)
	if len(clean.Findings) != 0 || strings.Join(clean.Checks, ",") != "skew,behind,cloud" {
		t.Fatalf("clean report: %+v", clean)
	}

	t.Run("cloud", func(t *testing.T) {
		checkpoint := filepath.Join(dir, ".cellctl", "state", ".pulumi", "stacks", "cells", "cell-b.json")
		before := fileHash(t, checkpoint)
		stackFile := fileHash(t, filepath.Join(dir, "stacks", "Pulumi.cell-b.yaml"))
		mustRun(t, dir, "sim", "edit", "cell-b", "cell-b-queue", "visibilityTimeoutSeconds", "120")
		mustRun(t, dir, "sim", "edit", "cell-a", "cell-a-queue", "tags.owner", "mallory")

		r := cellctl(t, dir, "drift", "--cloud", "-o", "json", "cell-a", "cell-b")
		if r.code != 2 {
			t.Fatalf("cloud drift exits 2: %s", r)
		}
		var rep driftReport
		decode(t, r, &rep)
		f := rep.find("cell-b", "visibilityTimeoutSeconds")
		if f == nil || f.Kind != "cloud" || f.Status != "changed" || f.Resource != "cell-b-queue" || f.Type != "aws:sqs/queue:Queue" ||
			f.Old != "60" || f.New != "120" || !strings.Contains(f.URN, "cell-b-queue") || !strings.Contains(f.Next, "cellctl up cell-b --refresh") {
			t.Errorf("cell-b's queue: %+v\n%s", f, r)
		}
		if f := rep.find("cell-a", "tags.owner"); f == nil || f.Old != "(absent)" || f.New != "mallory" {
			t.Errorf("cell-a's queue tag: %+v\n%s", f, r)
		}
		if len(rep.Findings) != 2 {
			t.Errorf("exactly the two edits: %+v", rep.Findings)
		}
		if fileHash(t, checkpoint) != before || fileHash(t, filepath.Join(dir, "stacks", "Pulumi.cell-b.yaml")) != stackFile {
			t.Error("drift --cloud wrote the state or the stack file")
		}

		// The table and the markdown say the same.
		tbl := cellctl(t, dir, "drift", "--cloud", "cell-b")
		if tbl.code != 2 || !strings.Contains(tbl.stdout, "aws:sqs/queue:Queue cell-b-queue visibilityTimeoutSeconds  60 → 120") {
			t.Errorf("table:\n%s", tbl)
		}
		md := cellctl(t, dir, "drift", "--cloud", "-o", "markdown", "cell-a", "cell-b")
		if md.code != 2 || !strings.Contains(regexp.MustCompile(` *\| *`).ReplaceAllString(md.stdout, " | "), "| cloud | changed | `aws:sqs/queue:Queue cell-b-queue visibilityTimeoutSeconds` | `60` → `120` |") {
			t.Errorf("markdown:\n%s", md)
		}

		// Ignored: the property is owned elsewhere; counted, not reported.
		writeText(t, filepath.Join(dir, "stacks", "drift.yaml"), `cloud:
  ignore:
    - type: aws:sqs/queue:Queue
      property: visibilityTimeoutSeconds
      reason: the worker tunes it at run time
`)
		r = cellctl(t, dir, "drift", "--cloud", "-o", "json", "cell-b")
		if r.code != 0 || strings.Contains(r.stdout, "visibilityTimeoutSeconds") {
			t.Fatalf("an ignored property is not reported: %s", r)
		}
		decode(t, r, &rep)
		if rep.Cells[0].Ignored != 1 {
			t.Errorf("the ignored change is counted: %+v", rep.Cells)
		}

		// A resource that cannot be read is not_checked, never clean.
		mustRun(t, dir, "sim", "fault", "add", "--cell", "cell-b", "--name", "cell-b-db", "--op", "read", "--code", "AccessDenied", "--always")
		r = cellctl(t, dir, "drift", "--cloud", "-o", "json", "cell-b")
		mustRun(t, dir, "sim", "fault", "clear")
		if r.code != 2 {
			t.Fatalf("an unreadable resource is a finding: %s", r)
		}
		decode(t, r, &rep)
		if f := rep.find("cell-b", "cell-b-db"); f == nil || f.Status != "not_checked" || !strings.Contains(f.Detail, "read failed") {
			t.Errorf("not_checked: %+v\n%s", f, r)
		}
		writeText(t, filepath.Join(dir, "stacks", "drift.yaml"), "")
	})

	t.Run("skew", func(t *testing.T) {
		stack := filepath.Join(dir, "stacks", "Pulumi.cell-b.yaml")
		orig, err := os.ReadFile(stack)
		if err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(stack, orig, 0o644)
		writeText(t, stack, strings.Replace(string(orig), "config:\n", "config:\n  cells:logRetentionDays: 90\n", 1))

		r := cellctl(t, dir, "drift", "--skew", "-o", "json")
		if r.code != 2 {
			t.Fatalf("a must_equal override is skew: %s", r)
		}
		var rep driftReport
		decode(t, r, &rep)
		f := rep.find("cell-b", "logRetentionDays")
		if f == nil || f.Status != "outlier" || f.Old != "30" || f.New != "90" || !strings.Contains(f.Next, "stacks/drift.yaml") {
			t.Errorf("skew finding: %+v\n%s", f, r)
		}
		if len(rep.Findings) != 1 {
			t.Errorf("only cell-b's override (cell-c's desiredCount and cell-d's region may vary): %+v", rep.Findings)
		}

		// An exception without a reason is a config error, with its line.
		writeText(t, filepath.Join(dir, "stacks", "drift.yaml"), "exceptions:\n  - cell: cell-b\n    key: logRetentionDays\n")
		r = cellctl(t, dir, "drift", "--skew")
		if r.code != 1 || !strings.Contains(r.stderr, "stacks/drift.yaml:2: exceptions[0].reason: missing") {
			t.Fatalf("an exception without a reason is refused: %s", r)
		}
		// Excepted with a reason: silent.
		writeText(t, filepath.Join(dir, "stacks", "drift.yaml"), "exceptions:\n  - cell: cell-b\n    key: logRetentionDays\n    reason: audit logs of this cell are kept longer (contract 42)\n")
		r = cellctl(t, dir, "drift", "--skew", "-o", "json")
		if r.code != 0 {
			t.Fatalf("an excepted override is not a finding: %s", r)
		}
		decode(t, r, &rep)
		if len(rep.Findings) != 0 || len(rep.Excepted) != 1 || rep.Excepted[0].Detail != "audit logs of this cell are kept longer (contract 42)" {
			t.Errorf("excepted: %+v", rep)
		}
		writeText(t, filepath.Join(dir, "stacks", "drift.yaml"), "")
	})

	t.Run("behind", func(t *testing.T) {
		project := filepath.Join(dir, "Pulumi.yaml")
		data, err := os.ReadFile(project)
		if err != nil {
			t.Fatal(err)
		}
		writeText(t, project, strings.Replace(string(data), "api:1.4.2", "api:1.4.3", 1))
		mustRun(t, dir, "up", "cell-a", "-y") // cell-a ships 1.4.3; cell-b stays on 1.4.2

		r := cellctl(t, dir, "drift", "--behind", "-o", "json", "cell-a", "cell-b")
		if r.code != 2 {
			t.Fatalf("a cell behind the repo is a finding: %s", r)
		}
		var rep driftReport
		decode(t, r, &rep)
		f := rep.find("cell-b", "image")
		if f == nil || f.Old != "registry.example.com/shop/api:1.4.2" || f.New != "registry.example.com/shop/api:1.4.3" || !strings.Contains(f.Next, "cellctl deploy") {
			t.Errorf("cell-b one image behind: %+v\n%s", f, r)
		}
		if len(rep.Findings) != 1 || rep.find("cell-a", "image") != nil {
			t.Errorf("cell-a is current: %+v", rep.Findings)
		}
		tbl := cellctl(t, dir, "drift", "--behind", "cell-a", "cell-b")
		if !strings.Contains(tbl.stdout, "cell-b  -     1       -      -            0         0        registry.example.com/shop/api:1.4.2  registry.example.com/shop/api:1.4.3") {
			t.Errorf("which cell runs which version:\n%s", tbl)
		}
	})
}
