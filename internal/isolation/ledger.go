package isolation

// The shared-parts ledger. Check proves that no cell references another
// cell; the ledger lists what cells do share — the parts that are not any
// one cell's — so the question "if this is down, how many cells fail?"
// has an answer per part, and a new shared part is a decision someone
// made, not an accident of a program change (stacks/shared.yaml declares
// them; Judge reports the rest).
//
// The ledger is derived from the rendered stacks, not from a list: every
// identifier of an external thing in a cell's resource inputs (an ARN, a
// Route 53 zone id, a managed prefix list, a container repository, a
// fleet secret's value) that two or more cells carry is a shared part;
// the router stack's request-path resources (its distributions, edge
// function and viewer certificate) and whatever the router itself depends
// on are shared by every routed cell; the region and the account are read
// from the cells' stacks and ARNs. The parts no render shows — the Pulumi
// backend and the secrets provider — are added from the fleet.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/offline"
)

// Plane says what a part's failure stops.
type Plane string

const (
	// RequestPath: a failure fails tenants' requests.
	RequestPath Plane = "request-path"
	// ControlPlane: a failure blocks changes (deploys, scaling out,
	// replacing a task), not the traffic the running cells serve.
	ControlPlane Plane = "control-plane"
)

// Owners: who runs a part.
const (
	OwnerRouter   = "router"   // a resource of the router stack
	OwnerAWS      = "aws"      // AWS-managed (a managed policy, a prefix list), or AWS itself
	OwnerExternal = "external" // outside the fleet's stacks: a zone, a registry, a config value
	OwnerBackend  = "cellctl"  // the control plane: the Pulumi backend, the secrets provider
)

// Part kinds.
const (
	KindDistribution    = "distribution"
	KindEdgeFunction    = "edge-function"
	KindCertificate     = "certificate"
	KindBucket          = "bucket"
	KindDNSZone         = "dns-zone"
	KindSecret          = "secret"
	KindPrefixList      = "prefix-list"
	KindImageRepository = "image-repository"
	KindIAMPolicy       = "iam-policy"
	KindKMSKey          = "kms-key"
	KindRegion          = "region"
	KindAccount         = "account"
	KindStateBackend    = "state-backend"
	KindSecretsProvider = "secrets-provider"
)

// CurrentAccount is the id of the account part when the render's ARNs
// carry the offline placeholder account: offline renders give every stack
// the same made-up account, so all the render can say is that the stacks
// deploy into the account their AWS credentials reach.
const CurrentAccount = "current"

// BackendID is the state backend part's id: the backend's URL differs per
// machine and CI job (a local file backend, the team's s3:// bucket), so
// the declaration names the role, and Part.Detail the URL.
const BackendID = "pulumi-backend"

// DefaultSecretsProvider is the secrets-provider part's id for stack files
// that name none: each run's --secrets-provider (a passphrase unless set).
const DefaultSecretsProvider = "default"

