package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/exitcode"
)

// tempFleet copies the repository's fleet files into a temp dir, so the
// simulated cloud a test writes lands there.
func tempFleet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files, _ := filepath.Glob("../../stacks/*.yaml")
	files = append(files, "../../stacks/routing.json")
	os.MkdirAll(filepath.Join(dir, "stacks"), 0o755)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "stacks", filepath.Base(f)), b, 0o644)
	}
	b, err := os.ReadFile("../../Pulumi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), b, 0o644)
	return dir
}

func TestSimHealthSetShowClear(t *testing.T) {
	dir := tempFleet(t)
	stdout, stderr, code := cellctl(t, "sim", "health", "set", "--dir", dir, "--image", "registry/app:v2", "--error-rate", "3%", "--p99", "900ms", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Profile struct {
			ErrorRate float64 `json:"errorRate"`
			P99       string  `json:"p99"`
		} `json:"profile"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.Profile.ErrorRate != 0.03 || doc.Profile.P99 != "900ms" {
		t.Fatalf("set -o json = %s (%v)", stdout, err)
	}
	if _, stderr, code := cellctl(t, "sim", "health", "set", "--dir", dir, "--cell", "b", "--no-traffic"); code != 0 {
		t.Fatalf("no traffic: exit %d %s", code, stderr)
	}
	stdout, _, code = cellctl(t, "sim", "health", "show", "--dir", dir, "-o", "json")
	var rep struct {
		Images map[string]map[string]any `json:"images"`
		Cells  map[string]map[string]any `json:"cellOverrides"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil || rep.Images["registry/app:v2"]["errorRate"] != 0.03 || rep.Cells["cells/cell-b"]["requestsPerMinute"] != 0.0 {
		t.Fatalf("show = %s", stdout)
	}
	if _, stderr, code := cellctl(t, "sim", "health", "clear", "--dir", dir, "--image", "registry/app:v2"); code != 0 {
		t.Fatalf("clear: %s", stderr)
	}
	_, stderr, code = cellctl(t, "sim", "health", "clear", "--dir", dir, "--image", "registry/app:v2")
	if code != exitcode.Error || !strings.Contains(stderr, `no health profile for image "registry/app:v2"`) {
		t.Errorf("clear twice: exit %d %q", code, stderr)
	}
}

func TestSimHealthSetRefusesBadInput(t *testing.T) {
	dir := tempFleet(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--error-rate", "3%"}, "name exactly one of an image (--image) or a cell (--cell)"},
		{[]string{"--image", "x"}, "nothing to set"},
		{[]string{"--image", "x", "--error-rate", "3"}, `invalid error rate "3": a fraction must be at most 1 (did you mean 3%?)`},
		{[]string{"--image", "x", "--error-rate", "150%"}, `must be between 0% and 100%`},
		{[]string{"--cell", "a", "--p99", "-5ms"}, "p99 -5ms must be more than 0"},
		{[]string{"--cell", "a", "--no-traffic", "--requests-per-minute", "10"}, "contradict"},
		{[]string{"--cell", "a", "--healthy-tasks", "-1"}, "healthy tasks -1 must not be negative"},
	} {
		_, stderr, code := cellctl(t, append([]string{"sim", "health", "set", "--dir", dir}, tc.args...)...)
		if code != exitcode.Error || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

// sim reset empties the simulated cloud the fleet runs in, so it takes the
// fleet lock: while a live rollout holds the fleet it exits 4 naming the
// holder and empties nothing (it used to wipe the fleet mid-bake); once
// the fleet is free it empties the cloud and gives the lock back.
func TestSimResetRefusedWhileARolloutHoldsTheFleet(t *testing.T) {
	dir := tempFleet(t)
	if err := os.CopyFS(filepath.Join(dir, ".cellctl", "sim"), os.DirFS("../../testdata/sim/fleet-small")); err != nil {
		t.Fatal(err)
	}
	resources := func() int {
		t.Helper()
		stdout, stderr, code := cellctl(t, "sim", "resources", "--dir", dir, "-o", "json")
		var doc struct{ Resources []any }
		if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil {
			t.Fatalf("sim resources: exit %d %s", code, stderr)
		}
		return len(doc.Resources)
	}
	before := resources()
	if before == 0 {
		t.Fatal("the fixture cloud is empty")
	}
	lock := filepath.Join(dir, ".cellctl", "state", ".cellctl", "locks", "rollout.json")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf(`{"id":"r-0123456789ab","verb":"deploy","host":%q,"pid":%d,"started":"2026-12-01T10:00:00Z","nonce":"feedface"}`, host, os.Getpid())
	if err := os.WriteFile(lock, []byte(holder), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := cellctl(t, "sim", "reset", "--dir", dir)
	if code != exitcode.Locked || !strings.Contains(stderr, "the fleet is held by deploy r-0123456789ab (host "+host) {
		t.Fatalf("sim reset under a live rollout: exit %d, %s", code, stderr)
	}
	if n := resources(); n != before {
		t.Fatalf("the refused reset left %d of %d resources", n, before)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := cellctl(t, "sim", "reset", "--dir", dir); code != 0 {
		t.Fatalf("sim reset on a free fleet: exit %d, %s", code, stderr)
	}
	if n := resources(); n != 0 {
		t.Errorf("%d resources left after the reset", n)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the reset kept the fleet lock: %v", err)
	}
}
