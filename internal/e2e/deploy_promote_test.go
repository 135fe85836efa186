package e2e

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// unevenRouting gives the demo cells uneven shares of the 1024 buckets and
// pins three tenants, so every wave's exposure is a different number.
const unevenRouting = `{
  "version": 2,
  "buckets": 1024,
  "cells": {
    "cell-a": {"state": "active", "weight": 1, "buckets": ["0-99"]},
    "cell-b": {"state": "active", "weight": 1, "buckets": ["100-399", "1000"]},
    "cell-c": {"state": "active", "weight": 1, "buckets": ["400-899"]},
    "cell-d": {"state": "active", "weight": 1, "buckets": ["900-999", "1001-1023"]}
  },
  "overrides": [
    {"tenant": "acme", "cell": "cell-b", "state": "active"},
    {"tenant": "initech", "cell": "cell-d", "state": "active"},
    {"tenant": "globex", "cell": "cell-a", "state": "migrating", "target": "cell-c", "write_mode": "reject_with_503"}
  ]
}
`

// routingShares reads routing.json the way an operator would count it:
// each cell's buckets (ranges "a-b" and single buckets) over the table's
// bucket count, and the pinned tenants whose override names the cell.
func routingShares(t *testing.T, dir string) (buckets, pinned map[string]float64) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "stacks", "routing.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Buckets int `json:"buckets"`
		Cells   map[string]struct {
			Buckets []string `json:"buckets"`
		} `json:"cells"`
		Overrides []struct {
			Cell string `json:"cell"`
		} `json:"overrides"`
	}
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatal(err)
	}
	buckets, pinned = map[string]float64{}, map[string]float64{}
	for id, c := range table.Cells {
		n := 0
		for _, r := range c.Buckets {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				t.Fatalf("routing.json: bucket range %q", r)
			}
			n += b - a + 1
		}
		buckets[id] = float64(n) / float64(table.Buckets)
	}
	for _, o := range table.Overrides {
		pinned[o.Cell] += 1 / float64(len(table.Overrides))
	}
	return buckets, pinned
}

// TestDeployDryRunExposureIsTheRoutingTable: the dry run's share of buckets
// and of pinned tenants per wave, and cumulatively, are what routing.json
// says, and it changes nothing.
func TestDeployDryRunExposureIsTheRoutingTable(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	if err := os.WriteFile(filepath.Join(dir, "stacks", "routing.json"), []byte(unevenRouting), 0o644); err != nil {
		t.Fatal(err)
	}
	const img = "registry.example.com/shop/api:4.0.0"
	var d struct {
		Waves []struct {
			Name  string `json:"name"`
			Cells []struct {
				Cell    string `json:"cell"`
				Changes []struct {
					Key, Old, New string
				} `json:"changes"`
			} `json:"cells"`
			Exposure   *struct{ Buckets, Pinned float64 } `json:"exposure"`
			Cumulative *struct{ Buckets, Pinned float64 } `json:"cumulative"`
		} `json:"waves"`
	}
	decode(t, mustRun(t, dir, "deploy", "--image", img, "--dry-run", "-o", "json"), &d)
	buckets, pinned := routingShares(t, dir)
	var cumB, cumP float64
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if len(d.Waves) != 3 {
		t.Fatalf("dry run has %d waves, want the demo fleet's 3", len(d.Waves))
	}
	for _, w := range d.Waves {
		var wb, wp float64
		for _, c := range w.Cells {
			wb += buckets[c.Cell]
			wp += pinned[c.Cell]
			if len(c.Changes) == 0 {
				t.Errorf("%s: no changes listed for an image change", c.Cell)
			}
		}
		cumB += wb
		cumP += wp
		if w.Exposure == nil || w.Cumulative == nil {
			t.Fatalf("wave %s: no exposure", w.Name)
		}
		if !near(w.Exposure.Buckets, wb) || !near(w.Exposure.Pinned, wp) {
			t.Errorf("wave %s exposes %v of buckets and %v of pinned tenants; routing.json says %v and %v", w.Name, w.Exposure.Buckets, w.Exposure.Pinned, wb, wp)
		}
		if !near(w.Cumulative.Buckets, cumB) || !near(w.Cumulative.Pinned, cumP) {
			t.Errorf("wave %s cumulative %v / %v; routing.json says %v / %v", w.Name, w.Cumulative.Buckets, w.Cumulative.Pinned, cumB, cumP)
		}
	}
	if !near(cumB, 1) || !near(cumP, 1) {
		t.Errorf("after the last wave the rollout exposes %v of buckets, %v of pinned tenants; want all", cumB, cumP)
	}
	// The table view prints the same numbers, rounded.
	r := mustRun(t, dir, "deploy", "--image", img, "--dry-run")
	if !strings.Contains(r.stdout, "exposure: 9.8% of buckets, 33.3% of pinned tenants (cumulative 9.8%, 33.3%)") {
		t.Errorf("the canary's exposure line (100/1024 buckets, 1 of 3 pinned):\n%s", r.stdout)
	}
	wantImages(t, dir, images(4, baseImage, baseImage))
}