// classification is what a failure of each kind of part stops, and why.
// The "why" is the reasoning a reviewer needs to disagree with it; a
// declaration's plane: overrides it for one part.
var classification = map[string]struct {
	plane Plane
	why   string
}{
	KindDistribution: {RequestPath, "every viewer request of its tenants passes through it (the primary carries all traffic; a staging distribution only what the continuous deployment policy sends it, at most 15% or the canary header)"},
	KindEdgeFunction: {RequestPath, "runs on every viewer request to pick the tenant's cell; the routing table is baked in, so no control plane is called, but a bad version fails every request it serves"},
	KindCertificate:  {RequestPath, "TLS for the names viewers or CloudFront connect to: an expired, revoked or deleted certificate fails the handshake"},
	KindBucket:       {RequestPath, "the service reads and writes its cells/<id>/ prefix while serving (BUCKET, BUCKET_PREFIX in the task): a bucket policy mistake, a deletion or an S3 outage in the bucket's region fails every sharing cell's object access, whatever region the cell runs in"},
	KindDNSZone:      {RequestPath, "CloudFront resolves each cell's origin name (and viewers the tenant-facing names) in this zone: a deleted zone, a broken delegation or wiped records stop resolution once TTLs run out"},
	KindSecret:       {RequestPath, "checked on every request: each cell's ALB forwards only requests whose X-Origin-Verify header carries it, and CloudFront sends the router's value; if they disagree (a botched rotation) every cell that checks it refuses its traffic"},
	KindPrefixList:   {RequestPath, "AWS-managed: the cells' ALB security groups admit CloudFront's origin-facing addresses only through it"},
	// Pulled only when a task starts. Running tasks keep serving, so a
	// registry outage stops deploys and scaling out, and — the part that
	// hurts — the replacement of a task that dies during the outage.
	KindImageRepository: {ControlPlane, "pulled when a task starts (deploys, scaling out, replacing a failed task); running tasks keep serving"},
	// Permissions are read when a role's session starts; AWS versions its
	// managed policies without removing actions, but a change reaches every
	// attached role at once.
	KindIAMPolicy: {ControlPlane, "AWS-managed permissions attached in every cell: read when ECS or Lambda starts a role's session; an AWS change to the policy reaches every cell at once"},
	KindKMSKey:    {RequestPath, "decrypts data the cells read while serving: a disabled key or a key policy mistake fails every reader"},
	// A region is a failure domain AWS documents as such: a regional
	// service event (ECS, ALB, RDS, S3 in that region) reaches every cell
	// there, and every cell elsewhere that reads a regional part homed
	// there (the fleet bucket).
	KindRegion: {RequestPath, "a regional event (ECS, ALB, RDS, ElastiCache, S3) reaches every cell in the region and every cell that reads a regional part homed there"},
	// The account is a blast radius too: an account-level action (a
	// suspension, an SCP or permission-boundary change, a compromised
	// administrator) and the account-wide quotas and API rate limits every
	// cell's scaling draws on (Fargate vCPUs per region, ENIs, CloudWatch
	// and ECS API rates) reach every cell in it at once. AWS's own
	// cell-based guidance puts cells in separate accounts for that reason.
	KindAccount: {RequestPath, "an account-level action (suspension, an SCP, a compromised administrator) and the account-wide quotas and API rate limits every cell draws on reach every cell in it at once"},
	// The Pulumi backend holds every stack's state, the fleet lock and the
	// rollout records. Nothing on the request path reads it (the routing
	// table is baked into the edge function), so losing it blocks every
	// change — up, deploy, drain, rollback — but no request.
	KindStateBackend: {ControlPlane, "holds every stack's state, the fleet lock and the rollout records: losing it blocks every change (up, deploy, drain, rollback), never a request"},
	// The secrets provider decrypts stack configuration when Pulumi runs;
	// the decrypted values already live in the cloud resources.
	KindSecretsProvider: {ControlPlane, "decrypts the stacks' secrets when Pulumi runs (a KMS key or a passphrase): losing it blocks every change, never a request"},
}

// unclassifiedWhy is the reason given for a part kind the ledger does not
// know: treated as request path until a declaration says otherwise.
const unclassifiedWhy = "not a kind cellctl classifies: assumed to be in the request path; set plane: in the declaration if only changes use it"

// Use is one place a part is depended on.
type Use struct {
	Stack    string `json:"stack"`
	Resource string `json:"resource,omitempty"`
	Property string `json:"property,omitempty"`
	// Via names what carries the dependency when the stack does not
	// reference the part itself (the router, for every routed cell; a
	// regional part, for a region).
	Via string `json:"via,omitempty"`
}

func (u Use) String() string {
	s := u.Stack
	if u.Resource != "" {
		s += "/" + u.Resource
	}
	if u.Property != "" {
		s += "." + u.Property
	}
	if u.Via != "" {
		s += " (via " + u.Via + ")"
	}
	return s
}

