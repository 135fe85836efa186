package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/awssts"
)

// Cloud is a simulated AWS account kept in a directory. It is safe to use
// from several goroutines and several processes at once. The provider
// (Start) and the `cellctl sim …` commands both work through it.
type Cloud struct {
	s   *Store
	now func() time.Time
}

// Open opens (creating if needed) the simulated cloud in dir ("" means
// DefaultDir).
func Open(dir string) (*Cloud, error) {
	s, err := openStore(dir)
	if err != nil {
		return nil, err
	}
	return &Cloud{s: s, now: func() time.Time { return time.Now().UTC() }}, nil
}

// Dir is the cloud's directory.
func (c *Cloud) Dir() string { return c.s.dir }

// Store is the cloud's directory and its files: the models kept beside
// the resources (the health model's health.json) read and write through
// it and key their caches by it, as the resource shards are cached per
// store.
func (c *Cloud) Store() *Store { return c.s }

// Now is the cloud's clock.
func (c *Cloud) Now() time.Time { return c.now() }

// SetClock makes the cloud read time from now (the provider's clock).
func (c *Cloud) SetClock(now func() time.Time) { c.now = now }

// Update runs fn on the cloud under the exclusive lock and saves what it
// changed; an error discards every change (see store.update).
func (c *Cloud) Update(fn func(st *State, ctl *Control) error) error { return c.s.update(fn) }

// Read runs fn on the cloud under the shared lock; fn must not change
// anything.
func (c *Cloud) Read(fn func(st *State, ctl *Control) error) error { return c.s.view(fn) }

// NewView is the cloud as awsmodel sees it during the locked operation
// that holds st.
func (c *Cloud) NewView(st *State) *View {
	v := newView(st, c.s.codec)
	v.public = c.publicRecord
	return v
}

// publicRecord finds a Route 53 record (awsmodel.RecordLookupKey) in
// every other account's store: the home one and the second accounts
// (their directories; the registry is not read, as the caller may hold
// the home store's lock). Each is read under its own shared lock, never
// this store's.
func (c *Cloud) publicRecord(ref string) (string, resource.PropertyMap, bool) {
	for _, o := range c.Others() {
		s := o.s
		var typ string
		var outs resource.PropertyMap
		found := false
		_ = s.view(func(st *State, _ *Control) error {
			v := newView(st, s.codec)
			for _, r := range st.Resources {
				if r.Type == "aws:route53/record:Record" && Refers(r, ref) {
					typ, outs, found = r.Type, v.Outputs(r), true
					return nil
				}
			}
			return nil
		})
		if found {
			return typ, outs, true
		}
	}
	return "", nil, false
}

// Others are the simulator's other accounts: the home one (for a second
// account's cloud) and every second account but this one, found by their
// directories — the registry is not read, as the caller may hold the home
// store's lock. Each is read under its own lock.
func (c *Cloud) Others() []*Cloud {
	home := c.s
	if c.s.home != nil {
		home = c.s.home
	}
	var out []*Cloud
	if home != c.s {
		out = append(out, &Cloud{s: home, now: c.now})
	}
	entries, _ := os.ReadDir(filepath.Join(home.dir, AccountsDir))
	for _, e := range entries {
		if !e.IsDir() || awssts.CheckAccountID(e.Name()) != nil || e.Name() == c.s.account {
			continue
		}
		other, err := (&Cloud{s: home, now: c.now}).accountCloud(e.Name())
		if err != nil {
			continue
		}
		out = append(out, other)
	}
	return out
}

// EncodeMap is a property map as the cloud stores it (codec.go): secrets
// encrypted with the cloud's key.
func (c *Cloud) EncodeMap(m resource.PropertyMap) (map[string]any, error) {
	return c.s.codec.encodeMap(m)
}

// DecodeMap is a stored property map decoded.
func (c *Cloud) DecodeMap(m map[string]any) (resource.PropertyMap, error) {
	return c.s.codec.decodeMap(m)
}

