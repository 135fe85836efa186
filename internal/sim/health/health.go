package health

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

	"github.com/cellctl/cellctl/internal/sim/store"
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
// KEY is the project-qualified stack ("cells/cell-b", StackKey); CELL is a
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

// Profile is what a cell serves. Nil fields inherit.
type Profile struct {
	// RequestsPerMinute is the traffic; 0 is no traffic at all.
	RequestsPerMinute *float64 `json:"requestsPerMinute,omitempty"`
	// ErrorRate is the share of requests answered 5xx by the targets, 0..1.
	ErrorRate *float64 `json:"errorRate,omitempty"`
	// P99 is the p99 target response time.
	P99 *store.Duration `json:"p99,omitempty"`
	// HealthyTasks overrides the healthy task count (default: the ECS
	// service's desired count).
	HealthyTasks *int `json:"healthyTasks,omitempty"`
}

// Default is what a cell serves without any profile: 600 requests a
// minute, one of them answered 5xx (0.167 %), p99 120 ms, every task
// healthy. A minute's responses are whole requests (sample rounds
// requests × rate), so the rate is stated as the count it gives: a rate of
// 0.1 % would read 0.167 % all the same.
func Default() Profile {
	rpm, p99 := 600.0, store.Duration(120*time.Millisecond)
	rate := 1 / rpm
	return Profile{RequestsPerMinute: &rpm, ErrorRate: &rate, P99: &p99}
}