// Part is one thing more than one cell depends on.
type Part struct {
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Owner string `json:"owner"`
	// Detail says more about the part than its id (the backend's URL).
	Detail string `json:"detail,omitempty"`
	// Region is where a regional part lives ("" for global parts).
	Region string `json:"region,omitempty"`
	Plane  Plane  `json:"plane"`
	// Why says why the part is in its plane.
	Why string `json:"why"`
	// Cells are the cells that fail (or cannot change, for the control
	// plane) when the part does.
	Cells []string `json:"cells"`
	// TenantShare is the share of the routing table's buckets those cells
	// own, and Pinned the tenants overrides send to them: the tenants
	// affected if the part fails.
	TenantShare float64 `json:"tenantShare"`
	Pinned      int     `json:"pinned"`
	// Uses are the first places the render depends on the part; UseCount
	// counts them all.
	Uses     []Use `json:"uses"`
	UseCount int   `json:"useCount"`
	// exposure is the share of its cells' requests that reach the part
	// (0: all of them): a staging distribution sees at most CloudFront's
	// continuous-deployment weight.
	exposure float64
	// Declared is the stacks/shared.yaml entry that declares the part
	// (nil: undeclared, a finding).
	Declared *Declaration `json:"declared,omitempty"`
}

// Key identifies the part: its kind and id.
func (p Part) Key() string { return p.Kind + " " + p.ID }

// LedgerStack is one rendered stack the ledger reads.
type LedgerStack struct {
	Name      string
	Cell      string // the cell id; "" for the router
	Region    string
	Resources []*offline.Resource
}

// TenantShare is what one cell carries of the fleet's tenants.
type TenantShare struct {
	Share  float64 // of the routing table's buckets
	Pinned int     // tenants an override sends to the cell
}

// LedgerInput is what the ledger is derived from.
type LedgerInput struct {
	Cells  []LedgerStack
	Router *LedgerStack
	// Routed lists the cells the router serves; nil: every cell.
	Routed []string
	// Shares holds each cell's share of the tenants (from the routing
	// table); a cell missing carries none.
	Shares map[string]TenantShare
	// Secrets maps the render's value of a fleet secret (the offline
	// placeholder) to the secret's config key: a secret input holding
	// that value depends on the secret. Values are matched, never shown.
	Secrets map[string]string
	// PlaceholderAccount is the account offline renders use; ARNs in it
	// are in the CurrentAccount part.
	PlaceholderAccount string
	// Backend is the Pulumi backend URL (Part.Detail of the state
	// backend part); every stack lives in it.
	Backend string
	// SecretsProviders maps a stack to the secrets provider its stack
	// file names ("" or missing: DefaultSecretsProvider).
	SecretsProviders map[string]string
}

// maxUses bounds the uses a part keeps: the ledger shows where a part is
// depended on, not every property that says so.
const maxUses = 8

type builder struct {
	in     LedgerInput
	parts  map[string]*Part
	cells  map[string]map[string]bool // part key -> cells
	ids    map[string]bool            // every cell id
	router map[string]*offline.Resource
	routed []string
}

