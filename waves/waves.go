// Package waves is the rollout plan of a fleet: which cells change together,
// in which order, how long each wave bakes, and the health gate a wave must
// pass before the next one starts. It parses and validates stacks/waves.yaml;
// the executor that drives a rollout builds on this model, the gate
// evaluator (waves/gate) checks it, and the signals it names are defined once
// in waves/signal.
//
// Two shapes of waves.yaml are accepted, and may be mixed:
//
//	defaults: {bake: 10m, gates: [5xx-rate, p99-latency, unhealthy-tasks]}
//	waves:
//	  - {name: canary, cells: [cell-a], bake: 30m, parallel: 1}
//
// and the shape operators write for Argo Rollouts or CodeDeploy:
//
//	waves:
//	  - {name: canary, cells: [cell-a], bake: 30m}
//	  - {name: wave-2, cells: [cell-c, cell-d], max_parallel: 1}
//	gate:
//	  promote_if: {error_rate_5xx: "< 0.5%", p99_latency_ms: "< 400"}
//	  min_requests: 100
//	  poll: 30s
//	  on_breach: halt_and_rollback_wave
//	  on_inconclusive: halt
//
// A wave's own `gate:` overrides the fleet gate field by field (and
// promote_if signal by signal).
package waves

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/waves/signal"
)

// DefaultBake is how long a wave bakes when waves.yaml says nothing.
const DefaultBake = 10 * time.Minute

// MaxBake bounds a bake so a typo ("300h") cannot stall a rollout for weeks.
const MaxBake = 24 * time.Hour

// MinBake is the shortest bake the gate can judge: one metric period (the
// gate reads CloudWatch in whole minutes). A shorter bake reads an empty
// window (GetMetricData refuses StartTime = EndTime), so a good release
// would be breached and rolled back; a bake must also cover one poll.
const MinBake = time.Minute

// Gate defaults and bounds.
const (
	DefaultPoll        = 30 * time.Second
	MinPoll            = time.Second
	MaxPoll            = time.Hour
	DefaultMinRequests = 100
	MaxMinRequests     = 1_000_000_000
)

// BreachPolicy is what a rollout does when a wave's gate breaches.
type BreachPolicy string

const (
	// HaltAndRollbackWave redeploys the breached wave's cells with the
	// configuration they ran before the wave, then halts.
	HaltAndRollbackWave BreachPolicy = "halt_and_rollback_wave"
	// Halt stops the rollout and leaves the wave as it is, for a human.
	Halt BreachPolicy = "halt"
)

// InconclusivePolicy is what a rollout does when a wave saw too little
// traffic to judge.
type InconclusivePolicy string

const (
	InconclusiveHalt    InconclusivePolicy = "halt"
	InconclusivePromote InconclusivePolicy = "promote"
)

// Decision is the gate's judgement — of one reading, one cell's poll, or a
// whole bake — and the one verdict vocabulary of every gated change (a
// wave, a router canary phase, a rotation step).
type Decision string

const (
	Pass         Decision = "pass"
	Breached     Decision = "breach"
	Inconclusive Decision = "inconclusive"
)

var (
	breachPolicies       = []string{string(HaltAndRollbackWave), string(Halt)}
	inconclusivePolicies = []string{string(InconclusiveHalt), string(InconclusivePromote)}
)

// Gate is what a wave must pass while it bakes.
type Gate struct {
	// PromoteIf holds the thresholds waves.yaml sets; unset signals keep the
	// cell's own thresholds (see spec.Cell.Thresholds). The fleet loader
	// hands these to each cell's spec so its alarms use the same values.
	PromoteIf signal.Thresholds
	// PromoteIfLines is the waves.yaml line of each PromoteIf entry.
	PromoteIfLines map[signal.Name]int
	// Signals are the signals the gate checks, in signal.All order.
	Signals []signal.Name
	// MinRequests is the least traffic a bake must see to be judged: fewer
	// requests is inconclusive, never a pass.
	MinRequests    int
	Poll           time.Duration
	OnBreach       BreachPolicy
	OnInconclusive InconclusivePolicy
}

// DefaultGate is the gate of a fleet whose waves.yaml has none.
func DefaultGate() Gate {
	return Gate{
		PromoteIfLines: map[signal.Name]int{},
		Signals:        allSignals(),
		MinRequests:    DefaultMinRequests,
		Poll:           DefaultPoll,
		OnBreach:       HaltAndRollbackWave,
		OnInconclusive: InconclusiveHalt,
	}
}