// TestDeployThroughAndWave promotes a rollout one wave per run, as the CI
// workflow's jobs do: --wave before the earlier waves passed, an unknown
// wave and --through with --wave are refused and change nothing;
// --through canary stops after the canary (exit 0) and keeps the fleet's
// lock (another rollout is refused with exit 4); --wave wave-1 and then
// --wave wave-2 finish it, the router with the last; a rerun of the last
// job has nothing left to do.
func TestDeployThroughAndWave(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const img = "registry.example.com/shop/api:5.0.0"
	deploy := func(args ...string) result {
		return cellctl(t, dir, append([]string{"deploy", "--image", img, "--bake-scale", "0.002"}, args...)...)
	}

	refusals := []struct {
		args []string
		want string
	}{
		{[]string{"--wave", "wave-1"}, "--wave wave-1 refused: no rollout of this release has run yet, so wave canary has not passed"},
		{[]string{"--wave", "nope"}, `--wave "nope": no such wave (waves: canary, wave-1, wave-2)`},
		{[]string{"--through", "nope"}, `--through "nope": no such wave`},
		{[]string{"--through", "canary", "--wave", "wave-1"}, "--through and --wave cannot be combined"},
	}
	for _, c := range refusals {
		r := deploy(c.args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("deploy %v: want exit 1 saying %q, got %s", c.args, c.want, r)
		}
	}
	wantImages(t, dir, images(4, baseImage, baseImage))

	r := deploy("--through", "canary")
	if r.code != 0 {
		t.Fatalf("--through canary: %s", r)
	}
	if !strings.Contains(r.stderr, "stopped after wave canary") || !rowHas(r.stdout, "cell-a", img, "new") || !rowHas(r.stdout, "cell-b", baseImage, "untouched") {
		t.Errorf("--through canary:\n%s", r)
	}
	wantImages(t, dir, images(1, img, baseImage))
	id := rolloutID(t, r.stderr)
	if rec := rolloutStatus(t, dir, id); rec.State != "paused" || rec.waveStates() != "canary=passed wave-1=pending wave-2=pending" {
		t.Errorf("after --through canary: %s %s", rec.State, rec.waveStates())
	}

	// The paused rollout holds the fleet between its jobs.
	other := cellctl(t, dir, "deploy", "--image", "registry.example.com/shop/api:5.0.1", "--bake-scale", "0.002")
	if other.code != 4 || !strings.Contains(other.stderr, id) || !strings.Contains(other.stderr, "paused before wave wave-1") {
		t.Errorf("another rollout while %s is paused: want exit 4 naming it, got %s", id, other)
	}

	r = deploy("--wave", "wave-2")
	if r.code != 1 || !strings.Contains(r.stderr, "earlier wave wave-1 of rollout "+id+" has not passed") {
		t.Errorf("--wave wave-2 before wave-1: want exit 1 refused, got %s", r)
	}
	wantImages(t, dir, images(1, img, baseImage))

	r = deploy("--wave", "wave-1")
	if r.code != 0 || !rowHas(r.stdout, "cell-b", img, "new") {
		t.Fatalf("--wave wave-1: %s", r)
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(line, "canary ") {
			t.Errorf("--wave wave-1 touched the canary: %q", line)
		}
	}
	wantImages(t, dir, images(2, img, baseImage))

	r = deploy("--wave", "wave-2")
	if r.code != 0 {
		t.Fatalf("--wave wave-2: %s", r)
	}
	for _, c := range demoCells {
		if !rowHas(r.stdout, c, img, "new") {
			t.Errorf("after the last wave: no row %s %s new:\n%s", c, img, r.stdout)
		}
	}
	wantImages(t, dir, images(4, img, baseImage))
	if rec := rolloutStatus(t, dir, id); rec.State != "complete" || rec.waveStates() != "canary=passed wave-1=passed wave-2=passed" {
		t.Errorf("after --wave wave-2: %s %s", rec.State, rec.waveStates())
	}

	// A rerun of the last job finds nothing to do; the lock is free again.
	r = deploy("--wave", "wave-2")
	if r.code != 0 || !strings.Contains(r.stderr, "already complete: nothing to do") {
		t.Errorf("rerun of --wave wave-2: %s", r)
	}
	if r := mustRun(t, dir, "deploy", "--image", img, "--dry-run"); strings.Contains(r.stdout, "→") {
		t.Errorf("after the rollout every cell should be unchanged:\n%s", r.stdout)
	}
}