// DeriveLedger lists every part more than one cell depends on, request
// path first, most tenants first.
func DeriveLedger(in LedgerInput) []Part {
	b := &builder{in: in, parts: map[string]*Part{}, cells: map[string]map[string]bool{}, ids: map[string]bool{}, router: map[string]*offline.Resource{}}
	for _, c := range in.Cells {
		b.ids[c.Cell] = true
	}
	b.routed = in.Routed
	if b.routed == nil {
		for _, c := range in.Cells {
			b.routed = append(b.routed, c.Cell)
		}
	}
	if in.Router != nil {
		for _, r := range in.Router.Resources {
			for _, t := range tokens(r) {
				b.router[t] = r
			}
		}
	}
	for _, c := range in.Cells {
		b.cell(c)
	}
	if in.Router != nil {
		b.routerStack(*in.Router)
	}
	b.regions()
	b.controlPlane()

	var out []Part
	for key, p := range b.parts {
		if len(b.cells[key]) < 2 {
			continue // one cell's dependency is that cell's, not shared
		}
		for c := range b.cells[key] {
			p.Cells = append(p.Cells, c)
			p.TenantShare += in.Shares[c].Share
			p.Pinned += in.Shares[c].Pinned
		}
		sort.Strings(p.Cells)
		if p.exposure > 0 {
			p.TenantShare *= p.exposure
			p.Pinned = 0 // which pinned tenants a weighted canary reaches is chance
		}
		if cl, ok := classification[p.Kind]; ok {
			p.Plane, p.Why = cl.plane, cl.why
		} else {
			p.Plane, p.Why = RequestPath, unclassifiedWhy
		}
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Plane != b.Plane {
			return a.Plane == RequestPath
		}
		if a.TenantShare != b.TenantShare {
			return a.TenantShare > b.TenantShare
		}
		if len(a.Cells) != len(b.Cells) {
			return len(a.Cells) > len(b.Cells)
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.ID < b.ID
	})
	return out
}

func (b *builder) add(kind, id, owner, region string, cell string, u Use) *Part {
	key := kind + " " + id
	p := b.parts[key]
	if p == nil {
		p = &Part{Kind: kind, ID: id, Owner: owner, Region: region}
		b.parts[key] = p
		b.cells[key] = map[string]bool{}
	}
	b.cells[key][cell] = true
	p.UseCount++
	if len(p.Uses) < maxUses && !containsUse(p.Uses, u) {
		p.Uses = append(p.Uses, u)
	}
	return p
}

func containsUse(us []Use, u Use) bool {
	for _, x := range us {
		if x == u {
			return true
		}
	}
	return false
}

// cell records what one cell's resources depend on outside the cell.
func (b *builder) cell(c LedgerStack) {
	own := map[string]bool{}
	for _, r := range c.Resources {
		for _, t := range tokens(r) {
			own[t] = true
		}
	}
	for _, r := range c.Resources {
		for _, ref := range b.references(r, c.Cell, own) {
			b.add(ref.kind, ref.id, ref.owner, ref.region, c.Cell, Use{Stack: c.Name, Resource: r.Name, Property: ref.property})
		}
	}
	if c.Region != "" {
		b.add(KindRegion, c.Region, OwnerAWS, c.Region, c.Cell, Use{Stack: c.Name})
	}
}

// routerRequestPath are the router resource types every viewer request
// passes through: the router's share of the request path.
var routerRequestPath = map[string]string{
	"aws:cloudfront/distribution:Distribution": KindDistribution,
	"aws:lambda/function:Function":             KindEdgeFunction,
	"aws:acm/certificate:Certificate":          KindCertificate,
}

// routerStack records the router's request-path resources and whatever
// the router depends on outside itself: every routed cell shares them.
func (b *builder) routerStack(s LedgerStack) {
	own := map[string]bool{}
	for t := range b.router {
		own[t] = true
	}
	for _, r := range s.Resources {
		if kind, ok := routerRequestPath[r.Type]; ok {
			var p *Part
			for _, c := range b.routed {
				p = b.add(kind, r.Name, OwnerRouter, "", c, Use{Stack: s.Name, Resource: r.Name, Via: s.Name})
			}
			if st := r.Inputs["staging"]; p != nil && st.IsBool() && st.BoolValue() {
				// A staging distribution serves only what the continuous
				// deployment policy sends it: requests with the canary header,
				// or a weight of at most 15%.
				p.exposure = awsfacts.CloudFrontCDMaxWeight
				p.Detail = fmt.Sprintf("staging distribution: at most %.0f%% of requests (CloudFront's continuous-deployment weight) or the canary header's", awsfacts.CloudFrontCDMaxWeight*100)
			}
		}
		for _, ref := range b.references(r, "", own) {
			for _, c := range b.routed {
				b.add(ref.kind, ref.id, ref.owner, ref.region, c, Use{Stack: s.Name, Resource: r.Name, Property: ref.property, Via: s.Name})
			}
		}
	}
}

