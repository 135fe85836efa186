package access

import (
	"fmt"
	"strings"

	"github.com/cellctl/cellctl/internal/policy"
)

// Request is one API call: who, what, on which ARN, with which context.
type Request struct {
	Principal string `json:"principal"` // ARN or label
	Action    string `json:"action"`
	Resource  string `json:"resource"` // ARN
	// Context holds the condition keys the call carries (s3:prefix,
	// kms:ViaService, kms:EncryptionContext:aws:s3:arn, aws:SourceArn…).
	// aws:SecureTransport, aws:PrincipalArn, aws:PrincipalAccount and (on
	// KMS calls) kms:CallerAccount are filled in.
	Context map[string][]string `json:"context,omitempty"`
}

func (r Request) String() string {
	return fmt.Sprintf("%s %s %s", r.Principal, r.Action, r.Resource)
}

// Decision is an evaluation's outcome.
type Decision string

// Decisions. Undecidable is a finding wherever an answer is required: a
// gate never reads it as allowed or as denied.
const (
	Allowed      Decision = "Allowed"
	ImplicitDeny Decision = "ImplicitlyDenied"
	ExplicitDeny Decision = "ExplicitlyDenied"
	Undecidable  Decision = "Undecidable"
)

// Words is the decision in lower-case words ("implicitly denied").
func (d Decision) Words() string {
	switch d {
	case ImplicitDeny:
		return "implicitly denied"
	case ExplicitDeny:
		return "explicitly denied"
	}
	return strings.ToLower(string(d))
}

// Denied reports whether the decision is a deny of either kind.
func (d Decision) Denied() bool { return d == ImplicitDeny || d == ExplicitDeny }

// Ref is one statement that took part in a decision.
type Ref struct {
	Policy string `json:"policy"`
	Sid    string `json:"sid"`
	Effect string `json:"effect"`
}

func (r Ref) String() string { return r.Policy + " " + r.Sid + " (" + r.Effect + ")" }

// Verdict is a decision with its reasons.
type Verdict struct {
	Request  Request  `json:"request"`
	Decision Decision `json:"decision"`
	// Reason says why, in a sentence: which side allowed or failed to.
	Reason string `json:"reason"`
	// Deciding are the statements that decided (the allows that granted,
	// or the deny that won).
	Deciding []Ref `json:"deciding,omitempty"`
	// Implied are the verdicts of the calls the service makes on the
	// caller's behalf (a KMS key under S3, SQS, Secrets Manager).
	Implied []Verdict `json:"implied,omitempty"`
}

// match is what one side (identity or resource policy) says.
type match struct {
	allow, deny      []Ref
	allowUndecidable []string
	denyUndecidable  []string
	allowDirect      bool // a resource policy names the caller itself
	allowViaAccount  bool // … or only its account (delegation to IAM)
}

// Evaluate decides one request and every call the service makes for it.
func (m *Model) Evaluate(req Request) Verdict {
	v := m.evaluate(req)
	if v.Decision != Allowed {
		return v
	}
	for _, sub := range m.implied(req) {
		sv := m.evaluate(sub)
		v.Implied = append(v.Implied, sv)
		if sv.Decision != Allowed {
			v.Decision = sv.Decision
			v.Reason = fmt.Sprintf("the service's call on the caller's behalf, %s on %s, is %s: %s", sub.Action, sub.Resource, sv.Decision.Words(), sv.Reason)
		}
	}
	return v
}

