package health

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/sim/store"
)

// The edge's health: CloudFront's metrics for the router's distributions.
//
// A distribution serves a share of the fleet's viewer requests: the
// primary all of them less what its continuous deployment policy sends to
// the staging distribution; the staging one Weight of them (SingleWeight)
// or, in a header-based smoke test, the requests that carry the header —
// which the simulator stands in for with edgeSmokeRequestsPerMinute, the
// synthetic client an operator runs on AWS. What those requests meet is
// the profile of the edge function build the distribution runs: looked up
// by the code's SHA-256 (a handler build), then by the routing table
// version baked into its config.json, then the default (0.1 % 5xx, no
// function error; counts are whole requests per minute, round(requests ×
// rate): 2 of the primary's 2400 a minute read 0.083 %). `cellctl sim health set --router-table 8 --error-rate
// 20%` makes a table version bad.
//
// Simplifications, said once: the simulator keeps no edge history; a
// distribution's minutes start at its (or its policy's) last change, the
// current minute is reported whole (as for cells), and values are
// deterministic.

const (
	cloudFrontNamespace        = "AWS/CloudFront"
	edgeRequestsPerMinute      = 2400.0
	edgeSmokeRequestsPerMinute = 60.0
	edgeDefaultErrorRate       = 0.001
	typeDistribution           = "aws:cloudfront/distribution:Distribution"
	typeCDPolicy               = "aws:cloudfront/continuousDeploymentPolicy:ContinuousDeploymentPolicy"
)

// EdgeProfile is what one edge function build serves. Nil fields inherit
// the default.
type EdgeProfile struct {
	// ErrorRate is the share of viewer requests answered 5xx, 0..1.
	ErrorRate *float64 `json:"errorRate,omitempty"`
	// FunctionErrorRate is the share of requests on which the function
	// fails (a LambdaExecutionError, and a 5xx to the viewer), 0..1.
	FunctionErrorRate *float64 `json:"functionErrorRate,omitempty"`
}

// EdgeTarget names the builds a profile applies to: one routing table
// version, or one package (its base64 SHA-256, as Lambda reports it).
type EdgeTarget struct {
	TableVersion int64  `json:"tableVersion,omitempty"`
	CodeSha256   string `json:"codeSha256,omitempty"`
}

func (t EdgeTarget) key() (string, error) {
	switch {
	case t.TableVersion > 0 && t.CodeSha256 != "":
		return "", errors.New("give a routing table version or a code SHA-256, not both")
	case t.TableVersion > 0:
		return "table:" + strconv.FormatInt(t.TableVersion, 10), nil
	case t.CodeSha256 != "":
		return "code:" + t.CodeSha256, nil
	}
	return "", errors.New("name the edge build: a routing table version (--router-table) or a code SHA-256 (--edge-code)")
}

func (p EdgeProfile) validate() error {
	var errs []error
	for name, v := range map[string]*float64{"error rate": p.ErrorRate, "function error rate": p.FunctionErrorRate} {
		if v != nil && (*v < 0 || *v > 1 || math.IsNaN(*v)) {
			errs = append(errs, fmt.Errorf("%s %g%% must be between 0%% and 100%%", name, *v*100))
		}
	}
	if p.ErrorRate == nil && p.FunctionErrorRate == nil {
		errs = append(errs, errors.New("nothing to set: give --error-rate or --edge-errors"))
	}
	return errors.Join(errs...)
}

// SetEdge sets the profile of an edge build.
func SetEdge(c *store.Cloud, t EdgeTarget, p EdgeProfile) error {
	key, err := t.key()
	if err != nil {
		return err
	}
	if err := p.validate(); err != nil {
		return err
	}
	return withHealth(c, func(_ *store.State, h *healthState, _ time.Time) error {
		if h.Edge == nil {
			h.Edge = map[string]EdgeProfile{}
		}
		cur := h.Edge[key]
		if p.ErrorRate != nil {
			cur.ErrorRate = p.ErrorRate
		}
		if p.FunctionErrorRate != nil {
			cur.FunctionErrorRate = p.FunctionErrorRate
		}
		h.Edge[key] = cur
		h.dirty = true
		return nil
	})
}