// regions adds to each region the cells that depend, on the request
// path, on a part homed there (cell-d in us-west-2 reading the fleet
// bucket in us-east-1 fails with us-east-1).
func (b *builder) regions() {
	for key, p := range b.parts {
		if p.Kind == KindRegion || p.Region == "" {
			continue
		}
		if cl, ok := classification[p.Kind]; ok && cl.plane != RequestPath {
			continue
		}
		rkey := KindRegion + " " + p.Region
		for c := range b.cells[key] {
			if b.parts[rkey] != nil && b.cells[rkey][c] {
				continue
			}
			b.add(KindRegion, p.Region, OwnerAWS, p.Region, c, Use{Stack: c, Via: p.Key()})
		}
	}
}

// controlPlane adds the parts no render shows: every stack's state lives
// in the one backend, and its secrets are decrypted by its provider.
func (b *builder) controlPlane() {
	for _, c := range b.in.Cells {
		p := b.add(KindStateBackend, BackendID, OwnerBackend, "", c.Cell, Use{Stack: c.Name})
		p.Detail = b.in.Backend
		provider := b.in.SecretsProviders[c.Name]
		if provider == "" {
			provider = DefaultSecretsProvider
		}
		b.add(KindSecretsProvider, provider, OwnerBackend, "", c.Cell, Use{Stack: c.Name})
	}
}

type reference struct {
	kind, id, owner, region, property string
}

var (
	// arnPattern: arn:partition:service:region:account:resource.
	arnPattern = regexp.MustCompile(`^arn:(aws[a-z-]*):([a-z0-9-]+):([a-z0-9-]*):([a-z0-9]*):(.+)$`)
	// prefixListPattern: an EC2 managed prefix list id.
	prefixListPattern = regexp.MustCompile(`^pl-[0-9a-f]{8,17}$`)
	// zoneIDPattern: a Route 53 hosted zone id.
	zoneIDPattern = regexp.MustCompile(`^Z[A-Z0-9]{1,31}$`)
	accountID     = regexp.MustCompile(`^\d{12}$`)
)

// zoneProperties are the top-level inputs that name a hosted zone records
// go in (an alias's zoneId names its target's service zone, not a zone
// anyone owns, and is not one).
var zoneProperties = map[string]bool{"zoneId": true, "hostedZoneId": true}

// references lists what one resource depends on outside its stack (self:
// the cell; "" for the router): identifiers of external things in its
// inputs, never the stack's own resources (own), another cell's (Check
// reports those) or, for a cell, the router's under their own names.
func (b *builder) references(r *offline.Resource, self string, own map[string]bool) []reference {
	var refs []reference
	seen := map[string]bool{}
	emit := func(ref reference) {
		k := ref.kind + " " + ref.id + " " + ref.property
		if !seen[k] {
			seen[k] = true
			refs = append(refs, ref)
		}
	}
	for _, k := range r.Inputs.StableKeys() {
		walk(string(k), r.Inputs[k], false, func(path, s string, secret bool) {
			if secret {
				if key, ok := b.in.Secrets[s]; ok {
					emit(reference{kind: KindSecret, id: key, owner: OwnerExternal, property: path})
				}
				return
			}
			if zoneProperties[path] && zoneIDPattern.MatchString(s) {
				emit(reference{kind: KindDNSZone, id: s, owner: OwnerExternal, property: path})
			}
			if path == "containerDefinitions" && r.Type == "aws:ecs/taskDefinition:TaskDefinition" {
				for _, repo := range images(s) {
					emit(reference{kind: KindImageRepository, id: repo.id, owner: OwnerExternal, region: repo.region, property: path})
				}
			}
			for _, tok := range pieces(s) {
				if prefixListPattern.MatchString(tok) {
					emit(reference{kind: KindPrefixList, id: tok, owner: OwnerAWS, region: "", property: path})
					continue
				}
				if m := anyKeyPattern.FindStringSubmatch(tok); m != nil {
					emit(b.anyKey(m[1], path))
					continue
				}
				if ref, ok := b.arn(tok, self, own); ok {
					for _, x := range ref {
						x.property = path
						emit(x)
					}
				}
			}
		})
	}
	return refs
}