func allSignals() []signal.Name {
	out := make([]signal.Name, len(signal.All))
	for i, s := range signal.All {
		out[i] = s.Name
	}
	return out
}

func (g Gate) clone() Gate {
	c := g
	c.PromoteIfLines = map[signal.Name]int{}
	for k, v := range g.PromoteIfLines {
		c.PromoteIfLines[k] = v
	}
	c.Signals = append([]signal.Name(nil), g.Signals...)
	return c
}

// Describe says the gate in words: its thresholds (a signal waves.yaml
// leaves unset is judged by each cell's own alarm threshold) and the least
// traffic it judges ("error_rate_5xx < 0.5%, p99_latency_ms (the cell's
// threshold), min 100 requests").
func (g Gate) Describe() string {
	var parts []string
	for _, s := range signal.All {
		if !g.Checks(s.Name) {
			continue
		}
		if t := g.PromoteIf.Get(s.Name); t.IsSet() {
			parts = append(parts, string(s.Name)+" "+s.Format(t))
		} else {
			parts = append(parts, string(s.Name)+" (the cell's threshold)")
		}
	}
	parts = append(parts, fmt.Sprintf("min %d requests", g.MinRequests))
	return strings.Join(parts, ", ")
}

// Checks reports whether the gate checks a signal.
func (g Gate) Checks(n signal.Name) bool {
	for _, s := range g.Signals {
		if s == n {
			return true
		}
	}
	return false
}

// Plan is the ordered list of waves.
type Plan struct {
	File string
	// Gate is the fleet gate (waves.yaml's top-level gate over the defaults).
	Gate  Gate
	Waves []Wave
	// listKey is the file's key of the list: "waves", or "stages" for the
	// pipeline shape (so problems name the file's own fields).
	listKey string
}

// Scaled is a copy of the plan with every wait it holds multiplied by f —
// each wave's bake, gate poll and delay (a rehearsal's --bake-scale) — so
// a dry run's estimate and the run agree; a wait never drops below a
// second (a bake must still cover one poll). p is left as it is; f <= 0
// or 1 returns p.
func (p *Plan) Scaled(f float64) *Plan {
	if f <= 0 || f == 1 {
		return p
	}
	cp := *p
	cp.Waves = append([]Wave(nil), p.Waves...)
	for i := range cp.Waves {
		w := &cp.Waves[i]
		w.Bake, w.Gate.Poll, w.Delay = scaled(w.Bake, f), scaled(w.Gate.Poll, f), scaled(w.Delay, f)
	}
	return &cp
}

func scaled(d time.Duration, f float64) time.Duration {
	if d <= 0 {
		return d
	}
	return max(time.Duration(float64(d)*f), time.Second)
}

