package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// The health model. Every cell stack with a load balancer serves traffic
// in the simulated cloud: per minute, a request count, 5xx responses, a
// p99 target response time and healthy/desired tasks. What a cell serves
// comes from a profile: the default, overridden by the profile of the
// image the cell's ECS service runs (`sim health set --image`: "this
// build is bad"), overridden by the cell's own profile (`--cell`).
//
// The history is materialised lazily: every read (the AWS API server,
// `sim health show`, alarm listings) first advances each cell's history to
// the current minute under the cloud's exclusive lock, with the profile
// and image in force at the time, then evaluates the cell's metric alarms
// from those minutes against the alarm resources' own thresholds. The
// current, incomplete minute is reported with full-minute values, so a
// rehearsal's short bake sees a bad image at once.
//
// A state set by hand (`sim alarm set`) wins over evaluation until
// `sim health clear` releases it.
//
// Kept in health.json beside the rest of the cloud:
//
//	{"format":1, "images":{IMG: profile}, "cells":{CELL: profile},
//	 "series":{KEY: {"image":…, "seen":…, "samples":[…]}},
//	 "evaluated":{"KEY/alarm": time}}
//
// KEY is the project-qualified stack ("cells/cell-b", stackKey); CELL is a
// KEY (what `cellctl sim health set --cell` writes for its fleet) or a bare
// stack, which applies to that stack of every project. Series and
// evaluations kept by bare stack (before stacks were project-qualified)
// are moved to their KEY when the cell is next seen.
const healthFile = "health.json"

// historyMinutes bounds each cell's kept history (3 hours: enough for any
// bake window and for `health --since`).
const historyMinutes = 180

// backfillMinutes is how much history a cell gets when it is first seen,
// so a window query right away has points.
const backfillMinutes = 30

// HealthProfile is what a cell serves. Nil fields inherit.
type HealthProfile struct {
	// RequestsPerMinute is the traffic; 0 is no traffic at all.
	RequestsPerMinute *float64 `json:"requestsPerMinute,omitempty"`
	// ErrorRate is the share of requests answered 5xx by the targets, 0..1.
	ErrorRate *float64 `json:"errorRate,omitempty"`
	// P99 is the p99 target response time.
	P99 *Duration `json:"p99,omitempty"`
	// HealthyTasks overrides the healthy task count (default: the ECS
	// service's desired count).
	HealthyTasks *int `json:"healthyTasks,omitempty"`
}

// DefaultHealth is what a cell serves without any profile: 600 requests a
// minute, one of them answered 5xx (0.167 %), p99 120 ms, every task
// healthy. A minute's responses are whole requests (sample rounds
// requests × rate), so the rate is stated as the count it gives: a rate of
// 0.1 % would read 0.167 % all the same.
func DefaultHealth() HealthProfile {
	rpm, p99 := 600.0, Duration(120*time.Millisecond)
	rate := 1 / rpm
	return HealthProfile{RequestsPerMinute: &rpm, ErrorRate: &rate, P99: &p99}
}

func (p HealthProfile) over(base HealthProfile) HealthProfile {
	if p.RequestsPerMinute != nil {
		base.RequestsPerMinute = p.RequestsPerMinute
	}
	if p.ErrorRate != nil {
		base.ErrorRate = p.ErrorRate
	}
	if p.P99 != nil {
		base.P99 = p.P99
	}
	if p.HealthyTasks != nil {
		base.HealthyTasks = p.HealthyTasks
	}
	return base
}

// Empty reports whether the profile sets nothing.
func (p HealthProfile) Empty() bool {
	return p.RequestsPerMinute == nil && p.ErrorRate == nil && p.P99 == nil && p.HealthyTasks == nil
}

func (p HealthProfile) validate() error {
	var errs []error
	if v := p.RequestsPerMinute; v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
		errs = append(errs, fmt.Errorf("requests per minute %g must be a number ≥ 0", *v))
	}
	if v := p.ErrorRate; v != nil && (*v < 0 || *v > 1 || math.IsNaN(*v)) {
		errs = append(errs, fmt.Errorf("error rate %g%% must be between 0%% and 100%%", *v*100))
	}
	if v := p.P99; v != nil && (*v <= 0 || time.Duration(*v) > time.Hour) {
		errs = append(errs, fmt.Errorf("p99 %s must be more than 0 and at most 1h", time.Duration(*v)))
	}
	if v := p.HealthyTasks; v != nil && *v < 0 {
		errs = append(errs, fmt.Errorf("healthy tasks %d must not be negative", *v))
	}
	return errors.Join(errs...)
}

