package access

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Path is a request the fleet must be able to make (required) or must
// never be able to make (forbidden), named by the model's labels.
type Path struct {
	// Name says what the path is for, in words.
	Name string `json:"name"`
	// DeclaredBy is where the path is declared (the program that needs
	// it, or "isolation" for the generated forbidden paths).
	DeclaredBy string `json:"declaredBy"`
	Principal  string `json:"principal"`
	Action     string `json:"action"`
	// Resource is a resource's label; Suffix extends its ARN (an object
	// key under a bucket, a log stream).
	Resource string              `json:"resource"`
	Suffix   string              `json:"suffix,omitempty"`
	Context  map[string][]string `json:"context,omitempty"`
}

// Result is a path's verdict; Finding is set when it is not what the path
// requires (a required path not Allowed, a forbidden one not Denied).
type Result struct {
	Path     Path     `json:"path"`
	ARN      string   `json:"arn"`
	Decision Decision `json:"decision"`
	Reason   string   `json:"reason"`
	Deciding []Ref    `json:"deciding,omitempty"`
	Finding  bool     `json:"finding"`
}

// Report is the verdict on every required and forbidden path.
type Report struct {
	Required  []Result        `json:"required"`
	Forbidden ForbiddenReport `json:"forbidden"`
	// Keys are the data keys that could be deleted (Model.KeyLifetime).
	Keys []string `json:"keys"`
	// Actions are the actions policies name that AWS does not define
	// (Model.UnknownActions).
	Actions []string `json:"actions"`
	// Redrives are the queues whose dead-letter queue would not take
	// their failed messages (Model.Redrives).
	Redrives []string `json:"redrives"`
	// Edge are the edge paths CloudFront cannot take (Model.CheckEdge).
	Edge []string `json:"edge"`
}

// OK reports whether every path is as required, every data key safe,
// every action one AWS defines, every dead-letter queue takes its
// messages and CloudFront can take every edge path.
func (r Report) OK() bool {
	return len(r.Findings()) == 0 && len(r.Keys) == 0 && len(r.Actions) == 0 && len(r.Redrives) == 0 && len(r.Edge) == 0
}

// Problems are the findings that are not IAM paths: data keys, actions,
// dead-letter queues and the edge's paths.
func (r Report) Problems() []string {
	return append(append(append(append([]string{}, r.Keys...), r.Actions...), r.Redrives...), r.Edge...)
}

// Findings are the results that break the fleet's promise: required
// paths first.
func (r Report) Findings() []Result {
	var out []Result
	for _, x := range r.Required {
		if x.Finding {
			out = append(out, x)
		}
	}
	return append(out, r.Forbidden.Findings...)
}

// Counts are the number of required paths allowed and forbidden paths
// denied, of each's total.
func (r Report) Counts() (allowed, required, denied, forbidden int) {
	for _, x := range r.Required {
		if !x.Finding {
			allowed++
		}
	}
	return allowed, len(r.Required), r.Forbidden.Denied, r.Forbidden.Total
}

// Check evaluates the required paths and the isolation claim's forbidden
// paths. A required path is met only when Allowed; a forbidden one only
// when denied — an undecidable answer is a finding either way.
func (m *Model) Check(required []Path, isCell func(owner string) bool) Report {
	return Report{Required: m.CheckRequired(required), Forbidden: m.CheckForbidden(isCell), Keys: append([]string{}, m.KeyLifetime()...),
		Actions: append([]string{}, m.UnknownActions()...), Redrives: append([]string{}, m.Redrives()...)}
}

// CheckRequired evaluates paths that must be Allowed.
func (m *Model) CheckRequired(paths []Path) []Result {
	out := make([]Result, 0, len(paths))
	for _, p := range paths {
		res := m.checkOne(p)
		res.Finding = res.Decision != Allowed
		out = append(out, res)
	}
	return out
}

// CheckDenied evaluates paths that must be denied, each in full.
func (m *Model) CheckDenied(paths []Path) []Result {
	out := make([]Result, 0, len(paths))
	for _, p := range paths {
		res := m.checkOne(p)
		res.Finding = !res.Decision.Denied()
		out = append(out, allowedBy(res))
	}
	return out
}