// ClearEdge removes the profile of one build, or (zero target) all.
func ClearEdge(c *store.Cloud, t EdgeTarget) error {
	all := t == EdgeTarget{}
	key := ""
	if !all {
		k, err := t.key()
		if err != nil {
			return err
		}
		key = k
	}
	return withHealth(c, func(_ *store.State, h *healthState, _ time.Time) error {
		if all {
			h.dirty = h.dirty || len(h.Edge) > 0
			h.Edge = nil
			return nil
		}
		if _, ok := h.Edge[key]; ok {
			delete(h.Edge, key)
			h.dirty = true
		}
		return nil
	})
}

// EdgeProfiles lists the edge profiles set (key "table:N" or "code:SHA").
func EdgeProfiles(c *store.Cloud) (map[string]EdgeProfile, error) {
	out := map[string]EdgeProfile{}
	err := withHealth(c, func(_ *store.State, h *healthState, _ time.Time) error {
		for k, v := range h.Edge {
			out[k] = v
		}
		return nil
	})
	return out, err
}

// edgeMetric reports the CloudFront metrics the simulator publishes.
func edgeMetric(metric string) bool {
	switch metric {
	case "Requests", "5xxErrorRate", "TotalErrorRate", "LambdaExecutionError", "LambdaValidationError":
		return true
	}
	return false
}

// edgeMinute is one minute of a distribution.
type edgeMinute struct {
	t                 time.Time
	requests, err5xx  float64
	execErr, validErr float64
}

func (m edgeMinute) value(metric string) (float64, bool) {
	switch metric {
	case "Requests":
		return m.requests, m.requests > 0
	case "5xxErrorRate", "TotalErrorRate":
		if m.requests == 0 {
			return 0, false
		}
		return 100 * m.err5xx / m.requests, true
	case "LambdaExecutionError":
		return m.execErr, m.execErr > 0
	case "LambdaValidationError":
		return m.validErr, m.validErr > 0
	}
	return 0, false
}

