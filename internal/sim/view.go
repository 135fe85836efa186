package sim

import (
	"strconv"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
)

// view is the cloud as awsmodel sees it during one locked operation:
// lookups of live resources (decoded on demand) and counters.
type view struct {
	st    *state
	codec *codec
}

var _ awsmodel.Cloud = (*view)(nil)

func newView(st *state, c *codec) *view {
	return &view{st: st, codec: c}
}

// outputs decodes a record's outputs once per process (records live in
// the store's cache while their shard file is unchanged).
func (v *view) outputs(r *record) resource.PropertyMap {
	if r.decoded != nil {
		return r.decoded
	}
	m, err := v.codec.decodeMap(r.Outputs)
	if err != nil {
		m = resource.PropertyMap{}
	}
	r.decoded = m
	return m
}

func (v *view) env(r *record) awsmodel.Env {
	return awsmodel.Env{Partition: "aws", Account: v.account(), Region: r.Region}
}

func (v *view) account() string {
	if v.st.Account == "" {
		return awsmodel.DefaultAccount
	}
	return v.st.Account
}

// refers reports whether ref names r: its id, ARN, URL, a qualified ARN
// (Lambda versions, task definition revisions) or, for resources AWS
// addresses by name, its name.
func refers(r *record, ref string) bool {
	if ref == "" {
		return false
	}
	if r.ID == ref {
		return true
	}
	arn := sval(r.Outputs["arn"])
	if arn != "" && (arn == ref || (strings.HasPrefix(ref, arn+":") && r.Type == "aws:lambda/function:Function")) {
		return true
	}
	if url := sval(r.Outputs["url"]); url != "" && url == ref {
		return true
	}
	switch r.Type {
	case "aws:ecs/cluster:Cluster":
		return sval(r.Outputs["name"]) == ref
	case "aws:ecs/taskDefinition:TaskDefinition":
		rev, _ := r.Outputs["revision"].(float64)
		return ref == r.ID+":"+strconv.Itoa(int(rev)) || ref == sval(r.Outputs["arnWithoutRevision"])
	case "aws:iam/role:Role":
		return sval(r.Outputs["name"]) == ref
	case "aws:route53/record:Record":
		return awsmodel.RecordLookupKey(sval(r.Outputs["fqdn"]), sval(r.Outputs["type"])) == ref
	}
	return false
}

func (v *view) uniqueNames(r *record) []awsmodel.UniqueName {
	if !r.uniqOK {
		r.unique, r.uniqOK = awsmodel.UniqueNames(r.Type, v.env(r), v.outputs(r)), true
	}
	return r.unique
}

// Lookup implements awsmodel.Cloud.
func (v *view) Lookup(ref string) (string, resource.PropertyMap, bool) {
	// Account facts that are not resources: a hosted zone's name, and
	// whether an engine version is still offered.
	if id, ok := strings.CutPrefix(ref, "route53-zone:"); ok {
		if name, known := v.st.Zones[id]; known {
			return "route53:HostedZone", resource.PropertyMap{"id": resource.NewStringProperty(id), "name": resource.NewStringProperty(name)}, true
		}
		return "", nil, false
	}
	if ev, ok := strings.CutPrefix(ref, "rds-engine-version:"); ok {
		engine, version, _ := strings.Cut(ev, ":")
		if v.st.retired(engine, version) {
			return "rds:DBEngineVersion", resource.PropertyMap{"status": resource.NewStringProperty("retired")}, true
		}
		return "", nil, false
	}
	for _, r := range v.st.Resources {
		if refers(r, ref) {
			return r.Type, v.outputs(r), true
		}
	}
	return "", nil, false
}

// Next implements awsmodel.Cloud.
func (v *view) Next(counter string) int {
	if v.st.Counters == nil {
		v.st.Counters = map[string]int{}
	}
	v.st.Counters[counter]++
	v.st.touchMeta()
	return v.st.Counters[counter]
}

// lookupTyped finds a live resource of typ named by ref in region (global
// types ignore the region).
func (v *view) lookupTyped(typ, ref, region string) *record {
	for _, r := range v.st.Resources {
		if r.Type == typ && refers(r, ref) && (globalType(typ) || r.Region == region) {
			return r
		}
	}
	return nil
}

// globalType reports types whose names and ids span regions.
func globalType(typ string) bool {
	switch {
	case strings.HasPrefix(typ, "aws:iam/"), strings.HasPrefix(typ, "aws:cloudfront/"), strings.HasPrefix(typ, "aws:s3/"):
		return true
	}
	return false
}

func (v *view) consumption(r *record) []awsmodel.Consumption {
	if !quotaTypes()[r.Type] {
		return nil
	}
	return awsmodel.QuotaUsage(r.Type, v.env(r), v.outputs(r), v)
}

var quotaTypes = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, q := range awsmodel.QuotaDefs() {
		m[q.Type] = true
	}
	return m
})