// allowedBy names, on a forbidden path that is allowed, the statements
// that allow it: what the finding asks to change.
func allowedBy(res Result) Result {
	if res.Decision == Allowed && len(res.Deciding) > 0 {
		res.Reason += "; allowed by " + refList(res.Deciding)
	}
	return res
}

func (m *Model) checkOne(p Path) Result {
	res := Result{Path: p}
	if p.Resource == AnyResource {
		res.ARN = AnyResource
		return m.decide(res, p)
	}
	r := m.ResourceByLabel(p.Resource)
	if r == nil {
		res.Decision, res.Reason = Undecidable, fmt.Sprintf("the render has no resource %s", p.Resource)
		return res
	}
	res.ARN = r.ARN + p.Suffix
	return m.decide(res, p)
}

// decide evaluates a path on its resolved ARN.
func (m *Model) decide(res Result, p Path) Result {
	if m.Principal(p.Principal) == nil {
		res.Decision, res.Reason = Undecidable, fmt.Sprintf("the render has no principal %s", p.Principal)
		return res
	}
	v := m.Evaluate(Request{Principal: p.Principal, Action: p.Action, Resource: res.ARN, Context: p.Context})
	res.Decision, res.Reason, res.Deciding = v.Decision, v.Reason, v.Deciding
	for _, iv := range v.Implied {
		res.Deciding = append(res.Deciding, iv.Deciding...)
	}
	return res
}

// target is one resource ARN (with a probe's suffix) that forbidden paths
// try, the actions tried on it and their context.
type target struct {
	res   *Resource // for its label
	arn   string
	owner string
	from  reach
	// account is set on the cross-account family's targets: they are
	// tried only from principals of another account.
	account string
	actions []string
	ctx     map[string][]string
	name    string
}

// reach is which principals of another owner a target is tried from.
type reach int

const (
	fromAll reach = iota
	// fromCells: a cell's principals only (the router's administration,
	// which the router's own roles exercise).
	fromCells
	// fromNonCells: the cross-account probes of a router resource for a
	// principal of no cell, which the administration family (cells only)
	// leaves out.
	fromNonCells
)

// targets are every forbidden-path target of the model, sorted by ARN.
func (m *Model) targets(isCell func(string) bool) []target {
	// The accounts the forbidden paths are tried from: a resource's
	// cross-account targets apply only from another one, so a fleet of
	// one account builds none.
	accounts := map[string]bool{}
	for _, p := range m.forbiddenPrincipals() {
		accounts[p.Account] = true
	}
	var out []target
	for _, r := range m.Resources() {
		if r.Owner == "" {
			continue
		}
		var prs []Probe
		from := fromAll
		if !isCell(r.Owner) {
			prs, from = adminProbes(r), fromCells
		} else {
			prs = cellProbes(r)
		}
		suffixes, own := bySuffix(prs)
		for _, suf := range suffixes {
			out = append(out, target{res: r, arn: r.ARN + suf, owner: r.Owner, from: from, actions: own[suf],
				name: fmt.Sprintf("%%s must not reach %s's %s", r.Owner, r.Label)})
		}
		if len(accounts) > 1 || !accounts[r.Account] {
			out = append(out, crossAccountTargets(r, from, own)...)
		}
	}
	for _, x := range m.prefixes {
		if !isCell(x.Owner) {
			continue
		}
		out = append(out,
			target{res: x.Bucket, arn: x.Bucket.ARN + "/" + x.Prefix + "probe", owner: x.Owner,
				actions: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"},
				name:    fmt.Sprintf("%%s must not reach %s's prefix %s", x.Owner, x.Prefix)},
			target{res: x.Bucket, arn: x.Bucket.ARN, owner: x.Owner, actions: []string{"s3:ListBucket"},
				ctx:  map[string][]string{"s3:prefix": {x.Prefix}},
				name: fmt.Sprintf("%%s must not list %s's prefix %s", x.Owner, x.Prefix)})
	}
	out = append(out, m.accessPointTargets(isCell)...)
	out = append(out, m.recordTargets(isCell)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].arn < out[j].arn })
	return out
}