// ParsePercent reads an error rate: "3%", "0.5 %" or a fraction "0.03".
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) {
		return 0, fmt.Errorf("invalid error rate %q: use a percentage such as 3%% or 0.5%%", s)
	}
	if pct {
		v /= 100
	} else if v > 1 {
		return 0, fmt.Errorf("invalid error rate %q: a fraction must be at most 1 (did you mean %s%%?)", s, t)
	}
	if v < 0 || v > 1 {
		return 0, fmt.Errorf("invalid error rate %q: must be between 0%% and 100%%", s)
	}
	return v, nil
}

// HealthSample is one minute of a cell's traffic.
type HealthSample struct {
	Time      time.Time `json:"t"`
	Image     string    `json:"image,omitempty"`
	Requests  float64   `json:"requests"`
	Target5xx float64   `json:"target5xx"`
	ELB5xx    float64   `json:"elb5xx,omitempty"` // 503s the load balancer answers with no healthy target
	P99       float64   `json:"p99"`              // seconds; 0 with no traffic
	Healthy   int       `json:"healthy"`
	Desired   int       `json:"desired"`
}

type cellSeries struct {
	Image   string         `json:"image,omitempty"`
	From    time.Time      `json:"from"` // where the history starts: the cell's creation or the backfill
	Samples []HealthSample `json:"samples"`
}

type healthState struct {
	// dirty says the state changed since it was read: only then is
	// health.json rewritten (a poll within the same minute writes nothing).
	dirty bool

	Format    int                      `json:"format"`
	Images    map[string]HealthProfile `json:"images,omitempty"`
	Cells     map[string]HealthProfile `json:"cells,omitempty"`
	Series    map[string]*cellSeries   `json:"series,omitempty"`
	Evaluated map[string]time.Time     `json:"evaluated,omitempty"`
	// Edge holds the edge builds' profiles (edge_health.go).
	Edge map[string]EdgeProfile `json:"edge,omitempty"`
}

// healthCache keeps each sim dir's parsed health.json while the file is
// unchanged (the store's shards are cached the same way): a gate polls
// every few seconds and the history is the largest file in the cloud.
var healthCache sync.Map // *store → cachedHealth (per store, like its shards: two stores never share a parsed copy)

type cachedHealth struct {
	key fileKey
	h   *healthState
}