// Wave is a set of cells deployed together.
type Wave struct {
	Name string
	// Cells in the order they were listed.
	Cells []string
	Bake  time.Duration
	// Parallel bounds how many cells of the wave change at once (0: all).
	// waves.yaml spells it max_parallel (or parallel).
	Parallel int
	// Gate is the fleet gate with this wave's overrides applied.
	Gate Gate
	// Delay is a wait before the wave starts (the pipeline shape's
	// `delay`): the rollout holds for it after the previous wave passed.
	Delay time.Duration
	// Approve holds the wave until an operator approves it (`cellctl
	// rollout approve ID`, from a terminal or CI's promote job): none of
	// its cells changes before. waves.yaml spells it approve: true.
	Approve bool
	// Line is where the wave starts in waves.yaml.
	Line int

	cellLines []int
	// The pipeline shape's depends_on, checked against the order;
	// dependsLine is 0 when the stage has none.
	dependsOn   []string
	dependsLine int
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Parse reads a waves.yaml document. Every problem in the file is reported
// at once; the plan is only returned when the file is entirely valid.
func Parse(file string, data []byte) (*Plan, error) {
	var errs diag.List
	root, err := diag.ParseYAML(file, data)
	if err != nil {
		return nil, hintUnquoted(data, err)
	}
	plan := &Plan{File: file}
	defBake := DefaultBake
	defBakeLine, defBakeField := 0, ""
	base := DefaultGate()
	var wavesNode, gateNode, stagesNode *yaml.Node
	stagesLine := 0
	for _, p := range diag.Pairs(file, "", root, &errs) {
		switch p.Key.Value {
		case "defaults":
			for _, d := range diag.Pairs(file, "defaults", p.Value, &errs) {
				switch d.Key.Value {
				case "bake":
					if b, ok := parseBake(file, "defaults.bake", d.Value, &errs); ok {
						defBake, defBakeLine, defBakeField = b, d.Value.Line, "defaults.bake"
					}
				case "gates":
					if g, ok := parseGates(file, "defaults.gates", d.Value, &errs); ok {
						base.Signals = g
					}
				default:
					errs.Add(file, d.Key.Line, "defaults."+d.Key.Value, "unknown key (allowed: bake, gates)")
				}
			}
		case "gate":
			gateNode = p.Value
		case "waves":
			wavesNode = p.Value
		case "stages":
			stagesNode, stagesLine = p.Value, p.Key.Line
		default:
			errs.Add(file, p.Key.Line, p.Key.Value, "unknown key (allowed: defaults, gate, waves, stages)")
		}
	}
	if gateNode != nil {
		base = parseGate(file, "gate", gateNode, base, &errs)
	}
	plan.Gate = base
	if stagesNode != nil {
		if wavesNode != nil {
			errs.Add(file, stagesLine, "stages", "set together with waves: write the rollout once, as waves (cellctl's shape) or as stages (the pipeline shape)")
			return nil, errs.Err()
		}
		plan.Waves, plan.listKey = parseStages(file, stagesNode, defBake, base, &errs), "stages"
		if err := errs.Err(); err != nil {
			return nil, err
		}
		return plan, nil
	}
	if wavesNode == nil {
		errs.Add(file, root.Line, "waves", "missing: list the waves in rollout order, e.g. waves: [{name: canary, cells: [cell-a]}] (or the pipeline shape, stages:)")
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
		w := Wave{Bake: defBake, Gate: base.clone(), Line: wn.Line}
		bakeLine, bakeField := defBakeLine, defBakeField
		var sawName, sawCells bool
		var parallelKey string
		var gatesNode, waveGateNode *yaml.Node
		for _, p := range diag.Pairs(file, field, wn, &errs) {
			kf := field + "." + p.Key.Value
			switch p.Key.Value {
			case "name":
				sawName = true
				parseName(file, kf, "wave", p.Value, names, &w, &errs)
			case "cells":
				sawCells = true
				parseCells(file, kf, "a wave", p.Value, &w, &errs)
			case "bake":
				if b, ok := parseBake(file, kf, p.Value, &errs); ok {
					w.Bake, bakeLine, bakeField = b, p.Value.Line, kf
				}
			case "gates":
				gatesNode = p.Value
			case "gate":
				waveGateNode = p.Value
			case "approve":
				w.Approve = parseApprove(file, kf, p.Value, &errs)
			case "parallel", "max_parallel":
				if parallelKey != "" {
					errs.Add(file, p.Key.Line, kf, "set together with %s.%s: they are the same setting, keep max_parallel", field, parallelKey)
					continue
				}
				parallelKey = p.Key.Value
				parseParallel(file, kf, p.Value, &w, &errs)
			default:
				errs.Add(file, p.Key.Line, kf, "unknown key (allowed: name, cells, bake, gate, gates, max_parallel, parallel, approve)")
			}
		}
		if gatesNode != nil {
			if g, ok := parseGates(file, field+".gates", gatesNode, &errs); ok {
				w.Gate.Signals = g
			}
		}
		if waveGateNode != nil {
			w.Gate = parseGate(file, field+".gate", waveGateNode, w.Gate, &errs)
		}
		if bakeField == "" {
			bakeLine, bakeField = wn.Line, field+".bake"
		}
		checkBakeCoversPoll(file, bakeLine, bakeField, "wave", &w, &errs)
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

// parseName reads a wave's (or stage's) name, unique among names.
func parseName(file, field, what string, n *yaml.Node, names map[string]int, w *Wave, errs *diag.List) {
	if n.Kind != yaml.ScalarNode || !namePattern.MatchString(n.Value) {
		errs.Add(file, n.Line, field, "must be a name of lowercase letters, digits and hyphens (1–63), got %s", diag.KindName(n))
		return
	}
	if first, dup := names[n.Value]; dup {
		errs.Add(file, n.Line, field, "duplicate %s name %q (first used on line %d)", what, n.Value, first)
		return
	}
	names[n.Value] = n.Line
	w.Name = n.Value
}

// parseCells reads the list of cell ids a wave (or stage) changes.
func parseCells(file, field, what string, n *yaml.Node, w *Wave, errs *diag.List) {
	if n.Kind != yaml.SequenceNode {
		errs.Add(file, n.Line, field, "must be a list of cell ids, got %s", diag.KindName(n))
		return
	}
	if len(n.Content) == 0 {
		errs.Add(file, n.Line, field, "is empty: %s needs at least one cell", what)
	}
	for j, cn := range n.Content {
		if cn.Kind != yaml.ScalarNode || cn.ShortTag() != "!!str" || cn.Value == "" {
			errs.Add(file, cn.Line, fmt.Sprintf("%s[%d]", field, j), "must be a cell id, got %s", diag.KindName(cn))
			continue
		}
		w.Cells = append(w.Cells, cn.Value)
		w.cellLines = append(w.cellLines, cn.Line)
	}
}

// parseParallel reads max_parallel.
func parseParallel(file, field string, n *yaml.Node, w *Wave, errs *diag.List) {
	if v, ok := parseCount(file, field, n, math.MaxInt, "", "0 means every cell of the wave at once", errs); ok {
		w.Parallel = v
	}
}

// parseCount reads a whole number from 0 to max written in decimal; unit
// ("of requests") and why go into the message.
func parseCount(file, field string, n *yaml.Node, max int, unit, why string, errs *diag.List) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil || v < 0 || v > max {
		errs.Add(file, n.Line, field, "must be a whole number%s ≥ 0 (%s), got %s", unit, why, diag.KindName(n))
		return 0, false
	}
	if !diag.DecimalInt.MatchString(n.Value) {
		errs.Add(file, n.Line, field, "must be a whole number%s ≥ 0, %s, got %s", unit, diag.DecimalHint, diag.Echo(n.Value))
		return 0, false
	}
	return v, true
}

// checkBakeCoversPoll: the gate polls every Poll, so a shorter bake ends
// before its first reading.
func checkBakeCoversPoll(file string, line int, field, what string, w *Wave, errs *diag.List) {
	if w.Bake < w.Gate.Poll {
		errs.Add(file, line, field, "%s is shorter than the gate's poll (%s) of %s %s: a bake must cover at least one poll", w.Bake, w.Gate.Poll, what, w.Name)
	}
}

var unquotedCondition = regexp.MustCompile(`:\s*>=?\s*[0-9]`)

// hintUnquoted explains the one YAML error a gate invites: an unquoted
// ">= 2" starts a folded block scalar, and yaml.v3's message says nothing
// about why.
func hintUnquoted(data []byte, err error) error {
	e, ok := err.(*diag.Error)
	if !ok || e.Line < 1 {
		return err
	}
	lines := strings.Split(string(data), "\n")
	if e.Line > len(lines) || !unquotedCondition.MatchString(lines[e.Line-1]) {
		return err
	}
	h := *e
	h.Msg += `: a condition starting with ">" must be quoted, e.g. healthy_tasks: ">= 2"`
	return &h
}

// parseGate reads a gate mapping over base: what it sets replaces base's.
func parseGate(file, field string, n *yaml.Node, base Gate, errs *diag.List) Gate {
	g := base.clone()
	for _, p := range diag.Pairs(file, field, n, errs) {
		kf := field + "." + p.Key.Value
		switch p.Key.Value {
		case "promote_if":
			for _, e := range diag.Pairs(file, kf, p.Value, errs) {
				ef := kf + "." + e.Key.Value
				sig, ok := signal.Lookup(signal.Name(e.Key.Value))
				if !ok {
					errs.Add(file, e.Key.Line, ef, "unknown signal (allowed: %s)", strings.Join(signal.Names(), ", "))
					continue
				}
				setThreshold(file, ef, sig.Name, e.Value, &g, errs)
			}
		case "min_requests":
			parseMinRequests(file, kf, p.Value, &g, errs)
		case "poll":
			d, ok := parseDuration(file, kf, p.Value, errs)
			if !ok {
				continue
			}
			if d < MinPoll || d > MaxPoll {
				errs.Add(file, p.Value.Line, kf, "must be between 1s and 1h, got %s", p.Value.Value)
				continue
			}
			g.Poll = d
		case "on_breach":
			if p.Value.Kind != yaml.ScalarNode || !contains(breachPolicies, p.Value.Value) {
				errs.Add(file, p.Value.Line, kf, "must be %s, got %s", diag.Quote(breachPolicies), diag.KindName(p.Value))
				continue
			}
			g.OnBreach = BreachPolicy(p.Value.Value)
		case "on_inconclusive":
			if p.Value.Kind != yaml.ScalarNode || !contains(inconclusivePolicies, p.Value.Value) {
				errs.Add(file, p.Value.Line, kf, "must be %s, got %s", diag.Quote(inconclusivePolicies), diag.KindName(p.Value))
				continue
			}
			g.OnInconclusive = InconclusivePolicy(p.Value.Value)
		default:
			errs.Add(file, p.Key.Line, kf, "unknown key (allowed: promote_if, min_requests, poll, on_breach, on_inconclusive)")
		}
	}
	return g
}

// parseApprove reads a wave's approve: true or false.
func parseApprove(file, field string, n *yaml.Node, errs *diag.List) bool {
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		errs.Add(file, n.Line, field, "must be true (the wave waits for `cellctl rollout approve` before its cells change) or false, got %s", diag.KindName(n))
		return false
	}
	return v
}

// parseMinRequests reads min_requests into g.
func parseMinRequests(file, field string, n *yaml.Node, g *Gate, errs *diag.List) {
	if v, ok := parseCount(file, field, n, MaxMinRequests, " of requests", "fewer requests in a bake is inconclusive", errs); ok {
		g.MinRequests = v
	}
}

func parseDuration(file, field string, n *yaml.Node, errs *diag.List) (time.Duration, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		errs.Add(file, n.Line, field, "must be a duration such as \"30s\", \"10m\" or \"1h30m\", got %s", diag.KindName(n))
		return 0, false
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		errs.Add(file, n.Line, field, "cannot parse duration %q: use a number with a unit (s, m, h), e.g. \"10m\"", n.Value)
		return 0, false
	}
	return d, true
}