// accessPointTargets are the forbidden-path targets through the access
// points that serve a cell's prefix: no other owner reaches the cell's
// prefix through it, and the cell reaches no other cell's prefix through
// it (the next cell's, in the order the prefixes were added: an access
// point policy wider than its cell's prefix lets its cell reach every
// other prefix alike).
func (m *Model) accessPointTargets(isCell func(string) bool) []target {
	objects := []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}
	var out []target
	for _, ap := range m.Resources() {
		if ap.Kind != KindAccessPoint || ap.bucket == nil || !isCell(ap.serves) {
			continue
		}
		var own []Prefix
		for i, x := range m.prefixes {
			if x.Bucket != ap.bucket || x.Owner != ap.serves {
				continue
			}
			own = append(own, x)
			for j := 1; j < len(m.prefixes); j++ {
				y := m.prefixes[(i+j)%len(m.prefixes)]
				if y.Bucket == ap.bucket && y.Owner != ap.serves && isCell(y.Owner) {
					own = append(own, y)
					break
				}
			}
			break
		}
		for _, x := range own {
			via := "its access point"
			if x.Owner != ap.serves {
				via = ap.serves + "'s access point"
			}
			out = append(out,
				target{res: ap, arn: ap.ARN + "/object/" + x.Prefix + "probe", owner: x.Owner, actions: objects,
					name: fmt.Sprintf("%%s must not reach %s's prefix %s through %s %s", x.Owner, x.Prefix, via, ap.Label)},
				target{res: ap, arn: ap.ARN, owner: x.Owner, actions: []string{"s3:ListBucket"},
					ctx:  map[string][]string{"s3:prefix": {x.Prefix}},
					name: fmt.Sprintf("%%s must not list %s's prefix %s through %s %s", x.Owner, x.Prefix, via, ap.Label)})
		}
	}
	return out
}

// bySuffix groups probes by their ARN suffix, in the order first seen.
func bySuffix(prs []Probe) ([]string, map[string][]string) {
	by := map[string][]string{}
	var suffixes []string
	for _, pr := range prs {
		if _, ok := by[pr.Suffix]; !ok {
			suffixes = append(suffixes, pr.Suffix)
		}
		by[pr.Suffix] = append(by[pr.Suffix], pr.Action)
	}
	return suffixes, by
}

// crossAccountTargets are the cross-account family's targets of a
// resource: its data probes, tried from every principal of another
// account, less the actions its own family (tried from the same
// principals: from, with those actions by suffix in own) already tries,
// so no path is counted twice. A resource the fleet declares shared
// (DeclareShared; an access point, when the bucket it serves is) has
// none: who reaches it is what the cell and router families decide.
func crossAccountTargets(r *Resource, from reach, own map[string][]string) []target {
	if r.Account == "" || r.shared || (r.Kind == KindAccessPoint && r.bucket != nil && r.bucket.shared) {
		return nil
	}
	suffixes, data := bySuffix(dataProbes(r))
	name := fmt.Sprintf("%%s must not reach %s's %s across accounts (%s, not declared shared)", r.Owner, r.Label, r.Account)
	var out []target
	for _, suf := range suffixes {
		var rest []string
		for _, a := range data[suf] {
			if !slices.Contains(own[suf], a) {
				rest = append(rest, a)
			}
		}
		if len(rest) > 0 {
			out = append(out, target{res: r, arn: r.ARN + suf, owner: r.Owner, from: from, account: r.Account, actions: rest, name: name})
		}
		if from == fromCells {
			// A principal of neither a cell nor the resource's owner
			// gets no administration probes: all its data probes here.
			out = append(out, target{res: r, arn: r.ARN + suf, owner: r.Owner, from: fromNonCells, account: r.Account, actions: data[suf], name: name})
		}
	}
	return out
}

