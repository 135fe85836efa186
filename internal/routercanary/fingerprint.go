package routercanary

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/internal/safefile"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/stacks"
	"github.com/cellctl/cellctl/waves/executor"
)

// A router step with nothing to change costs no engine run. "Nothing to
// change" is decided from two fingerprints the last shipped canary
// recorded (CanaryRecord.Inputs, .Deployed):
//
//   - Inputs: everything the router's program is built from — its
//     resources and outputs as the program renders them offline (the
//     routing table, the edge function's package, origins, viewer
//     domains, the dashboard: internal/plan, the same render the apply
//     path audits), the router's stack file (its aws: settings and the
//     origin-verify secret's ciphertext, which the offline render stands
//     in for), the project's aws: settings, the routed cells' deployed
//     outputs the router program reads (stacks.RouterCellOutputs: their
//     DNS names, load balancers, task roles — not the image, task
//     definitions or anything else a release changes) — and the build of
//     cellctl itself (a new cellctl may render a new router);
//   - Deployed: the router stack's deployed outputs (which version each
//     distribution runs, the canary phase, the table version, …).
//
// When both are what the last shipped canary recorded, the router runs
// exactly what an `up` would deploy again: the step is skipped. Anything
// else — an edit, a new cellctl, a router changed since by another
// verb — runs it.

// Deployed is the fingerprint of a stack's deployed outputs.
func Deployed(outs map[string]any) string {
	if len(outs) == 0 {
		return ""
	}
	return digest(outs)
}

// Inputs is the fingerprint of the router's desired inputs in fl (see
// above); outputs reads a stack's deployed outputs.
func Inputs(ctx context.Context, fl *fleet.Fleet, outputs func(ctx context.Context, stack string) (map[string]any, error)) (string, error) {
	f, err := fingerprints(ctx, fl, outputs)
	return f.inputs, err
}

// functionType is the edge function's resource type: a new version of it
// is what a canary judges.
const functionType = "aws:lambda/function:Function"

// prints are the fingerprints of one render: the router's inputs, and its
// edge function alone (its rendered code and configuration, and the
// cellctl build that packaged it).
type prints struct{ inputs, function string }

func fingerprints(ctx context.Context, fl *fleet.Fleet, outputs func(ctx context.Context, stack string) (map[string]any, error)) (prints, error) {
	if fl == nil || fl.Router == nil {
		return prints{}, nil
	}
	rep, err := plan.Render(ctx, fl, plan.Options{Stacks: []string{fleet.RouterStack}})
	if err != nil {
		return prints{}, fmt.Errorf("router step: rendering the router offline to tell whether it changed: %w", err)
	}
	var rendered *plan.Stack
	for _, s := range rep.Stacks {
		if s.Name == fleet.RouterStack {
			rendered = s
		}
	}
	if rendered == nil {
		return prints{}, fmt.Errorf("router step: the offline render has no router stack")
	}
	resources := append([]plan.Resource(nil), rendered.Resources...)
	sort.SliceStable(resources, func(i, j int) bool {
		return resources[i].Type+"\x00"+resources[i].Name < resources[j].Type+"\x00"+resources[j].Name
	})
	stackFile, err := safefile.Read(filepath.Join(fl.Dir, fl.Router.File), 1<<20)
	if err != nil {
		return prints{}, fmt.Errorf("router step: %w", err)
	}
	project, err := projectAWS(filepath.Join(fl.Dir, fleet.ProjectFile))
	if err != nil {
		return prints{}, err
	}
	cells := map[string]map[string]any{}
	if fl.Routing != nil {
		for _, c := range fl.Routing.Cells() {
			if c.State == router.CellDrained {
				continue
			}
			outs, err := outputs(ctx, c.ID)
			if err != nil {
				return prints{}, fmt.Errorf("router step: reading %s's outputs, which the router reads: %w", c.ID, err)
			}
			kept := map[string]any{}
			for _, k := range stacks.RouterCellOutputs {
				if v, ok := outs[k]; ok {
					kept[k] = v
				}
			}
			cells[c.ID] = kept
		}
	}
	build, err := buildID()
	if err != nil {
		return prints{}, err
	}
	var function []plan.Resource
	for _, r := range resources {
		if r.Type == functionType {
			function = append(function, r)
		}
	}
	p := prints{inputs: digest(map[string]any{
		"resources": resources, "outputs": rendered.Outputs,
		"stackFile": string(stackFile), "projectAWS": project, "cells": cells, "build": build,
	})}
	if len(function) > 0 {
		p.function = digest(map[string]any{"function": function, "build": build})
	}
	return p, nil
}

// projectAWS is the project's aws: configuration (the provider's settings
// the router's edge provider takes), the rest of Pulumi.yaml being in the
// render.
func projectAWS(path string) (map[string]any, error) {
	data, err := safefile.Read(path, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("router step: %w", err)
	}
	var doc struct {
		Config map[string]any `yaml:"config"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("router step: %s: %w", path, err)
	}
	out := map[string]any{}
	for k, v := range doc.Config {
		if strings.HasPrefix(k, "aws:") {
			out[k] = v
		}
	}
	return out, nil
}

var build struct {
	once sync.Once
	id   string
	err  error
}

// buildID identifies this cellctl's build: its commit when it was built
// from a clean checkout, else a digest of the executable itself.
func buildID() (string, error) {
	build.once.Do(func() {
		if bi, ok := debug.ReadBuildInfo(); ok {
			rev, modified := "", true
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if rev != "" && !modified {
				build.id = bi.Main.Path + "@" + rev + " " + bi.GoVersion
				return
			}
		}
		exe, err := os.Executable()
		if err != nil {
			build.err = fmt.Errorf("router step: identifying this cellctl build: %w", err)
			return
		}
		f, err := os.Open(exe)
		if err != nil {
			build.err = fmt.Errorf("router step: identifying this cellctl build: %w", err)
			return
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			build.err = fmt.Errorf("router step: identifying this cellctl build: %w", err)
			return
		}
		build.id = "sha256:" + hex.EncodeToString(h.Sum(nil))
	})
	return build.id, build.err
}

func digest(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// inputs are the desired inputs' fingerprints (none without a fleet: the
// step always ships).
func (c *run) inputs(ctx context.Context) (prints, error) {
	if c.env.Fleet == nil {
		return prints{}, nil
	}
	return fingerprints(ctx, c.env.Fleet, c.env.Outputs)
}

// shipped is the version a canary that left the router shipped left the
// primary on: the candidate it promoted, else the primary it kept.
func shipped(cr *executor.CanaryRecord) string {
	if cr.Outcome == Promoted {
		return cr.Candidate
	}
	return cr.Primary
}

// lastShipped is the canary that last left the router shipped (promoted,
// unchanged, first deploy) in any record — its own or a rollout's router
// step — newest first; nil when none is known.
func (c *run) lastShipped(ctx context.Context) *executor.CanaryRecord {
	recs, err := records(ctx, c.env.Store)
	if err != nil {
		return nil // unknown: ship
	}
	var out *executor.CanaryRecord
	for _, r := range recs {
		cr := r.Canary
		if cr == nil || cr.Inputs == "" || cr.Deployed == "" {
			continue
		}
		switch cr.Outcome {
		case Promoted, Unchanged, FirstDeploy:
		default:
			continue
		}
		if out == nil || cr.Finished.After(out.Finished) {
			out = cr
		}
	}
	// A discarded or reverted canary finished after it shipped nothing
	// new; the router it left must still match the one shipped before.
	return out
}
