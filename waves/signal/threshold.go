package signal

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Op is the comparison of a promote_if threshold: the condition a healthy
// reading meets.
type Op string

const (
	Below   Op = "<"
	AtMost  Op = "<="
	Above   Op = ">"
	AtLeast Op = ">="
)

// Threshold is a promote_if condition: a reading passes when
// `reading Op Value` holds. Value is in the signal's Unit (percent,
// milliseconds, tasks). The zero Threshold is "not set".
type Threshold struct {
	Op    Op      `json:"op"`
	Value float64 `json:"value"`
}

// IsSet reports whether the threshold was given.
func (t Threshold) IsSet() bool { return t.Op != "" }

// Passes reports whether a reading meets the condition. An unset threshold
// passes nothing: a gate must never promote on a condition nobody wrote.
func (t Threshold) Passes(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	switch t.Op {
	case Below:
		return v < t.Value
	case AtMost:
		return v <= t.Value
	case Above:
		return v > t.Value
	case AtLeast:
		return v >= t.Value
	}
	return false
}

// AlarmComparison is the CloudWatch ComparisonOperator of an alarm that
// fires exactly when a reading fails this threshold.
func (t Threshold) AlarmComparison() string {
	switch t.Op {
	case Below:
		return "GreaterThanOrEqualToThreshold"
	case AtMost:
		return "GreaterThanThreshold"
	case Above:
		return "LessThanOrEqualToThreshold"
	case AtLeast:
		return "LessThanThreshold"
	}
	return ""
}

// AlarmThreshold is the threshold in the unit CloudWatch measures the
// alarm's metric in: TargetResponseTime is in seconds, the rest as is.
func (s Signal) AlarmThreshold(t Threshold) float64 {
	if s.Unit == Milliseconds {
		return t.Value / 1000
	}
	return t.Value
}

// Format renders a threshold the way waves.yaml writes it: "< 0.5%".
func (s Signal) Format(t Threshold) string {
	if !t.IsSet() {
		return "unset"
	}
	return string(t.Op) + " " + s.FormatValue(t.Value)
}

// FormatValue renders a reading or threshold value with its unit.
func (s Signal) FormatValue(v float64) string {
	n := strconv.FormatFloat(v, 'f', -1, 64)
	switch s.Unit {
	case Percent:
		// Readings are ratios: show at most three decimals, and no float
		// noise (0.7000000000000001).
		r := math.Round(v*1000) / 1000
		n = strconv.FormatFloat(r, 'f', -1, 64)
		if math.Abs(v-r) > 1e-9 {
			n = strconv.FormatFloat(v, 'f', 3, 64)
		}
		return n + "%"
	case Milliseconds:
		if v != math.Trunc(v) {
			n = strconv.FormatFloat(v, 'f', 1, 64)
		}
		return n + "ms"
	case Tasks:
		if v == 1 {
			return n + " task"
		}
		return n + " tasks"
	case Errors:
		if v == 1 {
			return n + " error"
		}
		return n + " errors"
	}
	return n
}

var thresholdPattern = regexp.MustCompile(`^\s*(<=|>=|<|>)?\s*([+-]?[0-9]*\.?[0-9]+)\s*([a-z%]*)\s*$`)

// Parse reads a promote_if threshold such as "< 0.5%", "<= 400", "< 1.5s"
// or ">= 2". The error says what the signal allows; it carries no position
// (the caller knows the file and line).
func (s Signal) Parse(text string) (Threshold, error) {
	m := thresholdPattern.FindStringSubmatch(text)
	if m == nil {
		return Threshold{}, fmt.Errorf("cannot read %q: must be %s", text, s.Describe)
	}
	op, num, unit := Op(m[1]), m[2], m[3]
	if op == "" {
		return Threshold{}, fmt.Errorf("%q has no comparison: write the condition a healthy cell meets, %s", text, s.Describe)
	}
	if (s.Bound == Upper) != (op == Below || op == AtMost) {
		want := `"<" or "<="`
		if s.Bound == Lower {
			want = `">" or ">="`
		}
		return Threshold{}, fmt.Errorf("%q compares the wrong way: %s is healthy when %s the threshold, use %s", text, s.Name, map[Bound]string{Upper: "below", Lower: "above"}[s.Bound], want)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Threshold{}, fmt.Errorf("cannot read %q: must be %s", text, s.Describe)
	}
	switch s.Unit {
	case Percent:
		if unit != "%" {
			return Threshold{}, fmt.Errorf("%q needs the unit %%: must be %s", text, s.Describe)
		}
	case Milliseconds:
		switch unit {
		case "", "ms":
		case "s":
			v *= 1000
		default:
			return Threshold{}, fmt.Errorf("%q: unknown unit %q (allowed: ms, s; a bare number is milliseconds)", text, unit)
		}
	case Errors:
		if unit != "" && unit != "error" && unit != "errors" {
			return Threshold{}, fmt.Errorf("%q: unknown unit %q: must be %s", text, unit, s.Describe)
		}
		if v != math.Trunc(v) {
			return Threshold{}, fmt.Errorf("%q: must be %s", text, s.Describe)
		}
	case Tasks:
		if unit != "" && unit != "task" && unit != "tasks" {
			return Threshold{}, fmt.Errorf("%q: unknown unit %q: must be %s", text, unit, s.Describe)
		}
		if v != math.Trunc(v) {
			return Threshold{}, fmt.Errorf("%q: must be %s", text, s.Describe)
		}
	}
	if v < s.Min || v > s.Max {
		return Threshold{}, fmt.Errorf("%q is out of range: must be %s", text, s.Describe)
	}
	t := Threshold{Op: op, Value: v}
	if !s.Satisfiable(t) {
		return Threshold{}, fmt.Errorf("%q can never pass: no reading of %s is %s %s", text, s.Name, op, s.FormatValue(v))
	}
	return t, nil
}