func parseBake(file, field string, n *yaml.Node, errs *diag.List) (time.Duration, bool) {
	d, ok := parseDuration(file, field, n, errs)
	if !ok {
		return 0, false
	}
	if d < MinBake || d > MaxBake {
		errs.Add(file, n.Line, field, "must be between %s and %s (a bake must cover at least one metric period and one poll), got %s", "1m", "24h", n.Value)
		return 0, false
	}
	return d, true
}

// parseGates reads the older list form, `gates: [5xx-rate, p99-latency]`:
// which signals a wave checks.
func parseGates(file, field string, n *yaml.Node, errs *diag.List) ([]signal.Name, bool) {
	allowed := signal.LegacyNames()
	if n.Kind != yaml.SequenceNode {
		errs.Add(file, n.Line, field, "must be a list of gates (%s), got %s", diag.Quote(allowed), diag.KindName(n))
		return nil, false
	}
	ok := true
	seen := map[string]bool{}
	chosen := map[signal.Name]bool{}
	for i, gn := range n.Content {
		valid := gn.Kind == yaml.ScalarNode && contains(allowed, gn.Value)
		if !valid {
			errs.Add(file, gn.Line, fmt.Sprintf("%s[%d]", field, i), "unknown gate %q (allowed: %s)", gn.Value, diag.Quote(allowed))
			ok = false
			continue
		}
		if seen[gn.Value] {
			errs.Add(file, gn.Line, fmt.Sprintf("%s[%d]", field, i), "gate %q listed twice", gn.Value)
			ok = false
			continue
		}
		seen[gn.Value] = true
		for _, s := range signal.ByLegacy(gn.Value) {
			chosen[s] = true
		}
	}
	out := []signal.Name{}
	for _, s := range signal.All {
		if chosen[s.Name] {
			out = append(out, s.Name)
		}
	}
	return out, ok
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
			field := fmt.Sprintf("%s[%d].cells[%d]", p.key(), i, j)
			line := w.CellLine(j)
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
			errs.Add(p.File, 0, p.key(), "cell %q is in no wave: add it to one so deploys reach it", c)
		}
	}
	return errs.Err()
}

func (p *Plan) key() string {
	if p.listKey == "" {
		return "waves"
	}
	return p.listKey
}

// CellLine is the waves.yaml line of the wave's j-th cell (0 when unknown).
func (w *Wave) CellLine(j int) int {
	if j < len(w.cellLines) {
		return w.cellLines[j]
	}
	return 0
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

// Index returns the index of the wave with that name, or -1.
func (p *Plan) Index(name string) int {
	for i, w := range p.Waves {
		if w.Name == name {
			return i
		}
	}
	return -1
}
