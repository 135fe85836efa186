package e2e

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/cellctl/cellctl/internal/cloud"
)

// s3Backend serves an S3 that nobody here wrote (gofakes3, in memory) on
// loopback with one bucket, and returns the Pulumi backend URL naming it
// the way `pulumi login` documents a custom S3 endpoint, and the
// environment the clients need to reach it (for setFleetEnv).
func s3Backend(t *testing.T, bucket string) (string, []string) {
	t.Helper()
	mem := s3mem.New()
	if err := mem.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(srv.Close)
	// The clients (the pulumi CLI's and cellctl's aws-sdk-go-v2) sign with
	// whatever they find; gofakes3 does not check.
	env := []string{
		"AWS_ACCESS_KEY_ID=AKIAGOFAKES3",
		"AWS_SECRET_ACCESS_KEY=gofakes3-not-a-secret",
		"AWS_SESSION_TOKEN=",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true",
	}
	return "s3://" + bucket + "?endpoint=" + srv.URL + "&s3ForcePathStyle=true&region=us-east-1", env
}

// syncStacks copies one checkout's committed files (stacks/) to another,
// as `git pull` would.
func syncStacks(t *testing.T, from, to string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(to, "stacks")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(to, "stacks"), os.DirFS(filepath.Join(from, "stacks"))); err != nil {
		t.Fatal(err)
	}
}

// Issue 23: a team's setup end to end. Three checkouts in three
// directories share nothing but an S3 bucket (gofakes3 as the Pulumi
// backend, for the stacks, their locks and the rollout records) and the
// simulated AWS account (CELLCTL_SIM_DIR); secrets are under a KMS key, so
// no passphrase is set anywhere. One checkout ups the fleet and deploys
// through the canary; a second refuses a concurrent rollout (exit 4) and
// promotes the next wave of the first one's rollout; a deploy killed -9 in
// the first is resumed by the second; a third audits drift and status.
func TestTwoCheckoutsShareAnS3Backend(t *testing.T) {
	t.Parallel()
	backend, s3env := s3Backend(t, "cells-state")
	account := cloud.SimDirEnv + "=" + t.TempDir()
	a, b, c := freshClone(t), freshClone(t), freshClone(t)
	for _, dir := range []string{a, b, c} {
		// The bucket's clients and the one simulated account, for every
		// cellctl run in each checkout (not t.Setenv: the test runs in
		// parallel with the others).
		setFleetEnv(t, dir, append(s3env, account)...)
		twoCellFleet(t, dir)
		writeWaves(t, dir, `waves:
  - {name: canary, cells: [cell-a], bake: 5m}
  - {name: wave-1, cells: [cell-b], bake: 1h}
gate:
  promote_if:
    error_rate_5xx: "< 0.5%"
    p99_latency_ms: "< 400"
  min_requests: 10
  poll: 30s
`)
	}
	run := func(dir string, args ...string) result {
		t.Helper()
		return cellctl(t, dir, append([]string{"--backend", backend}, args...)...)
	}
	must := func(dir string, args ...string) result {
		t.Helper()
		r := run(dir, args...)
		if r.code != 0 {
			t.Fatalf("cellctl %v in %s: %s", args, filepath.Base(dir), r)
		}
		return r
	}
	addDemoZones(t, a)
	mustRun(t, a, "sim", "kms", "create", "--alias", "cells")

	must(a, "up", "-y", "--secrets-provider", "awskms://alias/cells?region=us-east-1")
	if _, err := os.Stat(filepath.Join(a, ".cellctl", "state")); !os.IsNotExist(err) {
		t.Fatalf("state went to a local file backend, not the bucket: %v", err)
	}
	syncStacks(t, a, b) // the first up's stack files, committed and pulled
	syncStacks(t, a, c)

	const x, y, z = "registry.example.com/shop/api:4.0.0", "registry.example.com/shop/api:4.0.1", "registry.example.com/shop/api:4.1.0"
	r := must(a, "deploy", "--image", x, "--through", "canary", "--bake-scale", "0.005")
	id := rolloutID(t, r.stderr)

	// Another rollout from the second checkout: the first one holds the
	// fleet through the bucket's lock.
	if r := run(b, "deploy", "--image", y, "--bake-scale", "0.0002"); r.code != 4 || !strings.Contains(r.stderr, id) {
		t.Fatalf("a concurrent rollout from the second checkout: want exit 4 naming %s, got %s", id, r)
	}
	r = must(b, "deploy", "--image", x, "--wave", "wave-1", "--bake-scale", "0.0002")
	if !strings.Contains(r.stderr, id) {
		t.Errorf("the second checkout's wave-1 must continue %s:\n%s", id, r.stderr)
	}

	// kill -9 in the first checkout while wave-1 bakes (18 s at this
	// scale); the second resumes it.
	errPath := filepath.Join(t.TempDir(), "stderr")
	errFile, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd := command(a, "--backend", backend, "deploy", "--image", z, "--bake-scale", "0.005")
	cmd.Stdout, cmd.Stderr = errFile, errFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stderr := func() string { b, _ := os.ReadFile(errPath); return string(b) }
	waitFor(t, "wave-1 to bake", hangGuard, func() bool {
		select {
		case <-exited:
			t.Fatalf("deploy ended before wave-1 baked:\n%s", stderr())
		default:
		}
		for _, line := range strings.Split(stderr(), "\n") {
			if strings.HasPrefix(line, "wave-1 ") && strings.Contains(line, "baking") {
				return true
			}
		}
		return false
	})
	killedID := rolloutID(t, stderr())
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	r = must(b, "deploy", "--image", z, "--bake-scale", "0.0002")
	if !strings.Contains(r.stderr, killedID) || !strings.Contains(r.stderr, "is gone") {
		t.Errorf("the second checkout must take over the killed rollout %s:\n%s", killedID, r.stderr)
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(line, "canary ") && !strings.Contains(line, "wave-skipped") {
			t.Errorf("the resumed rollout touched the canary again: %q", line)
		}
	}

	// A third checkout reads the fleet from the bucket alone.
	var status struct {
		Stacks []struct {
			Name, Image string
			Deployed    bool
		} `json:"stacks"`
	}
	decode(t, must(c, "status", "-o", "json"), &status)
	for _, s := range status.Stacks {
		if !s.Deployed || (s.Name != "router" && s.Image != z) {
			t.Errorf("status from the third checkout: %+v", s)
		}
	}
	if r := run(c, "drift", "--cloud", "-o", "json"); r.code != 0 {
		t.Fatalf("drift --cloud from the third checkout: %s", r)
	}
	for _, dir := range []string{b, c} {
		if _, err := os.Stat(filepath.Join(dir, ".cellctl", "state")); !os.IsNotExist(err) {
			t.Errorf("%s keeps state locally: %v", dir, err)
		}
	}
}