// arn reads one ARN token: the account it names, and the resource unless
// it belongs to this stack or to another cell.
func (b *builder) arn(tok, self string, own map[string]bool) ([]reference, bool) {
	m := arnPattern.FindStringSubmatch(tok)
	if m == nil {
		return nil, false
	}
	region, account := m[3], m[4]
	var out []reference
	if accountID.MatchString(account) {
		id := account
		if account == b.in.PlaceholderAccount {
			id = CurrentAccount
		}
		out = append(out, reference{kind: KindAccount, id: id, owner: OwnerAWS})
	}
	a := arnPartOf(m)
	if a.root {
		return out, true // an account's root principal is the account itself
	}
	if a.accessPoint && (b.mentionsCell(a.norm) || strings.ContainsAny(a.id, "*?")) {
		// A cell's access point of the fleet bucket (named after the
		// cell, router/component) is that cell's way in, not a shared
		// part; the bucket behind it is one, and the cell's policy names
		// the bucket too. With a wildcard, it is the bucket policy's
		// delegation to the account's access points (a condition, not a
		// part).
		return out, true
	}
	norm := a.norm
	if own[tok] || own[norm] || b.mentionsCell(norm) {
		return out, true // this stack's own, or another cell's (Check's)
	}
	for _, piece := range strings.FieldsFunc(norm, isInnerDelim) {
		if len(piece) >= 8 && own[piece] {
			return out, true
		}
	}
	kind, id, owner := a.kind, a.id, OwnerExternal
	if account == "aws" {
		owner = OwnerAWS
	}
	service := m[2]
	if rr := b.router[norm]; rr != nil {
		owner = OwnerRouter
		if b.in.Router != nil && region == "" {
			region = b.in.Router.Region // the router's bucket lives in its region
		}
	}
	if service == "iam" || service == "cloudfront" || service == "route53" {
		region = "" // global services
	}
	return append(out, reference{kind: kind, id: id, owner: owner, region: region}), true
}

// arnPart is the part an ARN names, as the ledger lists it.
type arnPart struct {
	kind, id string
	// norm is the ARN of the resource itself: an object's bucket, an
	// access point without the object's key.
	norm string
	// root: an account's root principal (the account itself, no part);
	// accessPoint: an S3 access point (its own part only when it is no
	// cell's way into the fleet bucket).
	root, accessPoint bool
}

// arnPartOf names the part an ARN (arnPattern's match) is: a bucket by
// its name (buckets are named, not numbered), an access point by
// "accesspoint/<name>", anything else by its ARN, each of the kind
// arnKind gives its service.
func arnPartOf(m []string) arnPart {
	partition, service, region, account, res := m[1], m[2], m[3], m[4], m[5]
	a := arnPart{norm: m[0], root: service == "iam" && res == "root"}
	switch {
	case service == "s3" && strings.HasPrefix(res, "accesspoint/"):
		name, _, _ := strings.Cut(strings.TrimPrefix(res, "accesspoint/"), "/")
		a.accessPoint, res = true, "accesspoint/"+name
		a.norm = "arn:" + partition + ":s3:" + region + ":" + account + ":" + res
	case service == "s3":
		// An object ARN is its bucket: cells/<id>/* is the cell's prefix
		// of the shared bucket, and the bucket is the part.
		res, _, _ = strings.Cut(res, "/")
		a.norm = "arn:" + partition + ":s3:::" + res
	}
	a.kind, a.id = arnKind(service, res, a.norm), a.norm
	if service == "s3" {
		a.id = res
	}
	return a
}

