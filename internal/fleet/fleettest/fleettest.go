// Package fleettest lays out fleet repositories for tests: the demo fleet
// (the repository root's Pulumi.yaml and stack files), optionally with one
// of testdata/fleets/<name> laid over it.
package fleettest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
)

// TwoAccounts is the overlay that moves cell-c and cell-d to account
// 222233334444 through the role cellctl-deploy.
const (
	TwoAccounts   = "two-accounts"
	SecondAccount = "222233334444"
	DeployRole    = "arn:aws:iam::222233334444:role/cellctl-deploy"
)

// Root is the repository root (the demo fleet).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Demo copies the demo fleet's Pulumi.yaml and stack files into a fresh
// directory, then each overlay's stacks/ over them, and returns the
// directory.
func Demo(t testing.TB, overlays ...string) string {
	t.Helper()
	root := Root()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "stacks"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(root, "Pulumi.yaml"), filepath.Join(dir, "Pulumi.yaml"))
	srcs := []string{filepath.Join(root, "stacks")}
	for _, o := range overlays {
		srcs = append(srcs, filepath.Join(root, "testdata", "fleets", o, "stacks"))
	}
	for _, src := range srcs {
		names, err := filepath.Glob(filepath.Join(src, "*"))
		if err != nil || len(names) == 0 {
			t.Fatalf("no fleet files in %s (%v)", src, err)
		}
		for _, name := range names {
			if !strings.HasSuffix(name, ".go") {
				copyFile(t, name, filepath.Join(dir, "stacks", filepath.Base(name)))
			}
		}
	}
	return dir
}

// Load loads dir, failing the test on any error.
func Load(t testing.TB, dir string) *fleet.Fleet {
	t.Helper()
	fl, err := fleet.Load(dir)
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	return fl
}

// Edit rewrites one file of dir (relative path) with fn.
func Edit(t testing.TB, dir, name string, fn func(string) string) {
	t.Helper()
	p := filepath.Join(dir, name)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(fn(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
