package awsmodel

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsfacts"
)

// Rule is one rule AWS enforces (or, for Audit-only rules, one AWS
// behaviour that breaks a deployment without an API error) that the
// programs rely on. The mocks and the simulator refuse a resource that
// breaks an API rule with the error AWS gives (CheckRules, run from
// Outputs); `cellctl plan --strict` runs every rule, quotas included, over
// every rendered resource (Audit).
type Rule struct {
	// ID names the rule in findings, e.g. "ec2.sg-rule-description".
	ID string `json:"id"`
	// Doc cites the AWS document the rule comes from.
	Doc string `json:"doc"`
	// Code is the AWS error code of a violation.
	Code string `json:"code"`
	// AuditOnly rules are not API refusals: AWS accepts the resource and
	// the failure comes later (a 502 at request time, a failed next up).
	// Only Audit reports them.
	AuditOnly bool `json:"auditOnly,omitempty"`

	applies func(typ string) bool
	// check returns "" or AWS's message for a violation.
	check func(r ruleInput) string
	// codeOf, where set, is the error code of a violation when the
	// service answers with its own code rather than Code (IAM's tag
	// limits); "" keeps Code.
	codeOf func(r ruleInput) string
}

// code is the error code a violation of the rule gets for r.
func (rule Rule) code(r ruleInput) string {
	if rule.codeOf != nil {
		if c := rule.codeOf(r); c != "" {
			return c
		}
	}
	return rule.Code
}

// Applies reports whether the rule looks at resources of typ.
func (r Rule) Applies(typ string) bool { return r.applies(typ) }

type ruleInput struct {
	typ, name string
	in        resource.PropertyMap
	env       Env
	cloud     Cloud
	// op is OpCreate or OpUpdate; old holds the outputs before an update
	// (nil on create). Create-time and update-time restrictions read them;
	// Audit judges every rendered resource as a create (what a first up
	// sends).
	op  int
	old resource.PropertyMap
	// at is the date the dated rules (a Lambda runtime's deprecation
	// path) judge at; zero: they do not judge.
	at time.Time
	// id is the resource's own id where it already has one (an audited
	// resource, listed among its siblings); "" on a create.
	id string
}

func (r ruleInput) lookup(ref string) (string, resource.PropertyMap, bool) {
	if r.cloud == nil || ref == "" {
		return "", nil, false
	}
	return r.cloud.Lookup(ref)
}

func types(ts ...string) func(string) bool {
	return func(t string) bool { return slices.Contains(ts, t) }
}

// taggable reports types whose pulumi-aws inputs have tags.
func taggable(t string) bool {
	s, ok := SchemaOf(t)
	if !ok {
		return false
	}
	_, has := s.Inputs["tags"]
	return has
}

