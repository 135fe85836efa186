// Package waves is the rollout plan of a fleet: which cells change together,
// in which order, how long each wave bakes, and which health gates must stay
// green before the next wave starts. It parses and validates
// stacks/waves.yaml; the executor that drives a rollout builds on this model.
package waves

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/diag"
)

// Gate names a health signal a wave must keep green while it bakes. Each
// gate reads one of the cell's CloudWatch alarms.
type Gate string

const (
	Gate5xxRate       Gate = "5xx-rate"
	GateP99Latency    Gate = "p99-latency"
	GateUnhealthyTask Gate = "unhealthy-tasks"
)

// AllGates is every gate, the default when waves.yaml names none.
var AllGates = []Gate{Gate5xxRate, GateP99Latency, GateUnhealthyTask}

// DefaultBake is how long a wave bakes when waves.yaml says nothing.
const DefaultBake = 10 * time.Minute

// MaxBake bounds a bake so a typo ("300h") cannot stall a rollout for weeks.
const MaxBake = 24 * time.Hour

// Plan is the ordered list of waves.
type Plan struct {
	File  string
	Waves []Wave
}

// Wave is a set of cells deployed together.
type Wave struct {
	Name string
	// Cells in the order they were listed.
	Cells []string
	Bake  time.Duration
	Gates []Gate
	// Parallel bounds how many cells of the wave change at once (0: all).
	Parallel int

	line      int
	cellLines []int
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Parse reads a waves.yaml document. Every problem in the file is reported
// at once; the plan is only returned when the file is entirely valid.
func Parse(file string, data []byte) (*Plan, error) {
	var errs diag.List
	root, err := diag.ParseYAML(file, data)
	if err != nil {
		return nil, err
	}
	plan := &Plan{File: file}
	defBake := DefaultBake
	defGates := AllGates
	var wavesNode *yaml.Node
	for _, p := range diag.Pairs(file, "", root, &errs) {
		switch p.Key.Value {
		case "defaults":
			for _, d := range diag.Pairs(file, "defaults", p.Value, &errs) {
				switch d.Key.Value {
				case "bake":
					if b, ok := parseBake(file, "defaults.bake", d.Value, &errs); ok {
						defBake = b
					}
				case "gates":
					if g, ok := parseGates(file, "defaults.gates", d.Value, &errs); ok {
						defGates = g
					}
				default:
					errs.Add(file, d.Key.Line, "defaults."+d.Key.Value, "unknown key (allowed: bake, gates)")
				}
			}
		case "waves":
			wavesNode = p.Value
		default:
			errs.Add(file, p.Key.Line, p.Key.Value, "unknown key (allowed: defaults, waves)")
		}
	}
	if wavesNode == nil {
		errs.Add(file, root.Line, "waves", "missing: list the waves in rollout order, e.g. waves: [{name: canary, cells: [cell-a]}]")
		return nil, errs.Err()
	}
	if wavesNode.Kind != yaml.SequenceNode {
		errs.Add(file, wavesNode.Line, "waves", "must be a list of waves, got %s", diag.KindName(wavesNode))
		return nil, errs.Err()
	}
	if len(wavesNode.Content) == 0 {
		errs.Add(file, wavesNode.Line, "waves", "is empty: at least one wave is needed")
	}
	names := map[string]int{}
	for i, wn := range wavesNode.Content {
		field := fmt.Sprintf("waves[%d]", i)
		w := Wave{Bake: defBake, Gates: defGates, line: wn.Line}
		var sawName, sawCells bool
		for _, p := range diag.Pairs(file, field, wn, &errs) {
			kf := field + "." + p.Key.Value
			switch p.Key.Value {
			case "name":
				sawName = true
				if p.Value.Kind != yaml.ScalarNode || !namePattern.MatchString(p.Value.Value) {
					errs.Add(file, p.Value.Line, kf, "must be a name of lowercase letters, digits and hyphens (1–63), got %s", diag.KindName(p.Value))
					continue
				}
				if first, dup := names[p.Value.Value]; dup {
					errs.Add(file, p.Value.Line, kf, "duplicate wave name %q (first used on line %d)", p.Value.Value, first)
					continue
				}
				names[p.Value.Value] = p.Value.Line
				w.Name = p.Value.Value
			case "cells":
				sawCells = true
				if p.Value.Kind != yaml.SequenceNode {
					errs.Add(file, p.Value.Line, kf, "must be a list of cell ids, got %s", diag.KindName(p.Value))
					continue
				}
				if len(p.Value.Content) == 0 {
					errs.Add(file, p.Value.Line, kf, "is empty: a wave needs at least one cell")
				}
				for j, cn := range p.Value.Content {
					if cn.Kind != yaml.ScalarNode || cn.ShortTag() != "!!str" || cn.Value == "" {
						errs.Add(file, cn.Line, fmt.Sprintf("%s[%d]", kf, j), "must be a cell id, got %s", diag.KindName(cn))
						continue
					}
					w.Cells = append(w.Cells, cn.Value)
					w.cellLines = append(w.cellLines, cn.Line)
				}
			case "bake":
				if b, ok := parseBake(file, kf, p.Value, &errs); ok {
					w.Bake = b
				}
			case "gates":
				if g, ok := parseGates(file, kf, p.Value, &errs); ok {
					w.Gates = g
				}
			case "parallel":
				var n int
				if p.Value.Kind != yaml.ScalarNode || p.Value.ShortTag() != "!!int" || p.Value.Decode(&n) != nil || n < 0 {
					errs.Add(file, p.Value.Line, kf, "must be a whole number ≥ 0 (0 means every cell of the wave at once), got %s", diag.KindName(p.Value))
					continue
				}
				w.Parallel = n
			default:
				errs.Add(file, p.Key.Line, kf, "unknown key (allowed: name, cells, bake, gates, parallel)")
			}
		}
		if wn.Kind == yaml.MappingNode {
			if !sawName {
				errs.Add(file, wn.Line, field+".name", "missing: every wave needs a name")
			}
			if !sawCells {
				errs.Add(file, wn.Line, field+".cells", "missing: every wave needs a list of cells")
			}
		}
		plan.Waves = append(plan.Waves, w)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return plan, nil
}

func parseBake(file, field string, n *yaml.Node, errs *diag.List) (time.Duration, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		errs.Add(file, n.Line, field, "must be a duration such as \"30s\", \"10m\" or \"1h30m\", got %s", diag.KindName(n))
		return 0, false
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		errs.Add(file, n.Line, field, "cannot parse duration %q: use a number with a unit (s, m, h), e.g. \"10m\"", n.Value)
		return 0, false
	}
	if d < 0 || d > MaxBake {
		errs.Add(file, n.Line, field, "must be between 0s and %s, got %s", "24h", n.Value)
		return 0, false
	}
	return d, true
}

func parseGates(file, field string, n *yaml.Node, errs *diag.List) ([]Gate, bool) {
	allowed := make([]string, len(AllGates))
	for i, g := range AllGates {
		allowed[i] = string(g)
	}
	if n.Kind != yaml.SequenceNode {
		errs.Add(file, n.Line, field, "must be a list of gates (%s), got %s", diag.Quote(allowed), diag.KindName(n))
		return nil, false
	}
	ok := true
	seen := map[Gate]bool{}
	gates := []Gate{}
	for i, gn := range n.Content {
		g := Gate(gn.Value)
		valid := gn.Kind == yaml.ScalarNode && contains(allowed, gn.Value)
		if !valid {
			errs.Add(file, gn.Line, fmt.Sprintf("%s[%d]", field, i), "unknown gate %q (allowed: %s)", gn.Value, diag.Quote(allowed))
			ok = false
			continue
		}
		if seen[g] {
			errs.Add(file, gn.Line, fmt.Sprintf("%s[%d]", field, i), "gate %q listed twice", gn.Value)
			ok = false
			continue
		}
		seen[g] = true
		gates = append(gates, g)
	}
	return gates, ok
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Validate checks the plan against the fleet's cells: every wave names only
// known cells, and every cell is in exactly one wave.
func (p *Plan) Validate(cells []string) error {
	var errs diag.List
	known := map[string]bool{}
	for _, c := range cells {
		known[c] = true
	}
	sorted := append([]string(nil), cells...)
	sort.Strings(sorted)
	knownList := strings.Join(sorted, ", ")
	if knownList == "" {
		knownList = "none yet"
	}
	type place struct {
		wave string
		line int
	}
	placed := map[string]place{}
	for i, w := range p.Waves {
		for j, c := range w.Cells {
			field := fmt.Sprintf("waves[%d].cells[%d]", i, j)
			line := 0
			if j < len(w.cellLines) {
				line = w.cellLines[j]
			}
			if !known[c] {
				errs.Add(p.File, line, field, "unknown cell %q (cells of this fleet: %s)", c, knownList)
				continue
			}
			if prev, dup := placed[c]; dup {
				if prev.wave == w.Name {
					errs.Add(p.File, line, field, "cell %q is listed twice in wave %q", c, w.Name)
				} else {
					errs.Add(p.File, line, field, "cell %q is already in wave %q (line %d): every cell belongs to exactly one wave", c, prev.wave, prev.line)
				}
				continue
			}
			placed[c] = place{wave: w.Name, line: line}
		}
	}
	for _, c := range sorted {
		if _, ok := placed[c]; !ok {
			errs.Add(p.File, 0, "waves", "cell %q is in no wave: add it to one so deploys reach it", c)
		}
	}
	return errs.Err()
}

// WaveOf returns the index of the wave holding cell, or -1.
func (p *Plan) WaveOf(cell string) int {
	for i, w := range p.Waves {
		for _, c := range w.Cells {
			if c == cell {
				return i
			}
		}
	}
	return -1
}
