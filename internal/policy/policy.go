// Package policy is the one typed IAM policy document cellctl reads and
// writes: identity, resource (bucket, queue, secret), key and trust
// policies. The programs build documents from these types, and the access
// evaluator, the isolation audit and the AWS model read rendered policies
// back through Parse, so a statement means the same thing to all of them.
//
// The grammar is AWS's ("IAM JSON policy element reference", IAM User
// Guide): every element that takes strings takes a single string or a
// list; Principal is "*" or an object of principal kinds.
package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Version is the policy language version every cellctl document uses.
const Version = "2012-10-17"

// Effects.
const (
	Allow = "Allow"
	Deny  = "Deny"
)

// Document is a policy document.
type Document struct {
	Version   string      `json:"Version"`
	ID        string      `json:"Id,omitempty"`
	Statement []Statement `json:"Statement"`
	// Layout is how JSON writes the document (Parse leaves it zero).
	Layout Layout `json:"-"`
}

// Layout is one of the ways a document is written. AWS reads every
// spelling of a document alike (key order, "s3:*" or ["s3:*"]), but
// Pulumi compares a policy's text: a deployed document written another
// way is an update of its resource. So each program keeps the layout its
// documents were first deployed in.
type Layout int

const (
	// TypeOrder writes the keys in the order of this package's types and
	// every element as a list, except a principal kind of one value,
	// written as a string (the cell template's documents).
	TypeOrder Layout = iota
	// SortedKeys writes every object's keys sorted and every element as
	// a list unless the statement's Scalar covers it (the router's
	// documents, first written as Go maps by encoding/json).
	SortedKeys
)

// Statement is one statement. Exactly one of Action and NotAction is set,
// at most one of Resource and NotResource, and Principal or NotPrincipal
// only in resource, key and trust policies.
type Statement struct {
	Sid          string     `json:"Sid,omitempty"`
	Effect       string     `json:"Effect"`
	Principal    *Principal `json:"Principal,omitempty"`
	NotPrincipal *Principal `json:"NotPrincipal,omitempty"`
	Action       Values     `json:"Action,omitempty"`
	NotAction    Values     `json:"NotAction,omitempty"`
	Resource     Values     `json:"Resource,omitempty"`
	NotResource  Values     `json:"NotResource,omitempty"`
	Condition    Conditions `json:"Condition,omitempty"`
	// Scalar names the elements the SortedKeys layout writes as a single
	// string rather than a list of one: "Action", "NotAction",
	// "Resource", "NotResource", "Principal" (every kind) or
	// "Principal.AWS", "Condition" (every key) or "Condition.<operator>"
	// or "Condition.<operator>.<key>". An element with more than one
	// value is a list whatever Scalar says.
	Scalar []string `json:"-"`
}

// Values is a string-or-list element. It is written as a list (the form
// the programs have always rendered) and read in either form.
type Values []string

// UnmarshalJSON reads a string or a list of strings.
func (v *Values) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = Values{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("want a string or a list of strings, got %s", abbreviate(b))
	}
	*v = list
	return nil
}

// Conditions maps a condition operator (StringEquals, ArnLike, …) to its
// keys and their values.
type Conditions map[string]map[string]Values

// Principal is a statement's Principal: everyone ("*"), or principals by
// kind ("AWS", "Service", "Federated", "CanonicalUser").
type Principal struct {
	// All is the wildcard principal "*" (and {"AWS": "*"}).
	All bool
	// Kinds maps a kind to its principals.
	Kinds map[string]Values
}

// Principal kinds.
const (
	KindAWS     = "AWS"
	KindService = "Service"
)

// Everyone is the wildcard principal.
func Everyone() *Principal { return &Principal{All: true} }

// AWSPrincipals names IAM principals (ARNs or account ids); {"AWS": "*"}
// is everyone, as Parse reads it.
func AWSPrincipals(arns ...string) *Principal {
	return &Principal{Kinds: map[string]Values{KindAWS: arns}, All: len(arns) == 1 && arns[0] == "*"}
}

// ServicePrincipals names AWS services (e.g. ecs-tasks.amazonaws.com).
func ServicePrincipals(services ...string) *Principal {
	return &Principal{Kinds: map[string]Values{KindService: services}}
}