// applies reports whether a target is tried from principal p: another
// owner's (of another account, for the cross-account family), and a
// router resource's administration only from a cell's principal.
func (t target) applies(p *Principal, isCell func(string) bool) bool {
	if t.owner == p.Owner || (t.account != "" && t.account == p.Account) {
		return false
	}
	switch t.from {
	case fromCells:
		return isCell(p.Owner)
	case fromNonCells:
		return !isCell(p.Owner)
	}
	return true
}

func (t target) path(p *Principal, action string) Path {
	return Path{Name: fmt.Sprintf(t.name, p.Label), DeclaredBy: "isolation", Principal: p.Label, Action: action,
		Resource: t.res.Label, Suffix: strings.TrimPrefix(t.arn, t.res.ARN), Context: t.ctx}
}

// forbiddenPrincipals are the principals the isolation claim is about:
// every role a cell or the router owns.
func (m *Model) forbiddenPrincipals() []*Principal {
	var out []*Principal
	for _, p := range m.Principals() {
		if !p.Service && p.Owner != "" {
			out = append(out, p)
		}
	}
	return out
}

// Forbidden lists the isolation claim as paths: every principal owned by
// one cell (or the router) against every resource and bucket prefix of
// another cell, every cell principal against the router's key and
// bucket administration and its roles, and every principal against the
// data of every resource in another account than its own, except those
// declared shared (DeclareShared). It is the claim written out;
// CheckForbidden decides the same paths without writing out those no
// Allow statement can reach (a 256-cell fleet has millions).
func (m *Model) Forbidden(isCell func(owner string) bool) []Path {
	var out []Path
	ts := m.targets(isCell)
	for _, p := range m.forbiddenPrincipals() {
		for _, t := range ts {
			if !t.applies(p, isCell) {
				continue
			}
			for _, a := range t.actions {
				out = append(out, t.path(p, a))
			}
		}
	}
	return out
}

// ForbiddenReport is the verdict on the isolation claim.
type ForbiddenReport struct {
	// Total is the number of forbidden paths; Denied how many are denied.
	Total  int `json:"total"`
	Denied int `json:"denied"`
	// CrossAccount counts the cross-account family's paths among Total:
	// data reached from another account, beyond what the cell and router
	// families try.
	CrossAccount int `json:"crossAccount"`
	// Evaluated counts the paths some Allow statement could reach, each
	// evaluated in full (the others are denied: nothing allows them).
	Evaluated int `json:"evaluated"`
	// Findings are the forbidden paths not denied.
	Findings []Result `json:"findings"`
}

// CheckForbidden decides every path Forbidden lists. A path no Allow
// statement of the caller's identity policies or of the target's policy
// can cover is implicitly denied without evaluating it: the candidates
// are found through the targets sorted by ARN (a statement's resource
// pattern reaches only the ARNs sharing its literal prefix) and the
// resource policies indexed by the principals they name.
func (m *Model) CheckForbidden(isCell func(owner string) bool) ForbiddenReport {
	rep := ForbiddenReport{Findings: []Result{}}
	ts := m.targets(isCell)
	arns := make([]string, len(ts))
	for i, t := range ts {
		arns[i] = t.arn
	}
	cand := make([]bool, len(ts))
	for _, p := range m.forbiddenPrincipals() {
		clear(cand)
		for i := range p.Identity {
			for _, s := range p.Identity[i].Doc.Statement {
				if s.Effect != "Allow" {
					continue
				}
				if len(s.NotResource) > 0 || len(s.NotAction) > 0 {
					for j := range cand {
						cand[j] = true
					}
					continue
				}
				for _, pat := range s.Resource {
					lo, hi := literalRange(arns, pat)
					for j := lo; j < hi; j++ {
						if !cand[j] && actionsOverlap(s.Action, ts[j].actions) && resourceMatches(pat, arns[j]) {
							cand[j] = true
						}
					}
				}
			}
		}
		for j, t := range ts {
			if !t.applies(p, isCell) {
				continue
			}
			rep.Total += len(t.actions)
			if t.account != "" {
				rep.CrossAccount += len(t.actions)
			}
			if !cand[j] && (t.res.Policy == nil || !t.res.Policy.mayAllow(p)) {
				rep.Denied += len(t.actions)
				continue
			}
			for _, a := range t.actions {
				rep.Evaluated++
				v := m.Evaluate(Request{Principal: p.ARN, Action: a, Resource: t.arn, Context: t.ctx})
				if v.Decision.Denied() {
					rep.Denied++
					continue
				}
				res := m.checkOne(t.path(p, a))
				res.Finding = true
				rep.Findings = append(rep.Findings, allowedBy(res))
			}
		}
	}
	return rep
}