// Rules lists every rule, in a stable order.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// RuleByID finds a rule.
func RuleByID(id string) (Rule, bool) {
	for _, r := range rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// CheckRules returns the error AWS gives for the first API rule inputs of
// typ break, or nil. Unknown values (previews) are never judged.
func CheckRules(typ, name string, inputs resource.PropertyMap, env Env, cloud Cloud, op int) error {
	return checkRules(ruleInput{typ: typ, name: name, in: inputs, env: env.normalized(), cloud: cloud, op: op})
}

func checkRules(in ruleInput) error {
	typ, name, op := in.typ, in.name, in.op
	for _, r := range rules {
		if r.AuditOnly || !r.applies(typ) {
			continue
		}
		if msg := r.check(in); msg != "" {
			return NewAPIError(typ, op, name, r.code(in), msg)
		}
	}
	return nil
}

// Violation is one rule a rendered resource breaks.
type Violation struct {
	Rule    string `json:"rule"`
	Doc     string `json:"doc"`
	Stack   string `json:"stack"`
	Type    string `json:"type"`
	Name    string `json:"name"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s %q: %s: %s (%s; %s)", v.Stack, v.Type, v.Name, v.Code, v.Message, v.Rule, v.Doc)
}

// AuditResource is one rendered resource for Audit.
type AuditResource struct {
	Stack   string
	Type    string
	Name    string
	ID      string
	Inputs  resource.PropertyMap
	Outputs resource.PropertyMap
	Env     Env
	// At is the date the dated rules judge at (a Lambda runtime's block
	// dates); zero: they do not judge.
	At time.Time
}

// auditCloud answers lookups over the rendered resources of one audit.
type auditCloud map[string]*AuditResource

func (a auditCloud) Lookup(ref string) (string, resource.PropertyMap, bool) {
	if r, ok := a[ref]; ok {
		return r.Type, r.Outputs, true
	}
	return "", nil, false
}
func (a auditCloud) Next(string) int { return 1 }

// List implements Lister: each rendered resource once (the map holds it
// under its id and its ARN).
func (a auditCloud) List(typ string) []Listed {
	seen := map[*AuditResource]bool{}
	var out []Listed
	for _, r := range a {
		if r.Type == typ && !seen[r] {
			seen[r] = true
			out = append(out, Listed{ID: r.ID, Outputs: r.Outputs})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// notAWS reports resources no AWS rule can apply to.
func notAWS(typ string) bool {
	return strings.HasPrefix(typ, "pulumi:") || !strings.HasPrefix(typ, "aws:")
}

// Audit runs every rule over every resource (and sums quota usage per
// scope against AWS's default quotas). A resource of an AWS type the model
// does not know is itself a finding: no rule could have looked at it.
func Audit(rs []AuditResource) []Violation {
	cloud := auditCloud{}
	for i := range rs {
		r := &rs[i]
		for _, k := range []string{r.ID, str(r.Outputs, "arn")} {
			if k != "" {
				cloud[k] = r
			}
		}
		if r.Type == tRecord {
			cloud[RecordLookupKey(str(r.Outputs, "fqdn"), str(r.Outputs, "type"))] = r
		}
	}
	var out []Violation
	add := func(r *AuditResource, rule Rule, code, msg string) {
		out = append(out, Violation{Rule: rule.ID, Doc: rule.Doc, Stack: r.Stack, Type: r.Type, Name: r.Name, Code: code, Message: msg})
	}
	type usageKey struct{ code, scope string }
	usage := map[usageKey]float64{}
	owner := map[usageKey]*AuditResource{}
	for i := range rs {
		r := &rs[i]
		if notAWS(r.Type) {
			continue
		}
		if !Known(r.Type) {
			add(r, knownTypeRule, knownTypeRule.Code, fmt.Sprintf("internal/awsmodel has no knowledge of %s: add its spec (and rules) before a program uses it", r.Type))
			continue
		}
		in := ruleInput{typ: r.Type, name: r.Name, in: r.Inputs, env: r.Env.normalized(), cloud: cloud, at: r.At, id: r.ID}
		for _, rule := range rules {
			if rule.applies(r.Type) {
				if msg := rule.check(in); msg != "" {
					add(r, rule, rule.code(in), msg)
				}
			}
		}
		for _, u := range QuotaUsage(r.Type, r.Env, r.Outputs, cloud) {
			k := usageKey{u.Code, u.Scope}
			usage[k] += u.Amount
			if owner[k] == nil {
				owner[k] = r
			}
		}
	}
	keys := make([]usageKey, 0, len(usage))
	for k := range usage {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].code != keys[j].code {
			return keys[i].code < keys[j].code
		}
		return keys[i].scope < keys[j].scope
	})
	for _, k := range keys {
		q, ok := QuotaDefByCode(k.code)
		if !ok || usage[k] <= q.Default {
			continue
		}
		r := owner[k]
		out = append(out, Violation{Rule: "quota." + q.Code, Doc: quotaDoc, Stack: r.Stack, Type: r.Type, Name: r.Name, Code: q.ErrorCode,
			Message: fmt.Sprintf("%s: %s uses %g of the default quota %g (%s)", q.Name, k.scope, usage[k], q.Default, q.ErrorMessage)})
	}
	return out
}

const quotaDoc = "Service Quotas default values: Amazon VPC quotas, ELB quotas, RDS quotas, ElastiCache quotas (each QuotaDef's code)"

var knownTypeRule = Rule{ID: "awsmodel.known-type", Doc: "internal/awsmodel: every AWS type a program declares must be modelled", Code: "UnmodelledType"}

// Character sets and limits, each from the document its rule cites.
var (
	reRuleDescription  = regexp_(`^[a-zA-Z0-9. _\-:/()#,@\[\]+=;{}!$*]*$`)
	reGroupDescription = regexp_(`^[a-zA-Z0-9. _\-:/()#,@\[\]+=&;{}!$*]*$`)
	reSnapshotID       = regexp_(`^[a-zA-Z][a-zA-Z0-9]*(-[a-zA-Z0-9]+)*$`)
	// LogRetentionDays are the values PutRetentionPolicy accepts.
	LogRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}
	// AuroraPostgreSQLVersions are the Aurora PostgreSQL engine versions by
	// major (the majors in standard support and their minors).
	AuroraPostgreSQLVersions = map[string][]string{
		"13": {"13.9", "13.10", "13.11", "13.12", "13.13", "13.14", "13.15", "13.16", "13.18", "13.20"},
		"14": {"14.6", "14.7", "14.8", "14.9", "14.10", "14.11", "14.12", "14.13", "14.15", "14.17"},
		"15": {"15.2", "15.3", "15.4", "15.5", "15.6", "15.7", "15.8", "15.10", "15.12"},
		"16": {"16.1", "16.2", "16.3", "16.4", "16.6", "16.8"},
		"17": {"17.4"},
	}
	// CacheEngineVersions are the ElastiCache engine versions that support
	// RBAC user groups: Valkey 7.2 onward, Redis OSS 6.0 onward.
	CacheEngineVersions = map[string][]string{
		"valkey": {"7.2", "8.0", "8.1"},
		"redis":  {"6.0", "6.2", "6.x", "7.0", "7.1"},
	}
)

// tagErrorCode is the error code a service answers a tag violation with
// where it is not the rule's generic TagLimitExceeded (which is EC2's own,
// EC2 API Reference, Error codes). IAM (IAM API Reference, CreateRole:
// Tags "Array Members: Maximum number of 50 items", Tag Key 1-128 and
// Value 0-256 characters) refuses a request breaking those constraints
// before it runs, with the Query API's ValidationError ("The input fails
// to satisfy the constraints specified by an AWS service", Common
// Errors; moto 5.2.1 answers the same); TagRole on a role whose tags
// would pass 50 fails the request (IAM API Reference, TagRole: "if you
// exceed the allowed maximum number of tags, then the entire request
// fails") with its quota error, LimitExceeded. Other services keep the
// rule's code until checked.
func tagErrorCode(typ string, op int, tags map[string]string) string {
	if serviceOf(typ) != "IAM" {
		return ""
	}
	if len(tags) > 50 && op == OpUpdate {
		return "LimitExceeded"
	}
	if len(tags) > 50 {
		return "ValidationError"
	}
	for k, v := range tags {
		if len(k) == 0 || len(k) > 128 || len(v) > 256 {
			return "ValidationError"
		}
	}
	return ""
}

// PrefixListWeight is how many rules a security group rule referencing
// the prefix list id counts as: the list's maximum entries.
func PrefixListWeight(env Env, id string) float64 {
	for _, pl := range prefixLists(env.normalized()) {
		if pl.id == id {
			return float64(pl.maxEntries)
		}
	}
	return 1
}

func labelsOK(name string, maxLabel int) string {
	name = strings.TrimSuffix(name, ".")
	if len(name) > 255 {
		return fmt.Sprintf("DNS name %s is %d characters; at most 255 are allowed", name, len(name))
	}
	for _, l := range strings.Split(name, ".") {
		if len(l) == 0 || len(l) > maxLabel {
			return fmt.Sprintf("DNS name %s has an empty label or a label longer than %d characters", name, maxLabel)
		}
	}
	return ""
}

var rules = []Rule{
	{
		ID:      "ec2.sg-rule-description",
		Doc:     "EC2 API Reference, IpRange / UserIdGroupPair / PrefixListId: Description (up to 255 characters, a-zA-Z0-9. _-:/()#,@[]+=;{}!$*)",
		Code:    "InvalidParameterValue",
		applies: types(tIngress, tEgress),
		check: func(r ruleInput) string {
			if !known(r.in, "description") {
				return ""
			}
			d := str(r.in, "description")
			if len(d) > 255 || !reRuleDescription.MatchString(d) {
				return "Invalid rule description. Valid descriptions are strings less than 256 characters from the following set:  a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*"
			}
			return ""
		},
	},
	{
		ID:      "ec2.sg-description",
		Doc:     "EC2 API Reference, CreateSecurityGroup: GroupDescription (up to 255 characters, a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*)",
		Code:    "InvalidParameterValue",
		applies: types(tSG),
		check: func(r ruleInput) string {
			if !known(r.in, "description") {
				return ""
			}
			d := str(r.in, "description")
			if len(d) > 255 || !reGroupDescription.MatchString(d) {
				return fmt.Sprintf("Value (%s) for parameter GroupDescription is invalid. Valid descriptions are strings less than 256 characters from the following set: a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*", d)
			}
			return ""
		},
	},
	{
		// The VPC's primary block only: secondary blocks
		// (aws:ec2/vpcIpv4CidrBlockAssociation) are not modelled, so a
		// program that adds one is flagged awsmodel.known-type first.
		ID:      "ec2.subnet-in-vpc",
		Doc:     "EC2 API Reference, CreateSubnet (the subnet's IPv4 CIDR block is the VPC's or a subset of it) and Error codes for the Amazon EC2 API (InvalidSubnet.Range)",
		Code:    "InvalidSubnet.Range",
		applies: types(tSubnet),
		check: func(r ruleInput) string {
			cidr, vpc, ok := subnetAndVPC(r)
			if !ok {
				return ""
			}
			if !vpc.Contains(cidr.Addr()) || cidr.Bits() < vpc.Bits() {
				return fmt.Sprintf("The CIDR '%s' is invalid.", cidr)
			}
			return ""
		},
	},
	{
		ID:      "ec2.subnet-conflict",
		Doc:     "EC2 API Reference, CreateSubnet (\"A subnet CIDR block must not overlap the CIDR block of an existing subnet in the VPC\") and Error codes for the Amazon EC2 API (InvalidSubnet.Conflict)",
		Code:    "InvalidSubnet.Conflict",
		applies: types(tSubnet),
		check: func(r ruleInput) string {
			// cidrBlock and vpcId force a replacement: an update keeps
			// both, so it conflicts with nothing it did not already.
			if r.op == OpUpdate {
				return ""
			}
			cidr, _, ok := subnetAndVPC(r)
			lister, listable := r.cloud.(Lister)
			if !ok || !listable {
				return ""
			}
			vpcID := str(r.in, "vpcId")
			for _, o := range lister.List(tSubnet) {
				if r.id != "" && o.ID == r.id || str(o.Outputs, "vpcId") != vpcID {
					continue
				}
				if other, err := netip.ParsePrefix(str(o.Outputs, "cidrBlock")); err == nil && other.Overlaps(cidr) {
					return fmt.Sprintf("The CIDR '%s' conflicts with another subnet", cidr)
				}
			}
			return ""
		},
	},
	{
		ID:      "tags.limits",
		Doc:     "Tagging AWS resources, Tag naming limits and requirements: at most 50 user tags; keys 1-128 and values 0-256 characters; the aws: prefix is reserved; IAM API Reference, CreateRole and TagRole: IAM's own codes (tagErrorCode)",
		Code:    "TagLimitExceeded",
		applies: taggable,
		codeOf: func(r ruleInput) string {
			return tagErrorCode(r.typ, r.op, mergeTags(r.env.DefaultTags, stringMap(r.in, "tags")))
		},
		check: func(r ruleInput) string {
			v, ok := get(r.in, "tags")
			if !ok || v.ContainsUnknowns() {
				return ""
			}
			tags := mergeTags(r.env.DefaultTags, stringMap(r.in, "tags"))
			if len(tags) > 50 {
				return fmt.Sprintf("The maximum number of tags per resource (50) has been exceeded: %d tags (defaultTags included)", len(tags))
			}
			keys := make([]string, 0, len(tags))
			for k := range tags {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				switch {
				case len(k) == 0 || len(k) > 128:
					return fmt.Sprintf("Tag key %q must be 1 to 128 characters", k)
				case len(tags[k]) > 256:
					return fmt.Sprintf("Tag value of %q must be at most 256 characters (it has %d)", k, len(tags[k]))
				case strings.HasPrefix(strings.ToLower(k), "aws:"):
					return fmt.Sprintf("Tag keys starting with 'aws:' are reserved for AWS use: %q", k)
				}
			}
			return ""
		},
	},
	{
		ID:      "logs.retention-days",
		Doc:     "CloudWatch Logs API Reference, PutRetentionPolicy: retentionInDays possible values",
		Code:    "InvalidParameterException",
		applies: types(tLogGroup),
		check: func(r ruleInput) string {
			n, ok := number(r.in, "retentionInDays")
			if !ok || n == 0 || slices.Contains(LogRetentionDays, int(n)) && n == float64(int(n)) {
				return ""
			}
			vals := make([]string, len(LogRetentionDays))
			for i, d := range LogRetentionDays {
				vals[i] = strconv.Itoa(d)
			}
			return fmt.Sprintf("1 validation error detected: Value '%g' at 'retentionInDays' failed to satisfy constraint: Member must satisfy enum value set: [%s]", n, strings.Join(vals, ", "))
		},
	},
	{
		ID:      "rds.engine-version",
		Doc:     "Amazon Aurora PostgreSQL release notes, Aurora PostgreSQL releases and engine versions (majors in standard support and their minors)",
		Code:    "InvalidParameterCombination",
		applies: types(tCluster, tClusterInstance),
		check: func(r ruleInput) string {
			if str(r.in, "engine") != "aurora-postgresql" || !known(r.in, "engineVersion") || str(r.in, "engineVersion") == "" {
				return ""
			}
			v := str(r.in, "engineVersion")
			major, _, minor := strings.Cut(v, ".")
			minors, ok := AuroraPostgreSQLVersions[major]
			if ok && (!minor || slices.Contains(minors, v)) {
				return ""
			}
			return fmt.Sprintf("Cannot find version %s for aurora-postgresql", v)
		},
	},
	{
		ID:      "rds.parameter-group-family",
		Doc:     "Amazon Aurora User Guide, Working with parameter groups: a DB cluster parameter group's family must match the engine and major version",
		Code:    "InvalidParameterCombination",
		applies: types(tCluster),
		check: func(r ruleInput) string {
			pg := str(r.in, "dbClusterParameterGroupName")
			v := str(r.in, "engineVersion")
			if pg == "" || v == "" || !known(r.in, "dbClusterParameterGroupName") {
				return ""
			}
			_, params, ok := r.lookup(pg)
			if !ok {
				return ""
			}
			want := rdsFamily(str(r.in, "engine"), v)
			if fam := str(params, "family"); fam != "" && fam != want {
				return fmt.Sprintf("The parameter group %s with DBParameterGroupFamily %s can't be used for this instance. Use a parameter group with DBParameterGroupFamily %s.", pg, fam, want)
			}
			return ""
		},
	},
	{
		ID:      "rds.final-snapshot-identifier",
		Doc:     "Amazon RDS API Reference, DeleteDBCluster: FinalDBSnapshotIdentifier (1-255 letters, digits or hyphens; first a letter; no two consecutive hyphens; not ending with a hyphen)",
		Code:    "InvalidParameterValue",
		applies: types(tCluster),
		check: func(r ruleInput) string {
			id := str(r.in, "finalSnapshotIdentifier")
			if !known(r.in, "finalSnapshotIdentifier") || id == "" {
				return ""
			}
			if len(id) > 255 || !reSnapshotID.MatchString(id) {
				return fmt.Sprintf("The parameter FinalDBSnapshotIdentifier is not a valid identifier: %s", id)
			}
			return ""
		},
	},
	{
		ID:        "rds.minor-pin-auto-upgrade",
		Doc:       "Amazon Aurora User Guide, Automatic minor version upgrades: AWS upgrades the minor version in the maintenance window when auto minor version upgrade is on",
		Code:      "EngineVersionDrift",
		AuditOnly: true,
		applies:   types(tClusterInstance),
		check: func(r ruleInput) string {
			if auto, set := boolean(r.in, "autoMinorVersionUpgrade"); set && !auto {
				return ""
			}
			_, cl, ok := r.lookup(str(r.in, "clusterIdentifier"))
			if !ok {
				return ""
			}
			if v := str(cl, "engineVersion"); strings.Contains(v, ".") {
				return fmt.Sprintf("the cluster is pinned to %s while this instance upgrades minors automatically: after AWS patches it the next up tries to downgrade and fails (Cannot upgrade aurora-postgresql from a newer minor to %s); pin the major or turn automatic minor upgrades off", v, v)
			}
			return ""
		},
	},
	{
		// Audit-only: AWS documents where the Data API is offered, not the
		// error a cluster elsewhere gets. The provider enables it on a
		// provisioned cluster with the EnableHttpEndpoint API after
		// CreateDBCluster (terraform-provider-aws #37125, #38997), so the
		// failure, if any, comes after the cluster exists.
		ID:        "rds.data-api-availability",
		Doc:       awsfacts.DataAPIDoc + "; terraform-provider-aws issue #37125 and PR #38997: provisioned clusters enable the Data API with the EnableHttpEndpoint API",
		Code:      "DataAPIUnavailable",
		AuditOnly: true,
		applies:   types(tCluster),
		check: func(r ruleInput) string {
			if on, _ := boolean(r.in, "enableHttpEndpoint"); !on || str(r.in, "engine") != "aurora-postgresql" {
				return ""
			}
			v := str(r.in, "engineVersion")
			if !known(r.in, "engineVersion") {
				return ""
			}
			if v == "" {
				v, _, _ = rdsEngineDefaults("aurora-postgresql")
			}
			if err := awsfacts.DataAPIProblem(r.env.Region, v); err != nil {
				return fmt.Sprintf("enableHttpEndpoint is set but %v: the cluster gets no Data API endpoint and ExecuteStatement calls fail", err)
			}
			return ""
		},
	},
	{
		// Audit-only, as rds.data-api-availability: the User Guide lists
		// the limitation, not the error a T-class cluster's EnableHttpEndpoint
		// or ExecuteStatement gets.
		ID:        "rds.data-api-instance-class",
		Doc:       awsfacts.DataAPIInstanceClassDoc,
		Code:      "DataAPIUnavailable",
		AuditOnly: true,
		applies:   types(tClusterInstance),
		check: func(r ruleInput) string {
			if !known(r.in, "instanceClass") {
				return ""
			}
			_, cl, ok := r.lookup(str(r.in, "clusterIdentifier"))
			if on, _ := boolean(cl, "enableHttpEndpoint"); !ok || !on {
				return ""
			}
			if err := awsfacts.DataAPIInstanceClassProblem(str(r.in, "instanceClass")); err != nil {
				return fmt.Sprintf("the cluster has enableHttpEndpoint set but %v: ExecuteStatement calls fail", err)
			}
			return ""
		},
	},
	{
		ID:        "rds.data-api-on-restore",
		Doc:       "terraform-provider-aws PR #37287 (aws_rds_cluster docs, enable_http_endpoint): not applied when the cluster is created from snapshot_identifier, replication_source_identifier or s3_import",
		Code:      "HttpEndpointNotEnabled",
		AuditOnly: true,
		applies:   types(tCluster),
		check: func(r ruleInput) string {
			if on, _ := boolean(r.in, "enableHttpEndpoint"); !on {
				return ""
			}
			for _, p := range []string{"snapshotIdentifier", "replicationSourceIdentifier", "s3Import"} {
				if v, ok := r.in[resource.PropertyKey(p)]; ok && !v.IsNull() && (!v.IsString() || v.StringValue() != "") {
					return fmt.Sprintf("enableHttpEndpoint is not applied to a cluster created from %s: it comes up without the Data API until a later update enables it", p)
				}
			}
			return ""
		},
	},
	{
		ID:      "elasticache.engine-version",
		Doc:     "Amazon ElastiCache User Guide, Role-Based Access Control (RBAC): available for Valkey 7.2 and onward and Redis OSS 6.0 to 7.2",
		Code:    "InvalidParameterCombination",
		applies: types(tReplicationGroup),
		check: func(r ruleInput) string {
			engine := strings.ToLower(str(r.in, "engine"))
			if engine == "" {
				engine = "redis"
			}
			v := str(r.in, "engineVersion")
			if !known(r.in, "engineVersion") || v == "" {
				return ""
			}
			if allowed, ok := CacheEngineVersions[engine]; ok && !slices.Contains(allowed, v) && len(strings_(r.in, "userGroupIds")) > 0 {
				return fmt.Sprintf("Cannot find version %s for %s that supports user groups (RBAC): allowed are %s", v, engine, strings.Join(allowed, ", "))
			}
			for _, g := range strings_(r.in, "userGroupIds") {
				if _, grp, ok := r.lookup(g); ok && engine == "redis" && strings.EqualFold(str(grp, "engine"), "valkey") {
					return fmt.Sprintf("User group %s has engine VALKEY; a Redis OSS replication group can only use user groups with engine REDIS", g)
				}
			}
			return ""
		},
	},
	{
		ID:      "elasticache.valkey-group-authentication",
		Doc:     "Amazon ElastiCache User Guide, Role-Based Access Control (RBAC): a user group configured for the VALKEY engine can only contain users who use an authentication mechanism (password or IAM)",
		Code:    "InvalidParameterCombination",
		applies: types(tCacheUserGroup),
		check: func(r ruleInput) string {
			if !strings.EqualFold(str(r.in, "engine"), "valkey") {
				return ""
			}
			for _, id := range strings_(r.in, "userIds") {
				_, u, ok := r.lookup(id)
				if !ok {
					continue
				}
				if t := str(object(u, "authenticationMode"), "type"); t != "password" && t != "iam" {
					return fmt.Sprintf("User %s does not use an authentication mechanism (its authentication mode is %s); a user group with engine VALKEY can only contain users that authenticate with a password or IAM", id, t)
				}
			}
			return ""
		},
	},
	{
		ID:      "elasticache.user-authentication",
		Doc:     "Amazon ElastiCache User Guide, Authenticating with IAM (user id and user name must be identical) and Modifying a user's password (1-2 passwords, 16-128 printable characters)",
		Code:    "InvalidParameterValue",
		applies: types(tCacheUser),
		check: func(r ruleInput) string {
			mode := object(r.in, "authenticationMode")
			switch str(mode, "type") {
			case "iam":
				if known(r.in, "userId") && known(r.in, "userName") && str(r.in, "userId") != str(r.in, "userName") {
					return fmt.Sprintf("IAM authentication requires the user id and user name to be identical (%s, %s)", str(r.in, "userId"), str(r.in, "userName"))
				}
			case "password":
				pw := strings_(mode, "passwords")
				if _, ok := get(mode, "passwords"); ok && !mode["passwords"].ContainsUnknowns() && (len(pw) < 1 || len(pw) > 2) {
					return "A user with authentication type password needs one or two passwords"
				}
				for _, p := range pw {
					if len(p) < 16 || len(p) > 128 || strings.ContainsAny(p, " \t\n\"/@") {
						return "Passwords must be 16 to 128 printable characters, without spaces, '\"', '/' or '@'"
					}
				}
			}
			return ""
		},
	},
	{
		ID:      "lambda.edge-function",
		Doc:     "Amazon CloudFront Developer Guide, Restrictions on Lambda@Edge and Quotas on Lambda@Edge (numbered version in us-east-1; Node.js or Python; no environment variables, VPC, layers, container images or arm64; timeout 5 s viewer / 30 s origin; memory 128 MB viewer; ephemeral storage 512 MB)",
		Code:    "InvalidLambdaFunctionAssociation",
		applies: types(tDistribution),
		check: func(r ruleInput) string {
			for _, b := range append(objects(r.in, "defaultCacheBehavior"), objects(r.in, "orderedCacheBehaviors")...) {
				for _, a := range objects(b, "lambdaFunctionAssociations") {
					if !known(a, "lambdaArn") {
						continue
					}
					if msg := edgeFunctionProblem(r, str(a, "lambdaArn"), str(a, "eventType")); msg != "" {
						return msg
					}
				}
			}
			return ""
		},
	},
	{
		// Audit judges a create (what a first up sends); the mocks judge a
		// create unless a test marks the function deployed, the simulator
		// each call as it comes.
		ID:      "lambda.runtime-blocked",
		Doc:     LambdaRuntimeDoc + ": after the block function create date CreateFunction refuses the runtime, after the block function update date so do updates of functions on it",
		Code:    "InvalidParameterValueException",
		applies: types(tFunction),
		check: func(r ruleInput) string {
			if r.at.IsZero() || !known(r.in, "runtime") {
				return ""
			}
			rt, ok := LookupLambdaRuntime(str(r.in, "runtime"))
			if !ok || !rt.Blocked(r.op, r.at) {
				return ""
			}
			return runtimeBlockedMessage(rt.ID)
		},
	},
	{
		ID:      "cloudfront.aliases-certificate",
		Doc:     "Amazon CloudFront Developer Guide, Requirements for using alternate domain names: a trusted certificate in us-east-1 that covers every alternate domain name; at most 100 per distribution",
		Code:    "InvalidViewerCertificate",
		applies: types(tDistribution),
		check: func(r ruleInput) string {
			aliases := strings_(r.in, "aliases")
			if len(aliases) == 0 {
				return ""
			}
			if len(aliases) > 100 {
				return fmt.Sprintf("Your request contains more CNAMEs than are allowed per distribution (%d > 100).", len(aliases))
			}
			vc := object(r.in, "viewerCertificate")
			arn := str(vc, "acmCertificateArn")
			if !known(vc, "acmCertificateArn") && unknown(vc, "acmCertificateArn") {
				return ""
			}
			if def, _ := boolean(vc, "cloudfrontDefaultCertificate"); def || arn == "" {
				return "To add an alternate domain name (CNAME) to a CloudFront distribution, you must attach a trusted certificate that validates your authorization to use the domain name."
			}
			if m := str(vc, "sslSupportMethod"); m != "sni-only" && m != "vip" && m != "static-ip" {
				return "The parameter SSLSupportMethod is required when a custom certificate is used: sni-only, vip or static-ip."
			}
			if _, cert, ok := r.lookup(arn); ok {
				names := certificateDomains(cert)
				for _, a := range aliases {
					if !CertificateCovers(names, a) {
						return fmt.Sprintf("The certificate that is attached to your distribution doesn't cover the alternate domain name (CNAME) that you're trying to add: %s (the certificate covers %s).", a, strings.Join(names, ", "))
					}
				}
			}
			return ""
		},
	},
	{
		ID:        "cloudfront.https-origin-certificate",
		Doc:       "Amazon CloudFront Developer Guide, Requiring HTTPS to a custom origin: the origin's certificate must match the origin domain name (or the Host header); no certificate can be issued for *.elb.amazonaws.com",
		Code:      "OriginCertificateMismatch",
		AuditOnly: true,
		applies:   types(tDistribution),
		check: func(r ruleInput) string {
			for _, o := range objects(r.in, "origins") {
				co := object(o, "customOriginConfig")
				if co == nil || str(co, "originProtocolPolicy") == "http-only" || !known(o, "domainName") {
					continue
				}
				if d := strings.ToLower(str(o, "domainName")); strings.HasSuffix(d, ".elb.amazonaws.com") || strings.HasSuffix(d, ".elb.amazonaws.com.cn") {
					return fmt.Sprintf("origin %s connects over HTTPS to %s: no certificate can cover an elb.amazonaws.com name, so every request is a 502; give the origin a DNS name with an ACM certificate", str(o, "originId"), d)
				}
			}
			return ""
		},
	},
	{
		ID:      "route53.record",
		Doc:     "Amazon Route 53 API Reference, ResourceRecordSet: Name (at most 255 characters, labels of at most 63), AliasTarget excludes TTL and ResourceRecords, a non-alias record needs both",
		Code:    "InvalidChangeBatch",
		applies: types(tRecord),
		check: func(r ruleInput) string {
			if known(r.in, "name") {
				if msg := labelsOK(str(r.in, "name"), 63); msg != "" {
					return "[" + msg + "]"
				}
			}
			aliases := objects(r.in, "aliases")
			_, hasTTL := get(r.in, "ttl")
			_, hasRecords := get(r.in, "records")
			switch {
			case len(aliases) > 1:
				return "[A record has at most one alias target]"
			case len(aliases) == 1 && (hasTTL || hasRecords):
				return "[Alias target records must not specify TTL or ResourceRecords]"
			case len(aliases) == 0 && (!hasTTL || !hasRecords):
				return "[A record without an alias target needs TTL and ResourceRecords]"
			case len(aliases) == 1 && known(aliases[0], "name") && (str(aliases[0], "name") == "" || str(aliases[0], "zoneId") == "" && known(aliases[0], "zoneId")):
				return "[An alias target needs a DNS name and the hosted zone id of the target]"
			}
			return ""
		},
	},
	{
		ID:      "acm.domain-names",
		Doc:     "AWS Certificate Manager User Guide, Requesting a public certificate and ACM quotas: the first domain name at most 64 characters, a wildcard only as the leftmost label, at most 10 domain names per certificate (a quota: RequestCertificate refuses more with LimitExceededException, ACM API Reference, RequestCertificate, Errors)",
		Code:    "ValidationException",
		applies: types(tCertificate),
		// More names than the quota is a quota refusal, not a malformed
		// request (moto 5.2.1 answers the same).
		codeOf: func(r ruleInput) string {
			if len(str(r.in, "domainName")) <= 64 && len(certificateDomains(r.in)) > 10 {
				return "LimitExceededException"
			}
			return ""
		},
		check: func(r ruleInput) string {
			if !known(r.in, "domainName") {
				return ""
			}
			if d := str(r.in, "domainName"); len(d) > 64 {
				return fmt.Sprintf("1 validation error detected: Value '%s' at 'domainName' failed to satisfy constraint: Member must have length less than or equal to 64", d)
			}
			names := certificateDomains(r.in)
			if len(names) > 10 {
				return fmt.Sprintf("An ACM limit has been exceeded: the certificate has %d domain names; the default quota is 10", len(names))
			}
			for _, n := range names {
				if strings.Contains(strings.TrimPrefix(n, "*."), "*") {
					return fmt.Sprintf("Domain name %s: a wildcard may only be the leftmost label (*.example.com)", n)
				}
				if msg := labelsOK(strings.TrimPrefix(n, "*."), 63); msg != "" {
					return msg
				}
			}
			return ""
		},
	},
}

// subnetAndVPC reads a subnet's IPv4 block and its VPC's (looked up in
// the cloud); ok is false when either is unknown or not IPv4 CIDR.
func subnetAndVPC(r ruleInput) (cidr, vpc netip.Prefix, ok bool) {
	if !known(r.in, "cidrBlock") || !known(r.in, "vpcId") {
		return cidr, vpc, false
	}
	cidr, err := netip.ParsePrefix(str(r.in, "cidrBlock"))
	if err != nil || !cidr.Addr().Is4() {
		return cidr, vpc, false
	}
	typ, outs, found := r.lookup(str(r.in, "vpcId"))
	if !found || typ != tVpc || !known(outs, "cidrBlock") {
		return cidr, vpc, false
	}
	vpc, err = netip.ParsePrefix(str(outs, "cidrBlock"))
	return cidr, vpc.Masked(), err == nil
}

// edgeFunctionProblem checks one Lambda@Edge association.
func edgeFunctionProblem(r ruleInput, arn, event string) string {
	parts := strings.Split(arn, ":")
	if len(parts) < 8 || parts[7] == "$LATEST" {
		return fmt.Sprintf("The function ARN must reference a specific function version. (The ARN must end with the version number.) ARN: %s", arn)
	}
	if parts[3] != "us-east-1" {
		return fmt.Sprintf("The function must be in region 'us-east-1'. ARN: %s", arn)
	}
	_, fn, ok := r.lookup(strings.Join(parts[:7], ":"))
	if !ok {
		return ""
	}
	viewer := strings.HasPrefix(event, "viewer-")
	rt := str(fn, "runtime")
	timeout, _ := number(fn, "timeout")
	memory, _ := number(fn, "memorySize")
	storage, _ := number(object(fn, "ephemeralStorage"), "size")
	switch {
	case rt != "" && !strings.HasPrefix(rt, "nodejs") && !strings.HasPrefix(rt, "python"):
		return fmt.Sprintf("The function runtime %s is not supported by Lambda@Edge (Node.js and Python only). ARN: %s", rt, arn)
	case len(object(object(fn, "environment"), "variables")) > 0:
		return fmt.Sprintf("The function cannot have environment variables. Function: %s", arn)
	case len(strings_(object(fn, "vpcConfig"), "subnetIds")) > 0:
		return fmt.Sprintf("The function cannot be configured for a VPC. Function: %s", arn)
	case len(strings_(fn, "layers")) > 0:
		return fmt.Sprintf("The function cannot use layers. Function: %s", arn)
	case str(fn, "packageType") == "Image":
		return fmt.Sprintf("The function cannot be a container image. Function: %s", arn)
	case slices.Contains(strings_(fn, "architectures"), "arm64"):
		return fmt.Sprintf("The function must use the x86_64 architecture. Function: %s", arn)
	case viewer && timeout > 5, !viewer && timeout > 30:
		return fmt.Sprintf("The function execution time must be less than or equal to %d seconds for %s triggers. Function: %s", map[bool]int{true: 5, false: 30}[viewer], event, arn)
	case viewer && memory > 128:
		return fmt.Sprintf("The function memory size must be less than or equal to 128 MB for viewer triggers. Function: %s", arn)
	case storage > 512:
		return fmt.Sprintf("The function ephemeral storage must be 512 MB. Function: %s", arn)
	}
	return ""
}
