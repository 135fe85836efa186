package cmdutil

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// fakePulumiOnPath puts a pulumi that only answers `pulumi version` first
// on PATH: enough for the factory to build an engine (no stack runs here).
func fakePulumiOnPath(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nif [ \"$1\" = version ]; then echo v3.274.1; exit 0; fi\necho \"fake pulumi: $*\" >&2; exit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "pulumi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("PULUMI_BACKEND_URL", "")
	t.Setenv("PULUMI_CONFIG_PASSPHRASE", "test-passphrase")
}

// tempFleet copies the repository's fleet files into a directory of the
// test's own.
func tempFleet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("../../../Pulumi.yaml", filepath.Join(dir, "Pulumi.yaml"))
	os.MkdirAll(filepath.Join(dir, "stacks"), 0o755)
	files, _ := filepath.Glob("../../../stacks/*.yaml")
	for _, f := range append(files, "../../../stacks/routing.json") {
		copyFile(f, filepath.Join(dir, "stacks", filepath.Base(f)))
	}
	return dir
}

func fleetFactory(t *testing.T, dir string) *Factory {
	t.Helper()
	io, _, _, _ := iostreams.Test()
	f := NewFactory(io)
	f.Global.Dir, f.Global.Cloud, f.Global.Parallel = dir, CloudAWS, 2
	t.Cleanup(f.Close)
	return f
}