func (m *Model) evaluate(req Request) Verdict {
	v := Verdict{Request: req}
	p := m.Principal(req.Principal)
	if p == nil {
		v.Decision, v.Reason = Undecidable, fmt.Sprintf("principal %s is not in the fleet's access model", req.Principal)
		return v
	}
	req.Principal = p.ARN
	v.Request = req
	ctx := requestContext(req, p)
	r := m.resource(req.Resource)
	resAccount := ""
	if r != nil {
		resAccount = r.Account
	} else if req.Resource == AnyResource {
		// An action that takes no resource is the caller's account's.
		resAccount = p.Account
	} else if a, ok := ParseARN(req.Resource); ok {
		if a.Service == "kms" || a.Service == "iam" {
			// Its own policy decides, and the model does not hold it.
			v.Decision, v.Reason = Undecidable, fmt.Sprintf("%s is not in the fleet's access model: its policy cannot be read", req.Resource)
			return v
		}
		resAccount = a.Account
	}
	if resAccount == "" {
		v.Decision, v.Reason = Undecidable, fmt.Sprintf("the account of %s is not known to the access model", req.Resource)
		return v
	}

	var id match
	if !p.Service {
		for i := range p.Identity {
			id.add(&p.Identity[i], req, ctx, nil)
		}
	}
	var res match
	if r != nil && r.Policy != nil {
		res.add(r.Policy, req, ctx, p)
	}
	if deny := append(id.deny, res.deny...); len(deny) > 0 {
		v.Decision, v.Deciding = ExplicitDeny, deny
		v.Reason = "an explicit Deny applies: " + refList(deny)
		return v
	}
	if und := append(id.denyUndecidable, res.denyUndecidable...); len(und) > 0 {
		v.Decision, v.Reason = Undecidable, "a Deny may apply: "+strings.Join(und, "; ")
		return v
	}

	identity := len(id.allow) > 0
	resource := res.allowDirect || res.allowViaAccount
	cross := p.Account != resAccount
	mustResource := r != nil && (r.Kind == KindKey || r.Kind == KindRole)
	var allowed bool
	switch {
	case p.Service:
		// A service acts only where a resource policy names it.
		allowed = res.allowDirect
		v.Reason = "a service principal needs the resource policy to name it"
	case cross:
		allowed = identity && resource
		v.Reason = "across accounts, the caller's identity policy and the resource's policy must both allow"
	case mustResource:
		allowed = res.allowDirect || (res.allowViaAccount && identity)
		v.Reason = "the " + kindNoun(r.Kind) + " must allow: naming the caller, or its account with the caller's identity policy allowing too"
	default:
		allowed = identity || res.allowDirect
		if res.allowViaAccount && !identity {
			v.Reason = "the resource policy names only the account: the caller's identity policy must allow"
		} else {
			v.Reason = "within one account, an Allow in the identity or the resource policy suffices"
		}
	}
	if allowed {
		v.Decision = Allowed
		v.Deciding = append(append([]Ref{}, id.allow...), res.allow...)
		if r != nil && r.Kind == KindAccessPoint && dataAction(req.Action) {
			_, key, _ := m.accessPointOf(req.Resource)
			return m.throughBucket(v, p, r, key)
		}
		return v
	}
	if und := append(id.allowUndecidable, res.allowUndecidable...); len(und) > 0 {
		v.Decision, v.Reason = Undecidable, "an Allow may apply: "+strings.Join(und, "; ")
		return v
	}
	v.Decision = ImplicitDeny
	switch {
	case !identity && !resource:
		v.Reason = "no policy allows it (" + v.Reason + ")"
	case !identity:
		v.Reason = "the caller's identity policy does not allow it (" + v.Reason + "); the resource allows: " + refList(res.allow)
	case cross && r != nil && r.Policy == nil:
		v.Reason = fmt.Sprintf("%s has no %s in the render (%s); the identity allows: %s", r.Label, policyNoun(r.Kind), v.Reason, refList(id.allow))
	default:
		v.Reason = "the resource's policy does not allow it (" + v.Reason + "); the identity allows: " + refList(id.allow)
	}
	return v
}

// policyNoun names a resource kind's own policy.
func policyNoun(kind string) string {
	switch kind {
	case KindRepository:
		return "repository policy"
	case KindBucket:
		return "bucket policy"
	case KindQueue:
		return "queue policy"
	case KindSecret:
		return "secret policy"
	case KindAccessPoint:
		return "access point policy"
	}
	return "resource policy"
}

func kindNoun(kind string) string {
	if kind == KindKey {
		return "key policy"
	}
	return "trust policy"
}

// add evaluates one policy's statements; caller is nil for an identity
// policy, the request's principal for a resource policy (whose statements
// apply only where their Principal names it).
func (mt *match) add(pol *Policy, req Request, ctx lookup, caller *Principal) {
	idx := func(yield func(int) bool) {
		if caller == nil {
			for i := range pol.Doc.Statement {
				if !yield(i) {
					return
				}
			}
			return
		}
		for _, i := range pol.statementsFor(caller) {
			if !yield(i) {
				return
			}
		}
	}
	for i := range idx {
		s := pol.Doc.Statement[i]
		direct, viaAccount := true, false
		if caller != nil {
			direct, viaAccount = principalMatches(s, caller)
			if !direct && !viaAccount {
				continue
			}
		}
		if !actionCovers(s, req.Action) || !resourceCovers(s, req.Resource) {
			continue
		}
		ref := Ref{Policy: pol.Name, Sid: s.Label(i), Effect: s.Effect}
		ok, err := conditionsHold(s.Condition, ctx)
		if err != nil {
			msg := ref.String() + ": " + err.Error()
			if s.Effect == policy.Deny {
				mt.denyUndecidable = append(mt.denyUndecidable, msg)
			} else {
				mt.allowUndecidable = append(mt.allowUndecidable, msg)
			}
			continue
		}
		if !ok {
			continue
		}
		if s.Effect == policy.Deny {
			mt.deny = append(mt.deny, ref)
			continue
		}
		mt.allow = append(mt.allow, ref)
		mt.allowDirect = mt.allowDirect || direct
		mt.allowViaAccount = mt.allowViaAccount || viaAccount
	}
}

func actionCovers(s policy.Statement, action string) bool {
	if len(s.NotAction) > 0 {
		return !anyMatches(s.NotAction, action, actionMatches)
	}
	return anyMatches(s.Action, action, actionMatches)
}

