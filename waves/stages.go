package waves

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/waves/signal"
)

// MaxDelay bounds a stage's delay, as MaxBake bounds a bake.
const MaxDelay = 24 * time.Hour

// The pipeline shape of a rollout, as the cell-architecture write-ups
// spell it:
//
//	stages:
//	  - name: canary
//	    cells: [cell-a]
//	    validation: {health_check: 5m, error_rate: "< 0.1%", latency_p99: "< 200ms"}
//	    rollback_on_failure: true
//	  - name: wave-1
//	    depends_on: canary
//	    delay: 10m
//	    cells: [cell-b]
//
// Each stage is a wave: validation.health_check is its bake,
// validation.error_rate and latency_p99 are its gate's error_rate_5xx and
// p99_latency_ms thresholds (any promote_if signal and min_requests may
// also be written there), rollback_on_failure picks on_breach
// (halt_and_rollback_wave or halt), delay is a wait before the stage
// starts. cellctl runs one stage after another in file order, so
// depends_on is checked to say exactly that: each stage depends on the one
// before it (or says nothing), the first on none. A file that means
// another order (a fan-out, a stage depending on a later one) is refused
// with the order it would have to be written in.

// stageKeys and validationKeys are what the pipeline shape allows.
var (
	stageKeys      = []string{"name", "cells", "validation", "rollback_on_failure", "depends_on", "delay", "max_parallel", "gate", "approve"}
	validationKeys = []string{"health_check", "error_rate", "latency_p99", "min_requests"}
	// validationSignals maps the pipeline shape's names to cellctl's
	// signals.
	validationSignals = map[string]signal.Name{"error_rate": signal.ErrorRate5xx, "latency_p99": signal.P99LatencyMs}
)

func parseStages(file string, n *yaml.Node, defBake time.Duration, base Gate, errs *diag.List) []Wave {
	if n.Kind != yaml.SequenceNode {
		errs.Add(file, n.Line, "stages", "must be a list of stages, got %s", diag.KindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		errs.Add(file, n.Line, "stages", "is empty: at least one stage is needed")
	}
	names := map[string]int{}
	var out []Wave
	for i, sn := range n.Content {
		w := parseStage(file, i, sn, defBake, base, names, errs)
		out = append(out, w)
	}
	checkStageOrder(file, out, errs)
	return out
}

func parseStage(file string, i int, sn *yaml.Node, defBake time.Duration, base Gate, names map[string]int, errs *diag.List) Wave {
	field := fmt.Sprintf("stages[%d]", i)
	w := Wave{Bake: defBake, Gate: base.clone(), Line: sn.Line}
	bakeLine, bakeField := sn.Line, field+".validation.health_check"
	var sawName, sawCells bool
	var validation, gateNode *yaml.Node
	for _, p := range diag.Pairs(file, field, sn, errs) {
		kf := field + "." + p.Key.Value
		switch p.Key.Value {
		case "name":
			sawName = true
			parseName(file, kf, "stage", p.Value, names, &w, errs)
		case "cells":
			sawCells = true
			parseCells(file, kf, "a stage", p.Value, &w, errs)
		case "validation":
			validation = p.Value
		case "gate":
			gateNode = p.Value
		case "rollback_on_failure":
			var v bool
			if p.Value.Kind != yaml.ScalarNode || p.Value.ShortTag() != "!!bool" || p.Value.Decode(&v) != nil {
				errs.Add(file, p.Value.Line, kf, "must be true (roll the stage's cells back on a failed validation, then halt) or false (halt and leave them for a human), got %s", diag.KindName(p.Value))
				continue
			}
			w.Gate.OnBreach = Halt
			if v {
				w.Gate.OnBreach = HaltAndRollbackWave
			}
		case "depends_on":
			w.dependsOn, w.dependsLine = parseDependsOn(file, kf, p.Value, errs)
		case "delay":
			if d, ok := parseDuration(file, kf, p.Value, errs); ok {
				if d < 0 || d > MaxDelay {
					errs.Add(file, p.Value.Line, kf, "must be between 0s and 24h, got %s", p.Value.Value)
					continue
				}
				w.Delay = d
			}
		case "max_parallel":
			parseParallel(file, kf, p.Value, &w, errs)
		case "approve":
			w.Approve = parseApprove(file, kf, p.Value, errs)
		case "bake":
			errs.Add(file, p.Key.Line, kf, "unknown key: a stage's bake is validation.health_check (allowed: %s)", strings.Join(stageKeys, ", "))
		default:
			errs.Add(file, p.Key.Line, kf, "unknown key (allowed: %s)", strings.Join(stageKeys, ", "))
		}
	}
	if gateNode != nil {
		w.Gate = parseGate(file, field+".gate", gateNode, w.Gate, errs)
	}
	if validation != nil {
		vf := field + ".validation"
		for _, p := range diag.Pairs(file, vf, validation, errs) {
			kf := vf + "." + p.Key.Value
			switch name := p.Key.Value; {
			case name == "health_check":
				if b, ok := parseBake(file, kf, p.Value, errs); ok {
					w.Bake, bakeLine, bakeField = b, p.Value.Line, kf
				}
			case name == "min_requests":
				parseMinRequests(file, kf, p.Value, &w.Gate, errs)
			default:
				sn, known := validationSignals[name]
				if !known {
					if _, ok := signal.Lookup(signal.Name(name)); ok {
						sn, known = signal.Name(name), true
					}
				}
				if !known {
					errs.Add(file, p.Key.Line, kf, "unknown check (allowed: %s, or a signal: %s)", strings.Join(validationKeys, ", "), strings.Join(signal.Names(), ", "))
					continue
				}
				setThreshold(file, kf, sn, p.Value, &w.Gate, errs)
			}
		}
	}
	checkBakeCoversPoll(file, bakeLine, bakeField, "stage", &w, errs)
	if sn.Kind == yaml.MappingNode {
		if !sawName {
			errs.Add(file, sn.Line, field+".name", "missing: every stage needs a name")
		}
		if !sawCells {
			errs.Add(file, sn.Line, field+".cells", "missing: every stage needs a list of cells")
		}
	}
	return w
}

// setThreshold reads one promote_if threshold into g (parseGate's
// promote_if entries and a stage's validation share it).
func setThreshold(file, field string, name signal.Name, n *yaml.Node, g *Gate, errs *diag.List) {
	sig := signal.MustLookup(name)
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		errs.Add(file, n.Line, field, "must be %s, got %s", sig.Describe, diag.KindName(n))
		return
	}
	th, err := sig.Parse(n.Value)
	if err != nil {
		errs.Add(file, n.Line, field, "%v", err)
		return
	}
	g.PromoteIf.Set(sig.Name, th)
	g.PromoteIfLines[sig.Name] = n.Line
}