// Satisfiable reports whether some valid reading passes t (a "< 0%" error
// rate would halt every rollout).
func (s Signal) Satisfiable(t Threshold) bool {
	switch t.Op {
	case Below:
		return t.Value > 0
	case Above:
		return s.Unit != Percent || t.Value < 100
	}
	return true
}

// Thresholds holds one threshold per signal; an unset entry is the zero
// Threshold. It is a plain comparable struct so the cell spec holding it
// stays comparable.
type Thresholds struct {
	ErrorRate5xx   Threshold `json:"error_rate_5xx"`
	P99LatencyMs   Threshold `json:"p99_latency_ms"`
	UnhealthyTasks Threshold `json:"unhealthy_tasks"`
	HealthyTasks   Threshold `json:"healthy_tasks"`
	// The edge signals (edge.go) are judged only by a router canary; a
	// cell never sets them, so they are omitted from its JSON.
	EdgeErrorRate5xx   Threshold `json:"edge_error_rate_5xx,omitzero"`
	EdgeFunctionErrors Threshold `json:"edge_function_errors,omitzero"`
}

func (t *Thresholds) field(n Name) *Threshold {
	switch n {
	case ErrorRate5xx:
		return &t.ErrorRate5xx
	case P99LatencyMs:
		return &t.P99LatencyMs
	case UnhealthyTasks:
		return &t.UnhealthyTasks
	case HealthyTasks:
		return &t.HealthyTasks
	case EdgeErrorRate5xx:
		return &t.EdgeErrorRate5xx
	case EdgeFunctionErrors:
		return &t.EdgeFunctionErrors
	}
	return nil
}

// Get returns the threshold of a signal (unset when absent or unknown).
func (t Thresholds) Get(n Name) Threshold {
	if f := t.field(n); f != nil {
		return *f
	}
	return Threshold{}
}

// Set stores the threshold of a signal; unknown names are ignored.
func (t *Thresholds) Set(n Name, th Threshold) {
	if f := t.field(n); f != nil {
		*f = th
	}
}

// Merge returns t with every threshold set in over replacing t's.
func (t Thresholds) Merge(over Thresholds) Thresholds {
	for _, s := range All {
		if o := over.Get(s.Name); o.IsSet() {
			t.Set(s.Name, o)
		}
	}
	return t
}

// Complete reports whether every signal has a threshold.
func (t Thresholds) Complete() bool {
	for _, s := range All {
		if !t.Get(s.Name).IsSet() {
			return false
		}
	}
	return true
}

// Defaults are the built-in thresholds of every signal.
func Defaults() Thresholds {
	var t Thresholds
	for _, s := range All {
		t.Set(s.Name, s.Default)
	}
	return t
}

// FromAlarmKeys is the thresholds a cell gets from its older alarm keys
// (cells:alarm5xxRatePercent, cells:alarmP99LatencyMs), whose alarms fired
// above the value: a healthy reading is at most the value.
func FromAlarmKeys(rate5xxPercent float64, p99Ms int) Thresholds {
	t := Defaults()
	t.ErrorRate5xx = Threshold{Op: AtMost, Value: rate5xxPercent}
	t.P99LatencyMs = Threshold{Op: AtMost, Value: float64(p99Ms)}
	return t
}

// String renders every set threshold, for messages and tests.
func (t Thresholds) String() string {
	var parts []string
	for _, s := range All {
		if th := t.Get(s.Name); th.IsSet() {
			parts = append(parts, string(s.Name)+" "+s.Format(th))
		}
	}
	return strings.Join(parts, ", ")
}