// literalRange is the range of sorted ARNs a resource pattern can match:
// those starting with its literal prefix (up to the first wildcard).
func literalRange(arns []string, pattern string) (int, int) {
	lit := pattern
	if i := strings.IndexAny(pattern, "*?"); i >= 0 {
		lit = pattern[:i]
	}
	lo := sort.SearchStrings(arns, lit)
	hi := lo
	for hi < len(arns) && strings.HasPrefix(arns[hi], lit) {
		hi++
	}
	return lo, hi
}

// actionsOverlap reports whether any pattern covers any of actions.
func actionsOverlap(patterns, actions []string) bool {
	for _, a := range actions {
		if anyMatches(patterns, a, actionMatches) {
			return true
		}
	}
	return false
}

// cellProbes are the requests tried against another cell's resource.
func cellProbes(r *Resource) []Probe {
	switch r.Kind {
	case KindQueue:
		return probes("sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:PurgeQueue")
	case KindKey:
		return probes("kms:Decrypt", "kms:GenerateDataKey", "kms:PutKeyPolicy")
	case KindRole:
		return probes("sts:AssumeRole")
	case KindSecret:
		return probes("secretsmanager:GetSecretValue")
	case KindBucket:
		return probes("s3:PutBucketPolicy", "s3:DeleteBucket")
	}
	return r.Probes
}

// dataProbes are the requests that reach a resource's data, tried from
// every principal of another account: what its owner's own principals
// use it for.
func dataProbes(r *Resource) []Probe {
	objects := func(suffix string) []Probe {
		return []Probe{{Action: "s3:GetObject", Suffix: suffix}, {Action: "s3:PutObject", Suffix: suffix},
			{Action: "s3:DeleteObject", Suffix: suffix}, {Action: "s3:ListBucket"}}
	}
	switch r.Kind {
	case KindQueue:
		return probes("sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:PurgeQueue")
	case KindKey:
		return probes("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:ReEncryptFrom")
	case KindRole:
		return probes("sts:AssumeRole")
	case KindSecret:
		return probes("secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue")
	case KindBucket:
		return objects("/probe")
	case KindAccessPoint:
		return objects("/object/probe")
	}
	return r.Probes
}

// adminProbes are the requests a cell must never make on the router's
// resources: administer its key and bucket, assume its roles, read its
// secrets.
func adminProbes(r *Resource) []Probe {
	switch r.Kind {
	case KindKey:
		return probes("kms:PutKeyPolicy", "kms:ScheduleKeyDeletion", "kms:DisableKey", "kms:CreateGrant")
	case KindBucket:
		return probes("s3:PutBucketPolicy", "s3:PutEncryptionConfiguration", "s3:DeleteBucket")
	case KindRole:
		return probes("sts:AssumeRole")
	case KindSecret:
		return probes("secretsmanager:GetSecretValue")
	case KindAccessPoint:
		return probes("s3:PutAccessPointPolicy", "s3:DeleteAccessPoint")
	}
	return nil
}

func probes(actions ...string) []Probe {
	out := make([]Probe, len(actions))
	for i, a := range actions {
		out[i] = Probe{Action: a}
	}
	return out
}

// Describe is a path's one-line form for tables and errors.
func (r Result) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", r.Path.Principal, r.Path.Action, r.Path.Resource+r.Path.Suffix)
	if len(r.Path.Context) > 0 {
		keys := make([]string, 0, len(r.Path.Context))
		for k := range r.Path.Context {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + strings.Join(r.Path.Context[k], ",")
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(parts, " "))
	}
	return b.String()
}