// The engines the use cases get are the factory's one engine, on the
// backend the flags name (the fleet's .cellctl/state by default).
func TestFactoryEnginesUseTheFlagsBackend(t *testing.T) {
	fakePulumiOnPath(t)
	dir := tempFleet(t)
	f := fleetFactory(t, dir)
	fl, err := f.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	ae, err := f.ApplyEngine(fl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.RoutingEngine(fl, func(stackrun.Event) {}); err != nil {
		t.Fatal(err)
	}
	eng, err := f.Engine(fl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + filepath.ToSlash(filepath.Join(fl.Dir, ".cellctl", "state")); eng.Backend() != want || !eng.IsLocalBackend() {
		t.Errorf("backend = %s, want %s", eng.Backend(), want)
	}
	if ae == nil {
		t.Fatal("no apply engine")
	}
	f2 := fleetFactory(t, dir)
	f2.Global.Backend = "file://" + filepath.ToSlash(t.TempDir())
	fl2, _ := f2.Fleet()
	eng2, err := f2.Engine(fl2, nil)
	if err != nil || eng2.Backend() != f2.Global.Backend || eng2.IsLocalBackend() {
		t.Errorf("--backend: %v %v", eng2, err)
	}
	// A bad --secrets-provider is refused when the engine is built.
	f3 := fleetFactory(t, dir)
	f3.Global.SecretsProvider = "base64key://x"
	fl3, _ := f3.Fleet()
	if _, err := f3.Engine(fl3, nil); err == nil || !strings.Contains(err.Error(), "--secrets-provider") {
		t.Errorf("bad --secrets-provider: %v", err)
	}
}

// An invalid fleet directory is named in the error of every loader.
func TestLoadersNameTheInvalidFleet(t *testing.T) {
	dir := t.TempDir()
	f := fleetFactory(t, dir)
	if _, err := f.Fleet(); err == nil || !strings.Contains(err.Error(), "invalid fleet configuration in "+dir) {
		t.Errorf("Fleet: %v", err)
	}
	if _, err := f.TableLoader()(); err == nil || !strings.Contains(err.Error(), "invalid fleet configuration in "+dir) {
		t.Errorf("TableLoader: %v", err)
	}
	if _, err := f.Records(); err == nil {
		t.Error("Records of an invalid fleet")
	}
	if _, err := f.Cloud(); err == nil {
		t.Error("Cloud of an invalid fleet")
	}
}

// A routing-table verb's loader reads the files afresh each call (the
// verb changes them between its steps), and takes the fleet lock first
// under a mutating verb, so the table is judged while the fleet is held.
func TestTableLoaderReloadsAndHoldsTheFleet(t *testing.T) {
	dir := tempFleet(t)
	f, s, _ := lockFactory(t)
	f.Global.Dir = dir
	f.Global.Backend = "file://" + filepath.ToSlash(t.TempDir())
	ctx := context.Background()
	load := f.TableLoader()
	var during *rollout.Holder
	cmd := Mutates(f, &cobra.Command{Use: "drain", RunE: func(c *cobra.Command, _ []string) error {
		fl, err := load()
		if err != nil {
			return err
		}
		during, _ = s.Holder(ctx)
		// The repository changes between the verb's steps.
		path := filepath.Join(dir, "stacks", "Pulumi.cell-d.yaml")
		data, _ := os.ReadFile(path)
		if err := os.WriteFile(path, []byte(strings.Replace(string(data), "cells:index: 4", "cells:index: 44", 1)), 0o644); err != nil {
			return err
		}
		again, err := load()
		if err != nil {
			return err
		}
		if fl.Cell("cell-d").Index != 4 || again.Cell("cell-d").Index != 44 {
			t.Errorf("indexes %d then %d: the loader must read the files afresh", fl.Cell("cell-d").Index, again.Cell("cell-d").Index)
		}
		return nil
	}}, "drain")
	cmd.SetArgs(nil)
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatal(err)
	}
	if during == nil || during.Verb != "drain" {
		t.Fatalf("the fleet lock while loading = %v", during)
	}
	if h, _ := s.Holder(ctx); h != nil {
		t.Errorf("the lock outlived the verb: %v", h)
	}
	// Outside a mutating verb the loader takes no lock.
	if _, err := load(); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.Holder(ctx); h != nil {
		t.Errorf("a read took the fleet lock: %v", h)
	}
}

// A gated change's environment is wired to the factory's engine: a stack
// never deployed has no outputs and nothing failed; abandoning a lock
// nobody holds says so; a live holder on this host is not abandoned.
func TestDeployEnv(t *testing.T) {
	fakePulumiOnPath(t)
	dir := tempFleet(t)
	f := fleetFactory(t, dir)
	fl, err := f.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	env, done, err := f.DeployEnv(ctx, fl, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if env.Fleet != fl || env.Repository == nil || env.Store == nil {
		t.Fatalf("env = %+v", env)
	}
	// The one gated env names this process as the fleet lock's holder
	// for a deploy, a router canary and a secret rotation alike.
	if host, _ := os.Hostname(); env.Host != host || env.PID != os.Getpid() || env.Alive == nil || !env.Alive(executor.Holder{PID: os.Getpid()}) {
		t.Errorf("the lock holder is %q pid %d (alive check set: %v); want this process", env.Host, env.PID, env.Alive != nil)
	}
	outs, err := env.Outputs(ctx, "cell-a")
	if err != nil || outs != nil {
		t.Errorf("outputs of a stack never deployed = %v, %v; want none", outs, err)
	}
	if _, err := env.Abandon(ctx, "r-000000000000"); err == nil {
		t.Error("abandoning a rollout that does not exist succeeded")
	}
	eng, _ := f.Engine(fl, nil)
	rs, err := rollout.Open(ctx, eng.Backend())
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	host, _ := os.Hostname()
	me := rollout.Holder{ID: "r-0123456789ab", Verb: "deploy", Host: host, PID: os.Getpid(), Started: time.Now(), Nonce: "n"}
	if _, err := rs.Acquire(ctx, me); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Abandon(ctx, me.ID); err == nil || !strings.Contains(err.Error(), "is still running on this host") {
		t.Errorf("abandoning a live rollout: %v", err)
	}
	if h, _ := rs.Holder(ctx); h == nil || h.Nonce != "n" {
		t.Errorf("the live rollout's lock was broken: %v", h)
	}
}

// Graceful is the first interrupt's context when the command line set
// one; a context without one is its own.
func TestGraceful(t *testing.T) {
	ctx := context.Background()
	if Graceful(ctx, StacksInFlight) != ctx {
		t.Error("a context without a graceful one is its own")
	}
	g, cancel := context.WithCancel(context.Background())
	with := WithGraceful(ctx, g)
	if _, ok := GracefulNotice(with); ok {
		t.Error("a notice before any command watches the first interrupt")
	}
	cancel()
	select {
	case <-Graceful(with, "stopping the watch").Done():
	default:
		t.Error("the graceful context is not the one given")
	}
	if with.Err() != nil {
		t.Error("cancelling the graceful context cancelled the run")
	}
	if what, ok := GracefulNotice(with); !ok || what != "stopping the watch" {
		t.Errorf("notice %q, %v", what, ok)
	}
}

// On --cloud aws with AWS_ENDPOINT_URL set (a local emulator, as its
// users run it), the command says once which endpoint it talks to; on
// AWS's own endpoints it says nothing.
func TestCloudAWSNamesACustomEndpoint(t *testing.T) {
	dir := tempFleet(t)
	t.Setenv("AWS_ENDPOINT_URL", "")
	io, _, _, errOut := iostreams.Test()
	f := NewFactory(io)
	f.Global.Dir, f.Global.Cloud = dir, CloudAWS
	t.Cleanup(f.Close)
	if _, err := f.Cloud(); err != nil || errOut.String() != "" {
		t.Fatalf("AWS's own endpoints: err %v, stderr %q", err, errOut.String())
	}
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:5000")
	io, _, _, errOut = iostreams.Test()
	f = NewFactory(io)
	f.Global.Dir, f.Global.Cloud = dir, CloudAWS
	t.Cleanup(f.Close)
	f.Cloud()
	f.Cloud()
	if got := errOut.String(); strings.Count(got, "AWS_ENDPOINT_URL=http://127.0.0.1:5000") != 1 || !strings.Contains(got, "--cloud aws talks to") {
		t.Errorf("stderr %q, want the endpoint named once", got)
	}
}