// edgePoints answers one GetMetricData query for a CloudFront distribution
// metric, or nil when CloudWatch would have no such series (another
// namespace or Region, unknown dimensions, metric or distribution).
func edgePoints(v *store.View, dir string, h *healthState, q Query, region string, start, end, now time.Time) []Point {
	if q.Namespace != cloudFrontNamespace || region != "us-east-1" || !edgeMetric(q.Metric) {
		return nil
	}
	if len(q.Dims) != 2 || q.Dims["Region"] != "Global" || q.Dims["DistributionId"] == "" {
		return nil
	}
	dist := recordByID(v, typeDistribution, q.Dims["DistributionId"])
	if dist == nil {
		return nil
	}
	share, since := edgeShare(v, dist)
	if share <= 0 {
		return nil
	}
	p := edgeProfile(v, dir, h, dist)
	rate, fnRate := edgeDefaultErrorRate, 0.0
	if p.ErrorRate != nil {
		rate = *p.ErrorRate
	}
	if p.FunctionErrorRate != nil {
		fnRate = *p.FunctionErrorRate
	}
	from := since.Truncate(time.Minute)
	if earliest := now.Add(-historyMinutes * time.Minute).Truncate(time.Minute); from.Before(earliest) {
		from = earliest
	}
	start = start.Truncate(q.Period)
	buckets := map[time.Time][]float64{}
	for t := from; !t.After(now); t = t.Add(time.Minute) {
		if t.Before(start) || !t.Before(end) {
			continue
		}
		req := math.Round(share)
		fn := math.Round(req * fnRate)
		m := edgeMinute{t: t, requests: req, execErr: fn, err5xx: math.Min(req, math.Round(req*rate)+fn)}
		if val, ok := m.value(q.Metric); ok {
			b := t.Truncate(q.Period)
			buckets[b] = append(buckets[b], val)
		}
	}
	out := make([]Point, 0, len(buckets))
	for t, vs := range buckets {
		out = append(out, Point{Time: t, Value: aggregate(q.Stat, vs)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

func recordByID(v *store.View, typ, id string) *store.Record {
	for _, r := range v.State.Resources {
		if r.Type == typ && r.ID == id {
			return r
		}
	}
	return nil
}

// edgeShare is a distribution's viewer requests per minute under its
// continuous deployment policy, and since when that holds.
func edgeShare(v *store.View, dist *store.Record) (float64, time.Time) {
	outs := v.Outputs(dist)
	since := dist.Updated
	if staging := outs["staging"]; staging.IsBool() && staging.BoolValue() {
		domain := store.Str(dist.Outputs["domainName"])
		for _, r := range v.State.Resources {
			if r.Type != typeCDPolicy || !policyNames(v.Outputs(r), domain) {
				continue
			}
			if r.Updated.After(since) {
				since = r.Updated
			}
			kind, weight, enabled := policyTraffic(v, r)
			switch {
			case !enabled:
				return 0, since
			case kind == "SingleWeight":
				return edgeRequestsPerMinute * weight, since
			case kind == "SingleHeader":
				return edgeSmokeRequestsPerMinute, since
			}
		}
		return 0, since
	}
	share := edgeRequestsPerMinute
	if id := store.Str(dist.Outputs["continuousDeploymentPolicyId"]); id != "" {
		if pol := recordByID(v, typeCDPolicy, id); pol != nil {
			if pol.Updated.After(since) {
				since = pol.Updated
			}
			if kind, weight, enabled := policyTraffic(v, pol); enabled && kind == "SingleWeight" {
				share -= edgeRequestsPerMinute * weight
			}
		}
	}
	return share, since
}

func policyNames(outs resource.PropertyMap, domain string) bool {
	sd := outs["stagingDistributionDnsNames"]
	if !sd.IsObject() {
		return false
	}
	items := sd.ObjectValue()["items"]
	if !items.IsArray() {
		return false
	}
	for _, it := range items.ArrayValue() {
		if it.IsString() && it.StringValue() == domain {
			return true
		}
	}
	return false
}

func policyTraffic(v *store.View, pol *store.Record) (kind string, weight float64, enabled bool) {
	outs := v.Outputs(pol)
	if e := outs["enabled"]; e.IsBool() {
		enabled = e.BoolValue()
	}
	tc := outs["trafficConfig"]
	if !tc.IsObject() {
		return "", 0, enabled
	}
	if t := tc.ObjectValue()["type"]; t.IsString() {
		kind = t.StringValue()
	}
	if w := tc.ObjectValue()["singleWeightConfig"]; w.IsObject() {
		if n := w.ObjectValue()["weight"]; n.IsNumber() {
			weight = n.NumberValue()
		}
	}
	return kind, weight, enabled
}

// edgeProfile is the profile of the build the distribution's origin
// request function association runs.
func edgeProfile(v *store.View, dir string, h *healthState, dist *store.Record) EdgeProfile {
	fc, ok := v.EdgeBuild(dir, dist)
	if !ok {
		return EdgeProfile{}
	}
	if p, ok := h.Edge["code:"+fc.CodeSha256]; ok {
		return p
	}
	var cfg struct {
		Version int64 `json:"version"`
	}
	if json.Unmarshal([]byte(fc.Files["config.json"]), &cfg) == nil && cfg.Version > 0 {
		if p, ok := h.Edge["table:"+strconv.FormatInt(cfg.Version, 10)]; ok {
			return p
		}
	}
	return EdgeProfile{}
}