// ---- resources ----------------------------------------------------------

// Resources lists live resources matching f, ordered by stack, type, name.
func (c *Cloud) Resources(f Filter) ([]Resource, error) {
	var out []Resource
	err := c.s.view(func(st *State, _ *Control) error {
		if err := st.anyCorrupt(f.Stack); err != nil {
			return err
		}
		for _, r := range st.Resources {
			if !MatchStack(f.Stack, r.Key()) || !matchType(f.Type, r.Type) || !matchName(f.Name, r.Name) || (f.Region != "" && f.Region != r.Region) {
				continue
			}
			out = append(out, r.public())
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Project != b.Project {
			return a.Project < b.Project
		}
		if a.Stack != b.Stack {
			return a.Stack < b.Stack
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		return a.Name < b.Name
	})
	return out, err
}

func (r *Record) public() Resource {
	res := Resource{
		Project: r.Project, Stack: r.Stack, URN: r.URN, Type: r.Type, Name: r.Name, ID: r.ID, Region: r.Region,
		Inputs: redact(r.Inputs).(map[string]any), Outputs: redact(r.Outputs).(map[string]any),
		Edited: append([]string(nil), r.Edited...), Created: r.Created, Updated: r.Updated, Abandoned: r.Abandoned,
	}
	if r.Type == TypeAlarm {
		res.AlarmState = r.CurrentAlarm().State
	}
	return res
}

// find resolves a reference typed by a person: a logical name, id, URN or
// ARN, within a stack (or cell id; "" for any stack). A logical name (what
// `sim resources` lists first, and what `drift` reports) wins over an id
// that happens to spell the same: with `cells:namePrefix: none` the task
// definition's id is its family `cell-b-service`, the ECS service's
// logical name, and `sim edit cell-b cell-b-service …` means the service.
func (st *State) find(stack, ref string) (*Record, error) {
	var named, other []*Record
	for _, r := range st.Resources {
		if !MatchStack(stack, r.Key()) {
			continue
		}
		switch {
		case r.Name == ref:
			named = append(named, r)
		case r.ID == ref || r.URN == ref || Str(r.Outputs["arn"]) == ref:
			other = append(other, r)
		}
	}
	hits := named
	if len(hits) == 0 {
		hits = other
	}
	switch len(hits) {
	case 0:
		where := "any stack"
		if stack != "" {
			where = "stack " + stack
		}
		return nil, fmt.Errorf("no live resource %q in %s of the simulated cloud", ref, where)
	case 1:
		return hits[0], nil
	}
	var names []string
	for _, h := range hits {
		names = append(names, fmt.Sprintf("%s %s (%s, id %s)", h.Key(), h.Name, h.Type, h.ID))
	}
	return nil, fmt.Errorf("%q is ambiguous: %s; name the stack or use the id", ref, strings.Join(names, ", "))
}

// Edit changes a live resource's property as if someone had used the AWS
// console, so a later refresh shows drift. ref is a logical name, id, URN
// or ARN; path a property path ("tags.owner", "ingress[0].fromPort");
// value JSON (text that is not JSON is taken as a string). A null value
// removes the property.
func (c *Cloud) Edit(stack, ref, path, value string) (Resource, error) {
	p, err := resource.ParsePropertyPath(path)
	if err != nil || len(p) == 0 {
		return Resource{}, fmt.Errorf("invalid property path %q: %v", path, err)
	}
	top, ok := p[0].(string)
	if !ok {
		return Resource{}, fmt.Errorf("property path %q must start with a property name", path)
	}
	var raw any
	if err := json.Unmarshal([]byte(value), &raw); err != nil {
		raw = value
	}
	newVal := resource.NewPropertyValue(raw)
	var out Resource
	err = c.s.update(func(st *State, _ *Control) error {
		r, err := st.find(stack, ref)
		if err != nil {
			return err
		}
		outs, err := c.s.codec.decodeMap(r.Outputs)
		if err != nil {
			return err
		}
		root := resource.NewObjectProperty(outs)
		if old, had := p.Get(root); had && old.IsSecret() && !newVal.IsNull() {
			newVal = resource.MakeSecret(newVal)
		}
		if newVal.IsNull() {
			p.Delete(root)
		} else if !p.Set(root, newVal) {
			if _, ok := p.Add(root, newVal); !ok {
				return fmt.Errorf("cannot set %s on %s", path, r.Name)
			}
		}
		enc, err := c.s.codec.encodeMap(outs)
		if err != nil {
			return err
		}
		r.Outputs, r.decoded, r.uniqOK = enc, nil, false
		st.Touch(r.Key())
		if !slices.Contains(r.Edited, top) {
			r.Edited = append(r.Edited, top)
		}
		r.Updated = c.now()
		out = r.public()
		return nil
	})
	return out, err
}

// Remove deletes a live resource out of band (as if deleted in the
// console); a refresh then finds it gone.
func (c *Cloud) Remove(stack, ref string) (Resource, error) {
	var out Resource
	err := c.s.update(func(st *State, _ *Control) error {
		r, err := st.find(stack, ref)
		if err != nil {
			return err
		}
		out = r.public()
		st.Remove(r)
		return nil
	})
	return out, err
}

func (st *State) Remove(r *Record) {
	st.Resources = slices.DeleteFunc(st.Resources, func(x *Record) bool { return x == r })
	st.Touch(r.Key())
}

// Reset empties the cloud: resources, counters, faults, latency
// rules, quota overrides, ECS tasks, task rules and registered revisions,
// log events, recorded SQL statements, and the files of the models kept beside them
// that also names (the health model's health.json). The secret key stays.
func (c *Cloud) Reset(also ...string) error {
	unlock, err := c.s.lock(true)
	if err != nil {
		return err
	}
	defer unlock()
	c.s.invalidate()
	var errs []error
	for _, f := range append([]string{cloudFile, controlFile, ecsFile, logsFile, rdsDataFile}, also...) { // kms.json stays, as secret.key: stack files encrypted with its keys still decrypt
		if err := os.Remove(filepath.Join(c.s.dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, os.RemoveAll(filepath.Join(c.s.dir, functionDir)), os.RemoveAll(filepath.Join(c.s.dir, ResourcesDir)))
	return errors.Join(errs...)
}

// ---- faults -------------------------------------------------------------

// AddFault records a fault and returns it with its id. Times 0 without
// Always means once.
func (c *Cloud) AddFault(f Fault) (Fault, error) {
	if f.Op == "" {
		f.Op = OpAny
	}
	if !slices.Contains([]string{OpCreate, OpUpdate, OpDelete, OpRead, OpAny}, f.Op) {
		return f, fmt.Errorf("invalid fault operation %q: use create, update, delete, read or *", f.Op)
	}
	if f.Times < 0 {
		return f, fmt.Errorf("fault times must not be negative")
	}
	if f.Times == 0 && !f.Always {
		f.Times = 1
	}
	if f.Type != "" && !strings.Contains(f.Type, "/") && !strings.ContainsAny(f.Type, ":.") && !knownTypeName(f.Type) {
		return f, fmt.Errorf("fault type %q names no known resource type (use e.g. aws:rds/cluster:Cluster or rds/cluster)", f.Type)
	}
	f.Created = c.now()
	f.Hits = 0
	err := c.s.update(func(_ *State, ctl *Control) error {
		ctl.NextID++
		f.ID = "f-" + strconv.Itoa(ctl.NextID)
		ctl.Faults = append(ctl.Faults, f)
		return nil
	})
	return f, err
}

func knownTypeName(name string) bool {
	for _, t := range awsmodel.Types() {
		if matchType(name, t) || strings.EqualFold(t[strings.LastIndex(t, ":")+1:], name) {
			return true
		}
	}
	return false
}

// Faults lists the pending faults.
func (c *Cloud) Faults() ([]Fault, error) {
	var out []Fault
	err := c.s.view(func(_ *State, ctl *Control) error {
		out = append(out, ctl.Faults...)
		return nil
	})
	return out, err
}

// RemoveFault deletes one fault by id.
func (c *Cloud) RemoveFault(id string) error {
	return c.s.update(func(_ *State, ctl *Control) error {
		n := len(ctl.Faults)
		ctl.Faults = slices.DeleteFunc(ctl.Faults, func(f Fault) bool { return f.ID == id })
		if len(ctl.Faults) == n {
			return fmt.Errorf("no fault %q", id)
		}
		return nil
	})
}

// ClearFaults deletes every fault.
func (c *Cloud) ClearFaults() error {
	return c.s.update(func(_ *State, ctl *Control) error {
		ctl.Faults = nil
		return nil
	})
}

// TakeFault consumes the first fault matching the operation, if any.
func (ctl *Control) TakeFault(stack, op, typ, name string) *Fault {
	for i := range ctl.Faults {
		f := &ctl.Faults[i]
		if !f.Matches(stack, op, typ, name) {
			continue
		}
		f.Hits++
		hit := *f
		if !f.Always {
			f.Times--
			if f.Times <= 0 {
				ctl.Faults = append(ctl.Faults[:i], ctl.Faults[i+1:]...)
			}
		}
		return &hit
	}
	return nil
}

// ---- latency ------------------------------------------------------------

// SetLatency adds or replaces the rule for (stack, op, type); a zero
// duration removes it.
func (c *Cloud) SetLatency(l Latency) error {
	if l.Op != "" && !slices.Contains([]string{OpCreate, OpUpdate, OpDelete, OpRead, OpInvoke, OpAny}, l.Op) {
		return fmt.Errorf("invalid latency operation %q: use create, update, delete, read, invoke or leave empty", l.Op)
	}
	if l.Op == OpAny {
		l.Op = ""
	}
	if l.Duration < 0 {
		return fmt.Errorf("latency must not be negative")
	}
	return c.s.update(func(_ *State, ctl *Control) error {
		ctl.Latency = slices.DeleteFunc(ctl.Latency, func(x Latency) bool {
			return x.Stack == l.Stack && x.Op == l.Op && x.Type == l.Type
		})
		if l.Duration > 0 {
			ctl.Latency = append(ctl.Latency, l)
		}
		return nil
	})
}

// Latencies lists the latency rules.
func (c *Cloud) Latencies() ([]Latency, error) {
	var out []Latency
	err := c.s.view(func(_ *State, ctl *Control) error {
		out = append(out, ctl.Latency...)
		return nil
	})
	return out, err
}

// ClearLatency removes every latency rule.
func (c *Cloud) ClearLatency() error {
	return c.s.update(func(_ *State, ctl *Control) error {
		ctl.Latency = nil
		return nil
	})
}

// LatencyFor picks the most specific rule matching an operation.
func LatencyFor(rules []Latency, key, op, typ string) (time.Duration, bool) {
	best, bestScore := time.Duration(0), -1
	for _, l := range rules {
		if !MatchStack(l.Stack, key) || (l.Op != "" && l.Op != op) || !matchType(l.Type, typ) {
			continue
		}
		score := 0
		if l.Stack != "" {
			score += 4
		}
		if l.Type != "" {
			score += 2
		}
		if l.Op != "" {
			score++
		}
		if score > bestScore {
			best, bestScore = time.Duration(l.Duration), score
		}
	}
	return best, bestScore >= 0
}

// ---- alarms -------------------------------------------------------------

const TypeAlarm = "aws:cloudwatch/metricAlarm:MetricAlarm"

// TypeFunction is a Lambda function, whose code the cloud keeps (see
// WriteFunctionCode).
const TypeFunction = "aws:lambda/function:Function"

func (r *Record) CurrentAlarm() AlarmState {
	if r.Alarm == nil {
		return AlarmState{State: AlarmOK, Updated: r.Created}
	}
	return *r.Alarm
}

// SetAlarm sets the state of a metric alarm named by logical name, alarm
// name, id or ARN within a stack or cell.
func (c *Cloud) SetAlarm(stack, name, newState, reason string) (Alarm, error) {
	newState = strings.ToUpper(newState)
	if !slices.Contains([]string{AlarmOK, AlarmAlarm, AlarmInsufficientData}, newState) {
		return Alarm{}, fmt.Errorf("invalid alarm state %q: use OK, ALARM or INSUFFICIENT_DATA", newState)
	}
	var out Alarm
	err := c.s.update(func(st *State, _ *Control) error {
		var r *Record
		for _, x := range st.Resources {
			if x.Type == TypeAlarm && MatchStack(stack, x.Key()) && (x.Name == name || x.ID == name || Str(x.Outputs["arn"]) == name) {
				if r != nil {
					return fmt.Errorf("alarm %q is ambiguous across stacks; name the stack", name)
				}
				r = x
			}
		}
		if r == nil {
			return fmt.Errorf("no metric alarm %q in the simulated cloud (stack %q)", name, stack)
		}
		r.Alarm = &AlarmState{State: newState, Reason: reason, Updated: c.now()}
		st.Touch(r.Key())
		out = r.ToAlarm()
		return nil
	})
	return out, err
}

func (r *Record) ToAlarm() Alarm {
	a := r.CurrentAlarm()
	return Alarm{Project: r.Project, Stack: r.Stack, Name: r.Name, AlarmName: r.ID, ARN: Str(r.Outputs["arn"]), Region: r.Region,
		State: a.State, Reason: a.Reason, Updated: a.Updated}
}

// ---- quotas -------------------------------------------------------------

// SetQuota overrides a quota's value in a region ("" or "*" for every
// region; account-wide quotas ignore the region). A negative value
// restores AWS's default.
func (c *Cloud) SetQuota(region, code string, value float64) error {
	q, ok := awsmodel.QuotaDefByCode(code)
	if !ok {
		var codes []string
		for _, d := range awsmodel.QuotaDefs() {
			codes = append(codes, d.Code)
		}
		return fmt.Errorf("unknown quota %q; known: %s", code, strings.Join(codes, ", "))
	}
	if region == "" || q.Scope == "account" {
		region = "*"
	}
	if region != "*" && !awsmodel.ValidRegion(region) {
		return fmt.Errorf("invalid region %q", region)
	}
	if math.IsNaN(value) || math.IsInf(value, 0) {
		// Service Quotas' JSON carries a finite number; the simulator must
		// not hold a value AWS cannot send.
		return fmt.Errorf("quota %s: value %g is not a finite number", q.Code, value)
	}
	return c.s.update(func(_ *State, ctl *Control) error {
		if ctl.Quotas == nil {
			ctl.Quotas = map[string]float64{}
		}
		key := region + "|" + q.Code
		if value < 0 {
			delete(ctl.Quotas, key)
		} else {
			ctl.Quotas[key] = value
		}
		return nil
	})
}

func (ctl *Control) QuotaValue(region string, q awsmodel.QuotaDef) float64 {
	if q.Scope != "account" {
		if v, ok := ctl.Quotas[region+"|"+q.Code]; ok {
			return v
		}
	}
	if v, ok := ctl.Quotas["*|"+q.Code]; ok {
		return v
	}
	return q.Default
}

// Quotas lists every quota the simulator enforces with its value in region.
func (c *Cloud) Quotas(region string) ([]Quota, error) {
	if region == "" {
		region = "us-east-1"
	}
	var out []Quota
	err := c.s.view(func(_ *State, ctl *Control) error {
		for _, q := range awsmodel.QuotaDefs() {
			out = append(out, Quota{Code: q.Code, Name: q.Name, Scope: q.Scope, Region: region, Default: q.Default, Value: ctl.QuotaValue(region, q)})
		}
		return nil
	})
	return out, err
}

// Usage reports, for every quota, how much each scope in region uses
// (account-wide quotas are included for any region).
func (c *Cloud) Usage(region string) ([]Usage, error) {
	if region == "" {
		region = "us-east-1"
	}
	var out []Usage
	err := c.s.view(func(st *State, ctl *Control) error {
		v := newView(st, c.s.codec)
		used := map[[2]string]float64{}
		// The region's default network counts, as at every create.
		for _, r := range append(v.Defaults(region), st.Resources...) {
			for _, u := range v.Consumption(r) {
				used[[2]string{u.Code, u.Scope}] += u.Amount
			}
		}
		for _, q := range awsmodel.QuotaDefs() {
			keys := map[string]bool{}
			for k := range used {
				if k[0] == q.Code && scopeInRegion(q, k[1], region, st) {
					keys[k[1]] = true
				}
			}
			if len(keys) == 0 {
				def := region
				if q.Scope == "account" {
					def = "account"
				}
				if q.Scope == "region" || q.Scope == "account" {
					keys[def] = true
				}
			}
			for k := range keys {
				out = append(out, Usage{Code: q.Code, Name: q.Name, Scope: q.Scope, Key: k, Used: used[[2]string{q.Code, k}], Limit: ctl.QuotaValue(region, q)})
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Code != out[j].Code {
			return out[i].Code < out[j].Code
		}
		return out[i].Key < out[j].Key
	})
	return out, err
}

// scopeInRegion reports whether a usage key belongs to region.
func scopeInRegion(q awsmodel.QuotaDef, key, region string, st *State) bool {
	switch q.Scope {
	case "account":
		return true
	case "region":
		return key == region
	case "zone":
		return strings.HasPrefix(key, region)
	}
	// vpc, load-balancer, security-group, ecs-cluster: the owning resource's region.
	for _, r := range st.Resources {
		if r.ID == key || Str(r.Outputs["arn"]) == key || strings.HasPrefix(key, r.ID+"/") {
			return r.Region == region
		}
	}
	return strings.Contains(key, ":"+region+":")
}

// ---- Lambda code --------------------------------------------------------

// FunctionCode returns the files of the latest code of a Lambda function,
// named by function name or logical name.
func (c *Cloud) FunctionCode(name string) (map[string]string, error) {
	return c.FunctionCodeVersion(name, "$LATEST")
}

// FunctionCodeVersion returns the files of one published version ("1",
// "2"…) or "$LATEST".
func (c *Cloud) FunctionCodeVersion(name, version string) (map[string]string, error) {
	var region, fn string
	err := c.s.view(func(st *State, _ *Control) error {
		var hits []*Record
		for _, r := range st.Resources {
			if r.Type == "aws:lambda/function:Function" && (r.ID == name || r.Name == name || Str(r.Outputs["arn"]) == name) {
				hits = append(hits, r)
			}
		}
		if len(hits) == 0 {
			return fmt.Errorf("no Lambda function %q in the simulated cloud", name)
		}
		if len(hits) > 1 {
			return fmt.Errorf("Lambda function %q is ambiguous (%d matches); use the function name", name, len(hits))
		}
		region, fn = hits[0].Region, hits[0].ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	var fc LambdaCode
	if err := ReadJSON(filepath.Join(c.s.dir, functionDir, region, fn, versionFile(version)), &fc); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("Lambda function %s has no version %s", fn, version)
		}
		return nil, err
	}
	return fc.Files, nil
}

type LambdaCode struct {
	Name       string `json:"name"`
	Region     string `json:"region"`
	Version    string `json:"version"`
	CodeSha256 string `json:"codeSha256"`
	// Description is the function's description when the version was
	// written (a published version keeps its own).
	Description string            `json:"description,omitempty"`
	Files       map[string]string `json:"files"`
	Written     time.Time         `json:"written"`
}

// WriteFunctionCode stores a function's code as $LATEST and, when
// published, under its version number.
func (c *Cloud) WriteFunctionCode(region, name string, outputs resource.PropertyMap) error {
	code, ok := outputs["code"]
	if !ok {
		return nil
	}
	if code.IsSecret() {
		code = code.SecretValue().Element
	}
	fc := LambdaCode{Name: name, Region: region, Files: map[string]string{}, Written: c.now()}
	fc.CodeSha256, _ = awsmodel.CodeHash(code)
	if v := outputs["version"]; v.IsString() {
		fc.Version = v.StringValue()
	}
	if d := outputs["description"]; d.IsString() {
		fc.Description = d.StringValue()
	}
	switch {
	case code.IsArchive():
		collectFiles(code.ArchiveValue(), "", fc.Files)
	case code.IsAsset():
		if b, err := code.AssetValue().Bytes(); err == nil {
			fc.Files[filepath.Base(code.AssetValue().Path)] = string(b)
		}
	}
	dir := filepath.Join(c.s.dir, functionDir, region, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := WriteJSON(filepath.Join(dir, versionFile("$LATEST")), fc); err != nil {
		return err
	}
	if fc.Version != "" && fc.Version != "$LATEST" {
		return WriteJSON(filepath.Join(dir, versionFile(fc.Version)), fc)
	}
	return nil
}

// RemoveFunctionCode removes every stored version of a function's code.
func (c *Cloud) RemoveFunctionCode(region, name string) error {
	return os.RemoveAll(filepath.Join(c.s.dir, functionDir, region, name))
}

// versionFile names a version's file: latest.json for $LATEST, 3.json…
func versionFile(version string) string {
	if version == "$LATEST" || version == "" {
		return "latest.json"
	}
	return filepath.Base(version) + ".json"
}

func collectFiles(a *resource.Archive, prefix string, out map[string]string) {
	if a.Assets == nil {
		if a.Path != "" {
			if r, err := a.Open(); err == nil {
				defer r.Close()
				for {
					name, blob, err := r.Next()
					if err != nil {
						break
					}
					b := make([]byte, blob.Size())
					if _, err := blob.Read(b); err == nil || int64(len(b)) == blob.Size() {
						out[prefix+name] = string(b)
					}
					blob.Close()
				}
			}
		}
		return
	}
	for name, x := range a.Assets {
		switch t := x.(type) {
		case *resource.Asset:
			if t.IsText() {
				out[prefix+name] = t.Text
			} else if b, err := t.Bytes(); err == nil {
				out[prefix+name] = string(b)
			} else {
				out[prefix+name] = ""
			}
		case *resource.Archive:
			collectFiles(t, prefix+name+"/", out)
		}
	}
}

// WithClock returns the cloud reading time from now (tests, rehearsals):
// the health model and alarm timestamps follow it.
func (c *Cloud) WithClock(now func() time.Time) *Cloud {
	return &Cloud{s: c.s, now: now}
}

// Snapshot is a DB cluster snapshot a delete left behind.
type Snapshot struct {
	Identifier string    `json:"identifier"`
	Region     string    `json:"region"`
	Cluster    string    `json:"cluster"`
	Project    string    `json:"project,omitempty"`
	Stack      string    `json:"stack"`
	Created    time.Time `json:"created"`
}

// Snapshots lists the DB cluster snapshots in the cloud, oldest first.
func (c *Cloud) Snapshots() ([]Snapshot, error) {
	var out []Snapshot
	err := c.s.view(func(st *State, _ *Control) error {
		for _, sn := range st.Snapshots {
			out = append(out, sn)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Snapshot) int { return a.Created.Compare(b.Created) })
	return out, err
}