// loadHealth reads health.json; callers hold the lock.
func (s *store) loadHealth() (*healthState, error) {
	path := filepath.Join(s.Dir(), healthFile)
	key, exists := statKey(path)
	if c, ok := healthCache.Load(s); ok && exists && c.(cachedHealth).key == key {
		return c.(cachedHealth).h, nil
	}
	h := &healthState{}
	if exists {
		if err := readJSON(path, h); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if h.Format > formatV1 {
		return nil, fmt.Errorf("%s was written by a newer cellctl (format %d)", path, h.Format)
	}
	if h.Images == nil {
		h.Images = map[string]HealthProfile{}
	}
	if h.Cells == nil {
		h.Cells = map[string]HealthProfile{}
	}
	if h.Series == nil {
		h.Series = map[string]*cellSeries{}
	}
	if h.Evaluated == nil {
		h.Evaluated = map[string]time.Time{}
	}
	if exists {
		healthCache.Store(s, cachedHealth{key: key, h: h})
	}
	return h, nil
}

func (s *store) saveHealth(h *healthState) error {
	if !h.dirty {
		return nil
	}
	h.Format = formatV1
	path := filepath.Join(s.Dir(), healthFile)
	if err := writeJSON(path, h); err != nil {
		healthCache.Delete(s)
		return err
	}
	h.dirty = false
	if key, ok := statKey(path); ok {
		healthCache.Store(s, cachedHealth{key: key, h: h})
	}
	return nil
}

// withHealth runs fn under the exclusive lock with the cloud and its
// health, after advancing every cell's history to now; it saves both.
func (c *Cloud) withHealth(fn func(st *state, h *healthState, now time.Time) error) error {
	return c.Update(func(st *state, _ *control) error {
		h, err := c.Store().loadHealth()
		if err != nil {
			return err
		}
		now := c.Now().UTC()
		v := c.NewView(st)
		v.advanceHealth(h, now)
		if err := fn(st, h, now); err != nil {
			healthCache.Delete(c.Store()) // fn may have changed it in place
			return err
		}
		return c.Store().saveHealth(h)
	})
}

// withAdvanced runs fn under the exclusive lock on the cloud, after
// advancing every cell's history and alarm states to now (withHealth, for
// readers of the alarms).
func (c *Cloud) withAdvanced(fn func(st *state) error) error {
	return c.withHealth(func(st *state, _ *healthState, _ time.Time) error { return fn(st) })
}

// cellHealth is what the model knows of one cell stack.
type cellHealth struct {
	// key is the project-qualified stack (stackKey): the series, alarm
	// evaluations and a qualified override are kept by it, so two fleets'
	// cell-a in one account are two cells.
	key          string
	project      string
	stack        string
	lb, tg       *record
	lbSuffix     string
	tgSuffix     string
	service      *record
	image        string
	imageChanged time.Time // when the service or task definition last changed
	desired      int
}

// healthCells lists the stacks that serve traffic: those with a load
// balancer.
func (v *view) healthCells() []*cellHealth {
	by := map[string]*cellHealth{}
	var order []string
	for _, r := range v.st.Resources {
		if r.Type != "aws:lb/loadBalancer:LoadBalancer" {
			continue
		}
		if _, ok := by[r.key()]; ok {
			continue
		}
		by[r.key()] = &cellHealth{key: r.key(), project: r.Project, stack: r.Stack, lb: r, lbSuffix: sval(r.Outputs["arnSuffix"])}
		order = append(order, r.key())
	}
	for _, r := range v.st.Resources {
		ch := by[r.key()]
		if ch == nil {
			continue
		}
		switch r.Type {
		case "aws:lb/targetGroup:TargetGroup":
			if ch.tg == nil {
				ch.tg, ch.tgSuffix = r, sval(r.Outputs["arnSuffix"])
			}
		case "aws:ecs/service:Service":
			if ch.service == nil {
				ch.service = r
			}
		}
	}
	sort.Strings(order)
	var out []*cellHealth
	for _, key := range order {
		ch := by[key]
		if ch.service != nil {
			ch.desired = int(num(ch.service.Outputs["desiredCount"]))
			ch.imageChanged = ch.service.Updated
			td := sval(ch.service.Outputs["taskDefinition"])
			for _, r := range v.st.Resources {
				if r.Type == "aws:ecs/taskDefinition:TaskDefinition" && r.key() == key && (td == "" || refers(r, td)) {
					ch.image = firstImage(v.outputs(r))
					if r.Updated.After(ch.imageChanged) {
						ch.imageChanged = r.Updated
					}
					break
				}
			}
		}
		out = append(out, ch)
	}
	return out
}

// firstImage is the image of a task definition's first container.
func firstImage(outs resource.PropertyMap) string {
	v := outs["containerDefinitions"]
	for v.IsSecret() {
		v = v.SecretValue().Element
	}
	if !v.IsString() {
		return ""
	}
	var defs []struct {
		Image string `json:"image"`
	}
	if json.Unmarshal([]byte(v.StringValue()), &defs) != nil {
		return ""
	}
	for _, d := range defs {
		if d.Image != "" {
			return d.Image
		}
	}
	return ""
}

// profileFor is the profile in force for a cell running image: a
// profile set for the cell of its project ("shop/cell-b") wins over one
// set for its stack name alone ("cell-b", every project's).
func (h *healthState) profileFor(ch *cellHealth, image string) (HealthProfile, string) {
	p, source := DefaultHealth(), "default"
	if ip, ok := h.Images[image]; ok && image != "" {
		p, source = ip.over(p), "image "+image
	}
	if cp, ok := h.Cells[ch.key]; ok && ch.key != ch.stack {
		p, source = cp.over(p), "cell "+ch.key
	} else if cp, ok := h.Cells[ch.stack]; ok {
		p, source = cp.over(p), "cell "+ch.stack
	}
	return p, source
}

// sample is one minute of traffic under a profile.
func sample(t time.Time, image string, p HealthProfile, desired int) HealthSample {
	s := HealthSample{Time: t, Image: image, Healthy: desired, Desired: desired}
	if p.HealthyTasks != nil {
		s.Healthy = *p.HealthyTasks
	}
	rpm := *p.RequestsPerMinute
	if rpm == 0 {
		return s
	}
	s.Requests = rpm
	if s.Healthy == 0 {
		// No healthy target: the load balancer answers every request 503
		// itself (HTTPCode_ELB_5XX_Count) and no target responds.
		s.ELB5xx = rpm
		return s
	}
	s.Target5xx = math.Round(rpm * *p.ErrorRate)
	s.P99 = time.Duration(*p.P99).Seconds()
	return s
}

// advanceHealth extends every cell's history to the minute before now,
// then evaluates its alarms.
func (v *view) advanceHealth(h *healthState, now time.Time) {
	cur := now.Truncate(time.Minute)
	live := map[string]bool{}
	for _, ch := range v.healthCells() {
		live[ch.key] = true
		se := h.Series[ch.key]
		if se == nil && ch.key != ch.stack && h.Series[ch.stack] != nil {
			// Kept by a cellctl before project-qualified stacks.
			se = h.Series[ch.stack]
			delete(h.Series, ch.stack)
			h.Series[ch.key] = se
			h.dirty = true
		}
		if se == nil {
			se = &cellSeries{Image: ch.image}
			from := cur.Add(-backfillMinutes * time.Minute)
			if created := ch.lb.Created.Truncate(time.Minute); created.After(from) {
				from = created
			}
			se.From = from
			h.Series[ch.key] = se
			h.dirty = true
		}
		next := cur.Add(-historyMinutes * time.Minute)
		if n := len(se.Samples); n > 0 && se.Samples[n-1].Time.Add(time.Minute).After(next) {
			next = se.Samples[n-1].Time.Add(time.Minute)
		} else if se.From.Truncate(time.Minute).After(next) {
			next = se.From.Truncate(time.Minute)
		}
		// Complete minutes only; the current one is computed at read time.
		for t := next; t.Before(cur); t = t.Add(time.Minute) {
			image := ch.image
			if se.Image != ch.image && t.Add(time.Minute).Before(ch.imageChanged) {
				image = se.Image // the minute ended before the deploy
			}
			p, _ := h.profileFor(ch, image)
			se.Samples = append(se.Samples, sample(t, image, p, ch.desired))
			h.dirty = true
		}
		if over := len(se.Samples) - historyMinutes; over > 0 {
			se.Samples = append([]HealthSample(nil), se.Samples[over:]...)
		}
		if se.Image != ch.image {
			se.Image, h.dirty = ch.image, true
		}
		v.evaluateAlarms(h, ch, now)
	}
	for key := range h.Series {
		if !live[key] {
			delete(h.Series, key) // the cell's load balancer is gone
			h.dirty = true
		}
	}
}

// samples returns a cell's history plus the current minute, computed now.
func (h *healthState) samples(ch *cellHealth, now time.Time) []HealthSample {
	var out []HealthSample
	if se := h.Series[ch.key]; se != nil {
		out = append(out, se.Samples...)
	}
	p, _ := h.profileFor(ch, ch.image)
	return append(out, sample(now.Truncate(time.Minute), ch.image, p, ch.desired))
}

// ---- public API ---------------------------------------------------------

// HealthTarget says what a profile applies to: an image or a cell.
type HealthTarget struct {
	Image string `json:"image,omitempty"`
	Cell  string `json:"cell,omitempty"` // stack ("cell-b") or cell id ("b"), optionally "project/cell-b"
}

func (t HealthTarget) check() (HealthTarget, error) {
	if (t.Image == "") == (t.Cell == "") {
		return t, fmt.Errorf("name exactly one of an image (--image) or a cell (--cell)")
	}
	if project, stack := splitKey(t.Cell); t.Cell != "" && !strings.HasPrefix(stack, "cell-") {
		t.Cell = stackKey(project, "cell-"+stack)
	}
	return t, nil
}

// SetHealth merges p into the profile of an image or a cell. The history
// up to now keeps the profile it had.
func (c *Cloud) SetHealth(t HealthTarget, p HealthProfile) (HealthProfile, error) {
	t, err := t.check()
	if err != nil {
		return HealthProfile{}, err
	}
	if p.Empty() {
		return HealthProfile{}, fmt.Errorf("nothing to set: give --error-rate, --p99, --requests-per-minute, --no-traffic or --healthy-tasks")
	}
	if err := p.validate(); err != nil {
		return HealthProfile{}, err
	}
	var out HealthProfile
	err = c.withHealth(func(_ *state, h *healthState, _ time.Time) error {
		m := h.Images
		key := t.Image
		if t.Cell != "" {
			m, key = h.Cells, t.Cell
		}
		out = p.over(m[key])
		m[key] = out
		h.dirty = true
		return nil
	})
	return out, err
}

// ClearHealth removes profiles: of one image or cell, or (zero target)
// all of them. Clearing a cell, or everything, also releases alarm states
// set by hand in that cell, so evaluation drives them again.
func (c *Cloud) ClearHealth(t HealthTarget) error {
	all := t == HealthTarget{}
	if !all {
		var err error
		if t, err = t.check(); err != nil {
			return err
		}
	}
	return c.withHealth(func(st *state, h *healthState, now time.Time) error {
		h.dirty = true
		switch {
		case all:
			h.Images, h.Cells = map[string]HealthProfile{}, map[string]HealthProfile{}
		case t.Image != "":
			if _, ok := h.Images[t.Image]; !ok {
				return fmt.Errorf("no health profile for image %q", t.Image)
			}
			delete(h.Images, t.Image)
		default:
			delete(h.Cells, t.Cell)
		}
		if t.Image == "" {
			for _, r := range st.Resources {
				if r.Type == typeAlarm && (all || matchStack(t.Cell, r.key())) && r.Alarm != nil {
					if at, ok := h.Evaluated[alarmKey(r)]; !ok || !at.Equal(r.Alarm.Updated) {
						r.Alarm = nil // a manual state: release it
						st.touch(r.key())
					}
				}
			}
		}
		v := c.NewView(st)
		for _, ch := range v.healthCells() {
			v.evaluateAlarms(h, ch, now)
		}
		return nil
	})
}

// CellHealth is what `sim health show` reports for one cell.
type CellHealth struct {
	Project      string         `json:"project,omitempty"`
	Stack        string         `json:"stack"`
	Image        string         `json:"image,omitempty"`
	Source       string         `json:"source"` // default, image IMG, cell STACK
	Profile      HealthProfile  `json:"profile"`
	LoadBalancer string         `json:"loadBalancer"`
	TargetGroup  string         `json:"targetGroup,omitempty"`
	Now          HealthSample   `json:"now"`
	History      []HealthSample `json:"history,omitempty"`
	Alarms       []Alarm        `json:"alarms"`
}

// HealthReport is the whole health model.
type HealthReport struct {
	Time   time.Time                `json:"time"`
	Images map[string]HealthProfile `json:"images"`
	Cells  map[string]HealthProfile `json:"cellOverrides"`
	Status []CellHealth             `json:"cells"`
}

// Health advances the model to now and reports it; history holds the last
// `history` minutes of each cell.
func (c *Cloud) Health(history int) (HealthReport, error) {
	var rep HealthReport
	err := c.withHealth(func(st *state, h *healthState, now time.Time) error {
		rep = HealthReport{Time: now, Images: maps.Clone(h.Images), Cells: maps.Clone(h.Cells)}
		v := c.NewView(st)
		for _, ch := range v.healthCells() {
			p, source := h.profileFor(ch, ch.image)
			s := h.samples(ch, now)
			cs := CellHealth{Project: ch.project, Stack: ch.stack, Image: ch.image, Source: source, Profile: p, LoadBalancer: ch.lbSuffix, TargetGroup: ch.tgSuffix, Now: s[len(s)-1]}
			if history > 0 {
				cs.History = s[max(0, len(s)-1-history) : len(s)-1]
			}
			for _, r := range st.Resources {
				if r.Type == typeAlarm && r.key() == ch.key {
					cs.Alarms = append(cs.Alarms, r.toAlarm())
				}
			}
			sort.Slice(cs.Alarms, func(i, j int) bool { return cs.Alarms[i].AlarmName < cs.Alarms[j].AlarmName })
			rep.Status = append(rep.Status, cs)
		}
		return nil
	})
	return rep, err
}

// AdvanceHealth brings every cell's history and alarm states up to now.
// Readers of alarm states call it first, so an alarm listing reflects the
// traffic up to this minute.
func (c *Cloud) AdvanceHealth() error {
	return c.withHealth(func(*state, *healthState, time.Time) error { return nil })
}

// Alarms lists the metric alarms of a stack or cell ("" for all).
func (c *Cloud) Alarms(stack string) ([]Alarm, error) {
	if err := c.AdvanceHealth(); err != nil { // health.go: evaluate alarms up to now
		return nil, err
	}
	var out []Alarm
	err := c.Read(func(st *state, _ *control) error {
		for _, r := range st.Resources {
			if r.Type == typeAlarm && matchStack(stack, r.key()) {
				out = append(out, r.toAlarm())
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		return stackKey(out[i].Project, out[i].Stack)+"\x00"+out[i].AlarmName < stackKey(out[j].Project, out[j].Stack)+"\x00"+out[j].AlarmName
	})
	return out, err
}

// AlarmStates maps each alarm name (and logical name) of a stack or cell
// to its state: what a wave gate reads.
func (c *Cloud) AlarmStates(stack string) (map[string]string, error) {
	alarms, err := c.Alarms(stack)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, a := range alarms {
		out[a.AlarmName] = a.State
		if _, clash := out[a.Name]; !clash {
			out[a.Name] = a.State
		}
	}
	return out, nil
}

// Reset empties the cloud (resources, counters, faults, latency rules,
// quota overrides) and its health model (health and edge profiles,
// histories, alarm evaluations). The secret key stays.
func (c *Cloud) Reset() error {
	healthCache.Delete(c.Store())
	return c.resetFiles(healthFile)
}