func (p Profile) over(base Profile) Profile {
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
func (p Profile) Empty() bool {
	return p.RequestsPerMinute == nil && p.ErrorRate == nil && p.P99 == nil && p.HealthyTasks == nil
}

func (p Profile) validate() error {
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

// Sample is one minute of a cell's traffic.
type Sample struct {
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
	Image string    `json:"image,omitempty"`
	From  time.Time `json:"from"` // where the history starts: the cell's creation or the backfill
	// Denied is the data-plane decision (access.go) in force at the last
	// advance: whether a serving path was denied.
	Denied  bool     `json:"denied,omitempty"`
	Samples []Sample `json:"samples"`
}

type healthState struct {
	// dirty says the state changed since it was read: only then is
	// health.json rewritten (a poll within the same minute writes nothing).
	dirty bool

	Format    int                    `json:"format"`
	Images    map[string]Profile     `json:"images,omitempty"`
	Cells     map[string]Profile     `json:"cells,omitempty"`
	Series    map[string]*cellSeries `json:"series,omitempty"`
	Evaluated map[string]time.Time   `json:"evaluated,omitempty"`
	// Edge holds the edge builds' profiles (edge.go).
	Edge map[string]EdgeProfile `json:"edge,omitempty"`

	// dataPlane is each cell's access decision (access.go), by stack key,
	// made afresh by every advance (never saved: the live policies are
	// the truth, and the history keeps what they did).
	dataPlane map[string]dataPlane
}

// healthCache keeps each sim dir's parsed health.json while the file is
// unchanged (the store's shards are cached the same way): a gate polls
// every few seconds and the history is the largest file in the cloud.
var healthCache sync.Map // *store.Store → cachedHealth (per store, like its shards: two stores never share a parsed copy)

type cachedHealth struct {
	key store.FileKey
	h   *healthState
}

// loadHealth reads health.json; callers hold the lock.
func loadHealth(s *store.Store) (*healthState, error) {
	path := filepath.Join(s.Dir(), healthFile)
	key, exists := store.StatKey(path)
	if c, ok := healthCache.Load(s); ok && exists && c.(cachedHealth).key == key {
		return c.(cachedHealth).h, nil
	}
	h := &healthState{}
	if exists {
		if err := store.ReadJSON(path, h); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if h.Format > store.FormatV1 {
		return nil, fmt.Errorf("%s was written by a newer cellctl (format %d)", path, h.Format)
	}
	if h.Images == nil {
		h.Images = map[string]Profile{}
	}
	if h.Cells == nil {
		h.Cells = map[string]Profile{}
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

func saveHealth(s *store.Store, h *healthState) error {
	if !h.dirty {
		return nil
	}
	h.Format = store.FormatV1
	path := filepath.Join(s.Dir(), healthFile)
	if err := store.WriteJSON(path, h); err != nil {
		healthCache.Delete(s)
		return err
	}
	h.dirty = false
	if key, ok := store.StatKey(path); ok {
		healthCache.Store(s, cachedHealth{key: key, h: h})
	}
	return nil
}

// withHealth runs fn under the exclusive lock with the cloud and its
// health, after advancing every cell's history to now; it saves both.
func withHealth(c *store.Cloud, fn func(st *store.State, h *healthState, now time.Time) error) error {
	// Before this cloud's lock: the routers other accounts hold.
	foreign := foreignRouters(c)
	return c.Update(func(st *store.State, _ *store.Control) error {
		h, err := loadHealth(c.Store())
		if err != nil {
			return err
		}
		now := c.Now().UTC()
		v := c.NewView(st)
		advanceHealth(v, h, now, foreign)
		if err := fn(st, h, now); err != nil {
			healthCache.Delete(c.Store()) // fn may have changed it in place
			return err
		}
		return saveHealth(c.Store(), h)
	})
}

// WithAdvanced runs fn under the exclusive lock on the cloud, after
// advancing every cell's history and alarm states to now (withHealth, for
// readers of the alarms).
func WithAdvanced(c *store.Cloud, fn func(st *store.State) error) error {
	return withHealth(c, func(st *store.State, _ *healthState, _ time.Time) error { return fn(st) })
}

// cellHealth is what the model knows of one cell stack.
type cellHealth struct {
	// key is the project-qualified stack (StackKey): the series, alarm
	// evaluations and a qualified override are kept by it, so two fleets'
	// cell-a in one account are two cells.
	key          string
	project      string
	stack        string
	lb, tg       *store.Record
	lbSuffix     string
	tgSuffix     string
	service      *store.Record
	image        string
	imageChanged time.Time // when the service or task definition last changed
	desired      int
}

// healthCells lists the stacks that serve traffic: those with a load
// balancer.
func healthCells(v *store.View) []*cellHealth {
	by := map[string]*cellHealth{}
	var order []string
	for _, r := range v.State.Resources {
		if r.Type != "aws:lb/loadBalancer:LoadBalancer" {
			continue
		}
		if _, ok := by[r.Key()]; ok {
			continue
		}
		by[r.Key()] = &cellHealth{key: r.Key(), project: r.Project, stack: r.Stack, lb: r, lbSuffix: store.Str(r.Outputs["arnSuffix"])}
		order = append(order, r.Key())
	}
	for _, r := range v.State.Resources {
		ch := by[r.Key()]
		if ch == nil {
			continue
		}
		switch r.Type {
		case "aws:lb/targetGroup:TargetGroup":
			if ch.tg == nil {
				ch.tg, ch.tgSuffix = r, store.Str(r.Outputs["arnSuffix"])
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
			ch.desired = int(store.Num(ch.service.Outputs["desiredCount"]))
			ch.imageChanged = ch.service.Updated
			td := store.Str(ch.service.Outputs["taskDefinition"])
			for _, r := range v.State.Resources {
				if r.Type == "aws:ecs/taskDefinition:TaskDefinition" && r.Key() == key && (td == "" || store.Refers(r, td)) {
					ch.image = firstImage(v.Outputs(r))
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
func (h *healthState) profileFor(ch *cellHealth, image string) (Profile, string) {
	p, source := Default(), "default"
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

// sample is one minute of traffic under a profile; denied says a serving
// path of the cell is denied (access.go): every request that reaches a
// target is answered 5xx.
func sample(t time.Time, image string, p Profile, desired int, denied bool) Sample {
	s := Sample{Time: t, Image: image, Healthy: desired, Desired: desired}
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
	if denied {
		s.Target5xx = rpm
	}
	s.P99 = time.Duration(*p.P99).Seconds()
	return s
}

// advanceHealth decides every cell's data plane (foreign: the routers of
// the other accounts, foreignRouters), extends every cell's history to the
// minute before now, then evaluates its alarms.
func advanceHealth(v *store.View, h *healthState, now time.Time, foreign []*stackRecords) {
	cur := now.Truncate(time.Minute)
	live := map[string]bool{}
	cells := healthCells(v)
	h.dataPlane = decideDataPlane(v, cells, foreign)
	for _, ch := range cells {
		dp := h.dataPlane[ch.key]
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
			denied := dp.failing()
			if se.Denied != denied && t.Add(time.Minute).Before(dp.changed) {
				denied = se.Denied // the minute ended before the policies changed
			}
			p, _ := h.profileFor(ch, image)
			se.Samples = append(se.Samples, sample(t, image, p, ch.desired, denied))
			h.dirty = true
		}
		if over := len(se.Samples) - historyMinutes; over > 0 {
			se.Samples = append([]Sample(nil), se.Samples[over:]...)
		}
		if se.Image != ch.image {
			se.Image, h.dirty = ch.image, true
		}
		if se.Denied != dp.failing() {
			se.Denied, h.dirty = dp.failing(), true
		}
		evaluateAlarms(v, h, ch, now)
	}
	for key := range h.Series {
		if !live[key] {
			delete(h.Series, key) // the cell's load balancer is gone
			h.dirty = true
		}
	}
}

// samples returns a cell's history plus the current minute, computed now.
func (h *healthState) samples(ch *cellHealth, now time.Time) []Sample {
	var out []Sample
	if se := h.Series[ch.key]; se != nil {
		out = append(out, se.Samples...)
	}
	p, _ := h.profileFor(ch, ch.image)
	return append(out, sample(now.Truncate(time.Minute), ch.image, p, ch.desired, h.dataPlane[ch.key].failing()))
}

// ---- public API ---------------------------------------------------------

// Target says what a profile applies to: an image or a cell.
type Target struct {
	Image string `json:"image,omitempty"`
	Cell  string `json:"cell,omitempty"` // stack ("cell-b") or cell id ("b"), optionally "project/cell-b"
}

func (t Target) check() (Target, error) {
	if (t.Image == "") == (t.Cell == "") {
		return t, fmt.Errorf("name exactly one of an image (--image) or a cell (--cell)")
	}
	if project, stack := store.SplitKey(t.Cell); t.Cell != "" && !strings.HasPrefix(stack, "cell-") {
		t.Cell = store.StackKey(project, "cell-"+stack)
	}
	return t, nil
}

// Set merges p into the profile of an image or a cell. The history
// up to now keeps the profile it had.
func Set(c *store.Cloud, t Target, p Profile) (Profile, error) {
	t, err := t.check()
	if err != nil {
		return Profile{}, err
	}
	if p.Empty() {
		return Profile{}, fmt.Errorf("nothing to set: give --error-rate, --p99, --requests-per-minute, --no-traffic or --healthy-tasks")
	}
	if err := p.validate(); err != nil {
		return Profile{}, err
	}
	var out Profile
	err = withHealth(c, func(_ *store.State, h *healthState, _ time.Time) error {
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

// Clear removes profiles: of one image or cell, or (zero target)
// all of them. Clearing a cell, or everything, also releases alarm states
// set by hand in that cell, so evaluation drives them again.
func Clear(c *store.Cloud, t Target) error {
	all := t == Target{}
	if !all {
		var err error
		if t, err = t.check(); err != nil {
			return err
		}
	}
	return withHealth(c, func(st *store.State, h *healthState, now time.Time) error {
		h.dirty = true
		switch {
		case all:
			h.Images, h.Cells = map[string]Profile{}, map[string]Profile{}
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
				if r.Type == store.TypeAlarm && (all || store.MatchStack(t.Cell, r.Key())) && r.Alarm != nil {
					if at, ok := h.Evaluated[alarmKey(r)]; !ok || !at.Equal(r.Alarm.Updated) {
						r.Alarm = nil // a manual state: release it
						st.Touch(r.Key())
					}
				}
			}
		}
		v := c.NewView(st)
		for _, ch := range healthCells(v) {
			evaluateAlarms(v, h, ch, now)
		}
		return nil
	})
}

// Cell is what `sim health show` reports for one cell.
type Cell struct {
	Project string `json:"project,omitempty"`
	Stack   string `json:"stack"`
	Image   string `json:"image,omitempty"`
	// Source names the profile in force (default, image IMG, cell STACK)
	// and, when the live policies deny a serving path, the actions denied.
	Source  string  `json:"source"`
	Profile Profile `json:"profile"`
	// Denied are the serving paths the live policies deny, each with its
	// decision and reason: the cell answers every request 5xx.
	Denied       []string      `json:"denied,omitempty"`
	LoadBalancer string        `json:"loadBalancer"`
	TargetGroup  string        `json:"targetGroup,omitempty"`
	Now          Sample        `json:"now"`
	History      []Sample      `json:"history,omitempty"`
	Alarms       []store.Alarm `json:"alarms"`
}

// Report is the whole health model.
type Report struct {
	Time   time.Time          `json:"time"`
	Images map[string]Profile `json:"images"`
	Cells  map[string]Profile `json:"cellOverrides"`
	Status []Cell             `json:"cells"`
}

// Read advances the model to now and reports it; history holds the last
// `history` minutes of each cell.
func Read(c *store.Cloud, history int) (Report, error) {
	var rep Report
	err := withHealth(c, func(st *store.State, h *healthState, now time.Time) error {
		rep = Report{Time: now, Images: maps.Clone(h.Images), Cells: maps.Clone(h.Cells)}
		v := c.NewView(st)
		for _, ch := range healthCells(v) {
			p, source := h.profileFor(ch, ch.image)
			s := h.samples(ch, now)
			dp := h.dataPlane[ch.key]
			if dp.failing() {
				source += "; access denied: " + dp.actions()
			}
			cs := Cell{Project: ch.project, Stack: ch.stack, Image: ch.image, Source: source, Profile: p, Denied: dp.describe(),
				LoadBalancer: ch.lbSuffix, TargetGroup: ch.tgSuffix, Now: s[len(s)-1]}
			if history > 0 {
				cs.History = s[max(0, len(s)-1-history) : len(s)-1]
			}
			for _, r := range st.Resources {
				if r.Type == store.TypeAlarm && r.Key() == ch.key {
					cs.Alarms = append(cs.Alarms, r.ToAlarm())
				}
			}
			sort.Slice(cs.Alarms, func(i, j int) bool { return cs.Alarms[i].AlarmName < cs.Alarms[j].AlarmName })
			rep.Status = append(rep.Status, cs)
		}
		return nil
	})
	return rep, err
}

// Advance brings every cell's history and alarm states up to now.
// Readers of alarm states call it first, so an alarm listing reflects the
// traffic up to this minute.
func Advance(c *store.Cloud) error {
	return withHealth(c, func(*store.State, *healthState, time.Time) error { return nil })
}

// Alarms lists the metric alarms of a stack or cell ("" for all).
func Alarms(c *store.Cloud, stack string) ([]store.Alarm, error) {
	if err := Advance(c); err != nil { // evaluate alarms up to now
		return nil, err
	}
	var out []store.Alarm
	err := c.Read(func(st *store.State, _ *store.Control) error {
		for _, r := range st.Resources {
			if r.Type == store.TypeAlarm && store.MatchStack(stack, r.Key()) {
				out = append(out, r.ToAlarm())
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		return store.StackKey(out[i].Project, out[i].Stack)+"\x00"+out[i].AlarmName < store.StackKey(out[j].Project, out[j].Stack)+"\x00"+out[j].AlarmName
	})
	return out, err
}

// AlarmStates maps each alarm name (and logical name) of a stack or cell
// to its state: what a wave gate reads.
func AlarmStates(c *store.Cloud, stack string) (map[string]string, error) {
	alarms, err := Alarms(c, stack)
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
func Reset(c *store.Cloud) error {
	healthCache.Delete(c.Store())
	return c.Reset(healthFile)
}
