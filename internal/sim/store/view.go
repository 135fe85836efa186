package store

import (
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
)

// View is the cloud as awsmodel sees it during one locked operation:
// lookups of live resources (decoded on demand) and counters.
type View struct {
	State *State
	codec *codec
	// public finds a Route 53 record in the other accounts' zones: DNS
	// is public, so ACM validates a certificate by a record whatever
	// account's zone holds it (nil: this account only).
	public func(ref string) (string, resource.PropertyMap, bool)
	// defaults caches Defaults per region for this operation.
	defaults map[string][]*Record
}

var (
	_ awsmodel.Cloud  = (*View)(nil)
	_ awsmodel.Lister = (*View)(nil)
)

func newView(st *State, c *codec) *View {
	return &View{State: st, codec: c}
}

// Outputs decodes a record's outputs once per process (records live in
// the store's cache while their shard file is unchanged).
func (v *View) Outputs(r *Record) resource.PropertyMap {
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

func (v *View) env(r *Record) awsmodel.Env {
	return awsmodel.Env{Partition: "aws", Account: v.Account(), Region: r.Region}
}

func (v *View) Account() string {
	if v.State.Account == "" {
		return awsmodel.DefaultAccount
	}
	return v.State.Account
}

// Refers reports whether ref names r: its id, ARN, URL, a qualified ARN
// (Lambda versions, task definition revisions) or, for resources AWS
// addresses by name, its name.
func Refers(r *Record, ref string) bool {
	if ref == "" {
		return false
	}
	if r.ID == ref {
		return true
	}
	arn := Str(r.Outputs["arn"])
	if arn != "" && (arn == ref || (strings.HasPrefix(ref, arn+":") && r.Type == "aws:lambda/function:Function")) {
		return true
	}
	if url := Str(r.Outputs["url"]); url != "" && url == ref {
		return true
	}
	switch r.Type {
	case "aws:ecs/cluster:Cluster":
		return Str(r.Outputs["name"]) == ref
	case "aws:ecs/taskDefinition:TaskDefinition":
		rev, _ := r.Outputs["revision"].(float64)
		return ref == r.ID+":"+strconv.Itoa(int(rev)) || ref == Str(r.Outputs["arnWithoutRevision"])
	case "aws:iam/role:Role":
		return Str(r.Outputs["name"]) == ref
	case "aws:route53/record:Record":
		return awsmodel.RecordLookupKey(Str(r.Outputs["fqdn"]), Str(r.Outputs["type"])) == ref
	}
	return false
}

func (v *View) UniqueNames(r *Record) []awsmodel.UniqueName {
	if !r.uniqOK {
		r.unique, r.uniqOK = awsmodel.UniqueNames(r.Type, v.env(r), v.Outputs(r)), true
	}
	return r.unique
}

// Lookup implements awsmodel.Cloud.
func (v *View) Lookup(ref string) (string, resource.PropertyMap, bool) {
	// Account facts that are not resources: a hosted zone's name, and
	// whether an engine version is still offered.
	if id, ok := strings.CutPrefix(ref, "route53-zone:"); ok {
		if name, known := v.State.Zones[id]; known {
			return "route53:HostedZone", resource.PropertyMap{"id": resource.NewStringProperty(id), "name": resource.NewStringProperty(name)}, true
		}
		return "", nil, false
	}
	if ev, ok := strings.CutPrefix(ref, "rds-engine-version:"); ok {
		engine, version, _ := strings.Cut(ev, ":")
		if v.State.IsRetired(engine, version) {
			return "rds:DBEngineVersion", resource.PropertyMap{"status": resource.NewStringProperty("retired")}, true
		}
		return "", nil, false
	}
	for _, r := range v.State.Resources {
		if Refers(r, ref) {
			return r.Type, v.Outputs(r), true
		}
	}
	if v.public != nil && strings.HasPrefix(ref, "route53:") {
		return v.public(ref)
	}
	if r := v.lookupDefault(ref); r != nil {
		return r.Type, v.Outputs(r), true
	}
	return "", nil, false
}

// Defaults are the account's default network in region — the default
// VPC, its internet gateway and its default security group
// (awsmodel.DefaultNetwork) — as records of no stack. AWS creates them in
// every region of every account, so a simulated account has them in each
// region it is used in: the describe calls list them and the quota checks
// count them (VPCs, internet gateways and security groups per Region),
// as on AWS. They are computed, never stored: no stack owns them, so no
// up, destroy or reset touches them.
func (v *View) Defaults(region string) []*Record {
	if region == "" {
		return nil
	}
	if rs, ok := v.defaults[region]; ok {
		return rs
	}
	var out []*Record
	for _, d := range awsmodel.DefaultNetwork(awsmodel.Env{Partition: "aws", Account: v.Account(), Region: region}) {
		r := &Record{Type: d.Type, ID: d.ID, Region: region}
		r.SetOutputs(d.Outputs.Mappable(), d.Outputs)
		out = append(out, r)
	}
	if v.defaults == nil {
		v.defaults = map[string][]*Record{}
	}
	v.defaults[region] = out
	return out
}

// lookupDefault finds a default network resource by id or ARN in any
// region the account uses or the model knows.
func (v *View) lookupDefault(ref string) *Record {
	if !strings.HasPrefix(ref, "vpc-") && !strings.HasPrefix(ref, "igw-") && !strings.HasPrefix(ref, "sg-") && !strings.HasPrefix(ref, "arn:aws:ec2:") {
		return nil
	}
	regions := map[string]bool{}
	for _, r := range awsmodel.KnownRegions() {
		regions[r] = true
	}
	for _, r := range v.State.Resources {
		regions[r.Region] = true
	}
	for region := range regions {
		for _, r := range v.Defaults(region) {
			if Refers(r, ref) {
				return r
			}
		}
	}
	return nil
}

// Next implements awsmodel.Cloud.
func (v *View) Next(counter string) int {
	if v.State.Counters == nil {
		v.State.Counters = map[string]int{}
	}
	v.State.Counters[counter]++
	v.State.TouchMeta()
	return v.State.Counters[counter]
}

// List implements awsmodel.Lister: the live resources of typ in this
// account, every region (ids are unique across regions).
func (v *View) List(typ string) []awsmodel.Listed {
	var out []awsmodel.Listed
	for _, r := range v.State.Resources {
		if r.Type == typ {
			out = append(out, awsmodel.Listed{ID: r.ID, Outputs: v.Outputs(r)})
		}
	}
	return out
}

// LookupTyped finds a live resource of typ named by ref in region (global
// types ignore the region).
func (v *View) LookupTyped(typ, ref, region string) *Record {
	for _, r := range v.State.Resources {
		if r.Type == typ && Refers(r, ref) && (GlobalType(typ) || r.Region == region) {
			return r
		}
	}
	for _, r := range v.Defaults(region) {
		if r.Type == typ && Refers(r, ref) {
			return r
		}
	}
	return nil
}

// GlobalType reports types whose names and ids span regions.
func GlobalType(typ string) bool {
	switch {
	case strings.HasPrefix(typ, "aws:iam/"), strings.HasPrefix(typ, "aws:cloudfront/"), strings.HasPrefix(typ, "aws:s3/"):
		return true
	}
	return false
}

func (v *View) Consumption(r *Record) []awsmodel.Consumption {
	if !awsmodel.Counted(r.Type) {
		return nil // no outputs to decode
	}
	return awsmodel.QuotaUsage(r.Type, v.env(r), v.Outputs(r), v)
}