// anyKeyPattern is a policy's "any key of an account (or of any account)
// in a region": a cell's use of the fleet bucket key through S3, which the
// cell cannot name exactly (the router creates the key).
var anyKeyPattern = regexp.MustCompile(`^arn:aws[a-z-]*:kms:([a-z0-9-]+):(?:\d{12}|\*):key/\*$`)

// anyKey is the part a region's any-key grant depends on: the router's
// bucket key when the router has one in that region, else the pattern.
func (b *builder) anyKey(region, path string) reference {
	if b.in.Router != nil && b.in.Router.Region == region {
		for _, r := range b.in.Router.Resources {
			if r.Type == "aws:kms/key:Key" {
				return reference{kind: KindKMSKey, id: r.Name, owner: OwnerRouter, region: region, property: path}
			}
		}
	}
	return reference{kind: KindKMSKey, id: "arn:aws:kms:" + region + ":*:key/*", owner: OwnerExternal, region: region, property: path}
}

// mentionsCell says whether an ARN names a cell: such a resource is that
// cell's (its own, or another cell's, which Check reports).
func (b *builder) mentionsCell(s string) bool { return len(cellIDs(s, b.ids)) > 0 }

// arnKind names the kind of part an ARN is.
func arnKind(service, res, arn string) string {
	switch service {
	case "s3":
		return KindBucket
	case "acm":
		return KindCertificate
	case "kms":
		return KindKMSKey
	case "iam":
		if strings.HasPrefix(res, "policy/") {
			return KindIAMPolicy
		}
		return "iam-" + strings.SplitN(res, "/", 2)[0]
	case "secretsmanager":
		return "secretsmanager-secret"
	case "sns":
		return "sns-topic"
	case "sqs":
		return "sqs-queue"
	case "lambda":
		return "lambda-function"
	case "dynamodb":
		return "dynamodb-table"
	}
	return service
}

type repository struct{ id, region string }

// images reads the container repositories of a task definition's
// containerDefinitions (JSON): the repository, without tag or digest, is
// the part — cells running different tags still pull from one place.
func images(defs string) []repository {
	var cs []struct {
		Image string `json:"image"`
	}
	if json.Unmarshal([]byte(defs), &cs) != nil {
		return nil
	}
	var out []repository
	for _, c := range cs {
		if c.Image == "" {
			continue
		}
		r := repository{id: awsfacts.ImageRepository(c.Image)}
		if ecr, ok := awsfacts.ParseECRImage(c.Image); ok {
			r.region = ecr.Region
		}
		out = append(out, r)
	}
	return out
}

// pieces splits an input string into the tokens an identifier can be: the
// whole string and its pieces between quotes, commas, brackets, spaces.
func pieces(s string) []string {
	out := []string{s}
	for _, p := range strings.FieldsFunc(s, isOuterDelim) {
		if p != s {
			out = append(out, p)
		}
	}
	return out
}

// walk calls fn for every string reachable in v, secrets included
// (flagged): the ledger matches secret values against the fleet's
// secrets, and never shows one.
func walk(path string, v resource.PropertyValue, secret bool, fn func(path, s string, secret bool)) {
	switch {
	case v.IsSecret():
		walk(path, v.SecretValue().Element, true, fn)
	case v.IsString():
		fn(path, v.StringValue(), secret)
	case v.IsOutput():
		if o := v.OutputValue(); o.Known {
			walk(path, o.Element, secret || o.Secret, fn)
		}
	case v.IsArray():
		for i, e := range v.ArrayValue() {
			walk(fmt.Sprintf("%s[%d]", path, i), e, secret, fn)
		}
	case v.IsObject():
		obj := v.ObjectValue()
		for _, k := range obj.StableKeys() {
			p := string(k)
			if path != "" {
				p = path + "." + p
			}
			walk(p, obj[k], secret, fn)
		}
	}
}