// parseDependsOn reads depends_on: a stage name or a list of them.
func parseDependsOn(file, field string, n *yaml.Node, errs *diag.List) ([]string, int) {
	var out []string
	add := func(v *yaml.Node, f string) {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || v.Value == "" {
			errs.Add(file, v.Line, f, "must be a stage name, got %s", diag.KindName(v))
			return
		}
		out = append(out, v.Value)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		add(n, field)
	case yaml.SequenceNode:
		for j, v := range n.Content {
			add(v, fmt.Sprintf("%s[%d]", field, j))
		}
	default:
		errs.Add(file, n.Line, field, "must be a stage name or a list of them, got %s", diag.KindName(n))
	}
	return out, n.Line
}

// checkStageOrder holds depends_on to the order cellctl runs the stages
// in: one after another, as written.
func checkStageOrder(file string, stages []Wave, errs *diag.List) {
	index := map[string]int{}
	for i, s := range stages {
		if s.Name != "" {
			index[s.Name] = i
		}
	}
	for i, s := range stages {
		if s.dependsLine == 0 {
			continue // no depends_on: the stage runs after the one before it
		}
		field := fmt.Sprintf("stages[%d].depends_on", i)
		for _, d := range s.dependsOn {
			if _, ok := index[d]; !ok {
				errs.Add(file, s.dependsLine, field, "unknown stage %q (stages: %s)", d, strings.Join(stageNames(stages), ", "))
				return
			}
		}
		switch {
		case i == 0 && len(s.dependsOn) > 0:
			errs.Add(file, s.dependsLine, field, "the first stage runs first and can depend on no other stage; move stage %s after %s or drop its depends_on", s.Name, strings.Join(s.dependsOn, ", "))
		case i > 0 && (len(s.dependsOn) != 1 || s.dependsOn[0] != stages[i-1].Name):
			errs.Add(file, s.dependsLine, field, "stage %s depends on %s, but cellctl runs stages one at a time in the order written, each after the one before it: write depends_on: %s, or move the stage so the one it depends on comes just before it",
				s.Name, describeDeps(s.dependsOn), stages[i-1].Name)
		}
	}
}

func describeDeps(d []string) string {
	if len(d) == 0 {
		return "nothing"
	}
	return strings.Join(d, " and ")
}

func stageNames(stages []Wave) []string {
	var out []string
	for _, s := range stages {
		out = append(out, s.Name)
	}
	return out
}
