package cellmodule

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/offline"
)

const (
	testSecret    = "0rigin-V3rify_s3cret.value"
	testSecretKey = "cells:originVerifySecret"
	testBucket    = "cellctl-fleet-example"
	testAccount   = "123456789012"
	testDomain    = "cells.example.com"
	testZone      = "Z0123456789ABCDEFGHIJ"
	// testCertificate is cell-g's existing certificate (cell-a requests one).
	testCertificate = "arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c-abcd-4ef0-9876-0123456789ab"
)

func testSpec(id string, index int, region, nat string) spec.Cell {
	c := spec.Baseline()
	c.ID, c.Index, c.Region, c.NATMode = id, index, region, nat
	c.Image = "registry.example.com/app:1.2.3"
	c.FleetBucket = testBucket
	c.FleetDomain = testDomain
	c.HostedZoneID = testZone
	// A fleet named "shop": every account-unique name carries it.
	c.NamePrefix = "shop"
	return c
}

// testCells are two deliberately different cells: per-AZ NAT with two cache
// nodes and two DB instances, and a single NAT with one of each, another
// region, engine and port.
func testCells() []spec.Cell {
	a := testSpec("cell-a", 1, "us-east-1", spec.NATPerAZ)
	g := testSpec("cell-g", 7, "eu-west-1", spec.NATSingle)
	g.CacheNodes = 1
	g.CacheEngine = "redis"
	g.CacheEngineVersion = "7.1"
	g.AuroraInstances = 1
	g.AuroraEngineVersion = "15.7"
	g.ContainerPort = 9000
	g.DesiredCount = 3
	g.QueueMaxReceiveCount = 9
	g.QueueVisibilityTimeoutSeconds = 120
	g.Alarm5xxRatePercent = 2.5
	g.AlarmP99LatencyMs = 750
	g.AlarmEvalPeriods = 5
	g.LogRetentionDays = 90
	g.CertificateArn = testCertificate
	return []spec.Cell{a, g}
}

// cellRun is one offline run of NewCell.
type cellRun struct {
	spec    spec.Cell
	rec     *offline.Recorder
	cell    *Cell
	outputs map[string]offline.Value
}

func runCell(s spec.Cell, model offline.Model, secret func(ctx *pulumi.Context) pulumi.StringInput) (*cellRun, error) {
	return runCellArgs(s, model, secret, nil)
}

// runCellArgs is runCell with more CellArgs (more may be nil).
func runCellArgs(s spec.Cell, model offline.Model, secret func(ctx *pulumi.Context) pulumi.StringInput, more func(*CellArgs)) (*cellRun, error) {
	opts := offline.Options{
		Project:    "cells",
		Stack:      s.ID,
		Config:     map[string]string{testSecretKey: testSecret},
		SecretKeys: []string{testSecretKey},
	}
	r := &cellRun{spec: s}
	rec, exports, err := offline.Run(opts, model, func(ctx *pulumi.Context) error {
		var in pulumi.StringInput
		if secret != nil {
			in = secret(ctx)
		} else {
			// What config.RequireSecret(ctx, "cells:originVerifySecret") yields;
			// the config package itself needs a go.mod entry (spf13/cast)
			// this package does not own.
			in = pulumi.ToSecret(pulumi.String(testSecret)).(pulumi.StringOutput)
		}
		args := &CellArgs{Spec: s, OriginVerifySecret: in}
		if more != nil {
			more(args)
		}
		c, err := NewCell(ctx, s.ID, args)
		if err != nil {
			return err
		}
		r.cell = c
		for k, v := range c.Outputs {
			ctx.Export(k, v)
		}
		return nil
	})
	r.rec = rec
	if err != nil {
		return r, err
	}
	r.outputs, err = offline.AwaitAll(exports)
	return r, err
}

var (
	runsMu sync.Mutex
	runs   = map[string]*cellRun{}
)

// cachedRun runs each test cell once for all tests.
func cachedRun(t *testing.T, s spec.Cell) *cellRun {
	t.Helper()
	runsMu.Lock()
	defer runsMu.Unlock()
	if r, ok := runs[s.ID]; ok {
		return r
	}
	r, err := runCell(s, newTestModel(s.Region), nil)
	if err != nil {
		t.Fatalf("NewCell(%s): %v", s.ID, err)
	}
	runs[s.ID] = r
	return r
}