// MarshalJSON writes "*" or an object whose single-principal kinds are
// plain strings (the form AWS echoes back and the programs rendered).
func (p Principal) MarshalJSON() ([]byte, error) {
	if p.All && len(p.Kinds) == 0 {
		return []byte(`"*"`), nil
	}
	out := make(map[string]any, len(p.Kinds))
	for k, v := range p.Kinds {
		if len(v) == 1 {
			out[k] = v[0]
		} else {
			out[k] = []string(v)
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads "*" or an object of kinds.
func (p *Principal) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s != "*" {
			return fmt.Errorf(`a string Principal must be "*", got %q`, s)
		}
		*p = Principal{All: true}
		return nil
	}
	var kinds map[string]Values
	if err := json.Unmarshal(b, &kinds); err != nil {
		return fmt.Errorf("Principal: %w", err)
	}
	*p = Principal{Kinds: kinds}
	if aws := kinds[KindAWS]; len(aws) == 1 && aws[0] == "*" {
		p.All = true
	}
	return nil
}

// New is a document of statements.
func New(statements ...Statement) Document {
	return Document{Version: Version, Statement: statements}
}

// DefaultKeyPolicy is the key policy KMS gives a key created without one:
// the account's root may do anything with the key, which enables IAM
// policies to grant its use ("Default key policy", AWS KMS Developer
// Guide). It is written as GetKeyPolicy returns it, one string per element
// (the key order is JSON's, which AWS does not fix).
func DefaultKeyPolicy(partition, account string) Document {
	d := New(Statement{Sid: "Enable IAM User Permissions", Effect: Allow,
		Principal: AWSPrincipals(fmt.Sprintf("arn:%s:iam::%s:root", partition, account)),
		Action:    Values{"kms:*"}, Resource: Values{"*"},
		Scalar: []string{"Action", "Resource", "Principal"}})
	d.ID, d.Layout = "key-default-1", SortedKeys
	return d
}

// JSON encodes the document in its Layout.
func (d Document) JSON() (string, error) {
	var v any = d
	if d.Layout == SortedKeys {
		v = d.sorted()
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// sorted is the document as maps, which encoding/json writes with sorted
// keys, each element a string where the statement's Scalar covers it.
func (d Document) sorted() map[string]any {
	out := map[string]any{"Version": d.Version}
	if d.ID != "" {
		out["Id"] = d.ID
	}
	statements := make([]map[string]any, len(d.Statement))
	for i, s := range d.Statement {
		m := map[string]any{"Effect": s.Effect}
		if s.Sid != "" {
			m["Sid"] = s.Sid
		}
		for name, v := range map[string]Values{"Action": s.Action, "NotAction": s.NotAction, "Resource": s.Resource, "NotResource": s.NotResource} {
			if len(v) > 0 {
				m[name] = s.element(name, v)
			}
		}
		for name, p := range map[string]*Principal{"Principal": s.Principal, "NotPrincipal": s.NotPrincipal} {
			switch {
			case p == nil:
			case p.All && len(p.Kinds) == 0:
				m[name] = "*"
			default:
				kinds := map[string]any{}
				for k, v := range p.Kinds {
					kinds[k] = s.element(name+"."+k, v)
				}
				m[name] = kinds
			}
		}
		if len(s.Condition) > 0 {
			ops := map[string]any{}
			for op, keys := range s.Condition {
				c := map[string]any{}
				for k, v := range keys {
					c[k] = s.element("Condition."+op+"."+k, v)
				}
				ops[op] = c
			}
			m["Condition"] = ops
		}
		statements[i] = m
	}
	out["Statement"] = statements
	return out
}

// element is one element's value: its one string where Scalar covers the
// element (by its path or a path above it), else the list.
func (s Statement) element(path string, v Values) any {
	if len(v) == 1 {
		for _, sc := range s.Scalar {
			if path == sc || strings.HasPrefix(path, sc+".") {
				return v[0]
			}
		}
	}
	return []string(v)
}

// Parse reads a policy document in any of AWS's accepted forms (a single
// statement object or a list). It refuses an effect other than Allow or
// Deny and a statement with neither Action nor NotAction, because
// evaluating such a statement would be a guess.
func Parse(doc string) (Document, error) {
	var raw struct {
		Version   string          `json:"Version"`
		ID        string          `json:"Id"`
		Statement json.RawMessage `json:"Statement"`
	}
	if err := json.Unmarshal([]byte(doc), &raw); err != nil {
		return Document{}, fmt.Errorf("policy is not a JSON object: %w", err)
	}
	d := Document{Version: raw.Version, ID: raw.ID}
	st := bytes.TrimSpace(raw.Statement)
	switch {
	case len(st) == 0 || string(st) == "null":
		return Document{}, fmt.Errorf("policy has no Statement")
	case st[0] == '{':
		var one Statement
		if err := json.Unmarshal(st, &one); err != nil {
			return Document{}, fmt.Errorf("Statement: %w", err)
		}
		d.Statement = []Statement{one}
	default:
		if err := json.Unmarshal(st, &d.Statement); err != nil {
			return Document{}, fmt.Errorf("Statement: %w", err)
		}
	}
	for i, s := range d.Statement {
		if s.Effect != Allow && s.Effect != Deny {
			return Document{}, fmt.Errorf("statement %s: Effect must be Allow or Deny, got %q", s.Label(i), s.Effect)
		}
		if len(s.Action) == 0 && len(s.NotAction) == 0 {
			return Document{}, fmt.Errorf("statement %s: has neither Action nor NotAction", s.Label(i))
		}
	}
	return d, nil
}

// Label names statement i of a document: its Sid, or its position.
func (s Statement) Label(i int) string {
	if s.Sid != "" {
		return s.Sid
	}
	return fmt.Sprintf("#%d", i+1)
}

// Actions are every action a document names, Allow and Deny, sorted and
// unique (NotAction lists included: a misspelt one is as wrong).
func (d Document) Actions() []string {
	seen := map[string]bool{}
	for _, s := range d.Statement {
		for _, a := range append(append(Values{}, s.Action...), s.NotAction...) {
			seen[a] = true
		}
	}
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// AWS returns the statement's AWS principals ("*" for everyone).
func (p *Principal) AWS() []string {
	if p == nil {
		return nil
	}
	if p.All {
		return []string{"*"}
	}
	return p.Kinds[KindAWS]
}

// Values returns the values of key under any operator (keys compare
// case-insensitively, as AWS's condition keys do).
func (c Conditions) Values(key string) []string {
	var out []string
	for _, keys := range c {
		for k, v := range keys {
			if strings.EqualFold(k, key) {
				out = append(out, v...)
			}
		}
	}
	return out
}

func abbreviate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