func resourceCovers(s policy.Statement, arn string) bool {
	switch {
	case len(s.NotResource) > 0:
		return !anyMatches(s.NotResource, arn, resourceMatches)
	case len(s.Resource) == 0:
		// Resource policies may omit Resource: the resource itself.
		return true
	}
	return anyMatches(s.Resource, arn, resourceMatches)
}

// principalMatches reports whether a resource policy statement names the
// caller itself (or everyone), or only the caller's account — in which
// case the account's own IAM policies must allow as well ("Specifying a
// principal", IAM User Guide).
func principalMatches(s policy.Statement, p *Principal) (direct, viaAccount bool) {
	if s.NotPrincipal != nil {
		d, a := principalIn(s.NotPrincipal, p)
		return !d && !a, false
	}
	if s.Principal == nil {
		return false, false
	}
	return principalIn(s.Principal, p)
}

func principalIn(pr *policy.Principal, p *Principal) (direct, viaAccount bool) {
	if pr.All {
		return true, false
	}
	if p.Service {
		for _, s := range pr.Kinds[policy.KindService] {
			if strings.EqualFold(s, p.ARN) {
				return true, false
			}
		}
		return false, false
	}
	for _, a := range pr.Kinds[policy.KindAWS] {
		switch {
		case a == "*": // {"AWS": "*"}, everyone, however the document was built
			return true, false
		case a == p.ARN:
			direct = true
		case a == p.Account:
			viaAccount = true
		default:
			if arn, ok := ParseARN(a); ok && arn.Service == "iam" && arn.Account == p.Account && arn.Resource == "root" {
				viaAccount = true
			}
		}
	}
	return direct, viaAccount
}

// requestContext reads the request's context, then the keys every request
// carries (withDefaults), without building a map per request.
func requestContext(req Request, p *Principal) lookup {
	kms := strings.HasPrefix(strings.ToLower(req.Action), "kms:")
	return func(key string) ([]string, bool) {
		if v, ok := contextValues(req.Context, key); ok {
			return v, true
		}
		var v string
		switch strings.ToLower(key) {
		case "aws:securetransport":
			v = "true"
		case "aws:principalservicename":
			if p.Service {
				v = p.ARN
			}
		case "aws:principalarn":
			if !p.Service {
				v = p.ARN
			}
		case "aws:principalaccount":
			if !p.Service {
				v = p.Account
			}
		case "kms:calleraccount":
			if kms {
				v = p.Account
			}
		}
		if v == "" {
			return nil, false
		}
		return []string{v}, true
	}
}

// withDefaults fills in the keys every request carries (the map form of
// requestContext, for an outside evaluator).
func withDefaults(req Request, p *Principal) map[string][]string {
	ctx := make(map[string][]string, len(req.Context)+4)
	for k, v := range req.Context {
		ctx[k] = v
	}
	set := func(k, v string) {
		if _, ok := contextValues(ctx, k); !ok && v != "" {
			ctx[k] = []string{v}
		}
	}
	// cellctl's clients and the AWS SDKs call over TLS.
	set("aws:SecureTransport", "true")
	if p.Service {
		set("aws:PrincipalServiceName", p.ARN)
	} else {
		set("aws:PrincipalArn", p.ARN)
		set("aws:PrincipalAccount", p.Account)
	}
	if strings.HasPrefix(strings.ToLower(req.Action), "kms:") {
		set("kms:CallerAccount", p.Account)
	}
	return ctx
}

func refList(refs []Ref) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// EvaluateOne decides the request alone, without the calls the service
// makes on the caller's behalf (Implied lists those).
func (m *Model) EvaluateOne(req Request) Verdict { return m.evaluate(req) }

// Implied are the calls the service makes on the caller's behalf to serve
// req (the keys under S3, SQS and Secrets Manager).
func (m *Model) Implied(req Request) []Request { return m.implied(req) }

// Inputs are everything a decision reads, as an outside evaluator needs
// them: the caller, the resource's ARN and account, the full request
// context, the caller's identity policies and the resource's policy.
type Inputs struct {
	Principal       *Principal
	Resource        string
	ResourceAccount string
	Context         map[string][]string
	Identity        []*Policy
	ResourcePolicy  *Policy
}

// InputsOf returns the inputs of req; ok is false when the model cannot
// decide it (an unknown principal or resource account).
func (m *Model) InputsOf(req Request) (Inputs, bool) {
	p := m.Principal(req.Principal)
	if p == nil {
		return Inputs{}, false
	}
	in := Inputs{Principal: p, Resource: req.Resource, Context: withDefaults(req, p)}
	if r := m.resource(req.Resource); r != nil {
		in.ResourceAccount, in.ResourcePolicy = r.Account, r.Policy
	} else if a, ok := ParseARN(req.Resource); ok {
		in.ResourceAccount = a.Account
	}
	if in.ResourceAccount == "" {
		return Inputs{}, false
	}
	if !p.Service {
		for i := range p.Identity {
			in.Identity = append(in.Identity, &p.Identity[i])
		}
	}
	return in, true
}