// forEachCell runs a subtest per test cell.
func forEachCell(t *testing.T, f func(t *testing.T, r *cellRun)) {
	for _, s := range testCells() {
		t.Run(s.ID, func(t *testing.T) { f(t, cachedRun(t, s)) })
	}
}

// secretValue marks a value that was a Pulumi secret.
type secretValue struct{ V any }

const unknownValue = "<unknown>"

// plain turns a property value into Go values, keeping secrets visible as
// secretValue so tests can assert on both the flag and the value.
func plain(v resource.PropertyValue) any {
	switch {
	case v.IsSecret():
		return secretValue{plain(v.SecretValue().Element)}
	case v.IsComputed():
		return unknownValue
	case v.IsOutput():
		o := v.OutputValue()
		if !o.Known {
			return unknownValue
		}
		if o.Secret {
			return secretValue{plain(o.Element)}
		}
		return plain(o.Element)
	case v.IsArray():
		out := []any{}
		for _, e := range v.ArrayValue() {
			out = append(out, plain(e))
		}
		return out
	case v.IsObject():
		return plainMap(v.ObjectValue())
	case v.IsNull():
		return nil
	default:
		return v.Mappable()
	}
}

func plainMap(m resource.PropertyMap) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[string(k)] = plain(v)
	}
	return out
}

func in(r *offline.Resource) map[string]any  { return plainMap(r.Inputs) }
func out(r *offline.Resource) map[string]any { return plainMap(r.Outputs) }

// get walks maps (string keys) and arrays (int indexes); nil when absent.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

func strs(v any) []string {
	var out []string
	a, _ := v.([]any)
	for _, e := range a {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func sameSet(a, b []string) bool {
	return fmt.Sprint(sortedCopy(a)) == fmt.Sprint(sortedCopy(b))
}

// one returns the single recorded resource of a name, failing otherwise.
func (r *cellRun) one(t *testing.T, suffix string) *offline.Resource {
	t.Helper()
	res := r.rec.ByName(r.spec.ID + "-" + suffix)
	if res == nil {
		t.Fatalf("no resource named %s-%s", r.spec.ID, suffix)
	}
	return res
}

// idOf is the id the test model gives a resource of that name.
func (r *cellRun) idOf(suffix string) string { return r.spec.ID + "-" + suffix + "-id" }

func (r *cellRun) ids(typ string, filter func(*offline.Resource) bool) []string {
	var ids []string
	for _, res := range r.rec.ByType(typ) {
		if filter == nil || filter(res) {
			ids = append(ids, res.ID)
		}
	}
	return ids
}

func (r *cellRun) subnetIDs(tier string) []string {
	return r.ids("aws:ec2/subnet:Subnet", func(res *offline.Resource) bool {
		return str(get(in(res), "tags", "tier")) == tier
	})
}

func mustJSON(t *testing.T, s string, into any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), into); err != nil {
		t.Fatalf("invalid JSON %q: %v", s, err)
	}
}

// policyOf decodes an IAM policy input.
func policyOf(t *testing.T, v any) PolicyDocument {
	t.Helper()
	var doc PolicyDocument
	s, ok := v.(string)
	if !ok {
		t.Fatalf("policy is %T (%v), want a JSON string", v, v)
	}
	mustJSON(t, s, &doc)
	if doc.Version != "2012-10-17" {
		t.Errorf("policy version %q", doc.Version)
	}
	return doc
}

func containsString(v any, needle string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, needle)
	case []any:
		for _, e := range x {
			if containsString(e, needle) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if containsString(e, needle) {
				return true
			}
		}
	}
	return false
}

// listenerCertificate is the certificate the cell's listener must use: the
// configured one, or the one the cell requested once it is validated.
func (r *cellRun) listenerCertificate(t *testing.T) string {
	t.Helper()
	if r.spec.CertificateArn != "" {
		return r.spec.CertificateArn
	}
	return str(out(r.one(t, "cert-validated"))["certificateArn"])
}
