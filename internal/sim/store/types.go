package store

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"
)

// Operations a fault or latency rule can target.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
	OpRead   = "read"
	OpInvoke = "invoke"
	OpAny    = "*"
)

// Alarm states, as CloudWatch names them.
const (
	AlarmOK               = "OK"
	AlarmAlarm            = "ALARM"
	AlarmInsufficientData = "INSUFFICIENT_DATA"
)

// Fault makes operations fail on purpose. It persists in the sim dir and
// is consumed atomically across processes: a fault with Times 1 fails
// exactly one matching operation, whichever process runs it.
type Fault struct {
	ID string `json:"id"`
	// Stack is the stack ("cell-a") or cell id ("a"), optionally
	// qualified by the Pulumi project ("shop/cell-a": only that project's
	// stack, see MatchStack); empty matches all.
	Stack string `json:"stack,omitempty"`
	// Op is create, update, delete, read or "*" (default "*").
	Op string `json:"op,omitempty"`
	// Type is a type token or a short form: "aws:rds/cluster:Cluster",
	// "rds/cluster", "rds:Cluster" or "rds.Cluster"; empty matches all.
	Type string `json:"type,omitempty"`
	// Name is a logical name or a glob ("cell-a-*"); empty matches all.
	Name string `json:"name,omitempty"`
	// Times is how many more operations fail; ignored when Always.
	Times  int  `json:"times,omitempty"`
	Always bool `json:"always,omitempty"`
	// Code is the AWS error code reported (default "InjectedFault").
	Code string `json:"code,omitempty"`
	// Message is added to the error.
	Message string `json:"message,omitempty"`
	// LoseAnswer carries a create out and then fails it: the resource
	// exists in the cloud but the caller is told the call failed, as when
	// AWS completes a request whose answer never arrives (a timeout, or a
	// provider that dies mid-call). Only creates honour it.
	LoseAnswer bool      `json:"loseAnswer,omitempty"`
	Hits       int       `json:"hits"`
	Created    time.Time `json:"created"`
}

// Duration is a time.Duration that reads and writes as "200ms" in JSON.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return err
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

func (d Duration) String() string { return time.Duration(d).String() }

// Latency delays operations, to rehearse realistic timings. The most
// specific matching rule applies (stack, then type, then op count as
// specificity).
type Latency struct {
	Stack    string   `json:"stack,omitempty"`
	Op       string   `json:"op,omitempty"`   // create, update, delete, read, invoke or "" for all
	Type     string   `json:"type,omitempty"` // as in Fault
	Duration Duration `json:"duration"`
}

// Alarm is a CloudWatch metric alarm and its simulated state.
type Alarm struct {
	Project   string    `json:"project,omitempty"`
	Stack     string    `json:"stack"`
	Name      string    `json:"name"`      // logical name
	AlarmName string    `json:"alarmName"` // CloudWatch alarm name
	ARN       string    `json:"arn"`
	Region    string    `json:"region"`
	State     string    `json:"state"`
	Reason    string    `json:"reason,omitempty"`
	Updated   time.Time `json:"updated"`
}

// Quota is one service quota and its value in a region.
type Quota struct {
	Code    string  `json:"code"`
	Name    string  `json:"name"`
	Scope   string  `json:"scope"`
	Region  string  `json:"region"`
	Default float64 `json:"default"`
	Value   float64 `json:"value"`
}

// Usage is how much of one quota one scope (a region, a zone, a VPC…) uses.
type Usage struct {
	Code  string  `json:"code"`
	Name  string  `json:"name"`
	Scope string  `json:"scope"`
	Key   string  `json:"key"` // "us-east-1", "us-east-1a", a VPC id…
	Used  float64 `json:"used"`
	Limit float64 `json:"limit"`
}

// Resource is a live resource as people see it: secrets shown as
// "[secret]", code archives by file name.
type Resource struct {
	// Project is the Pulumi project of the stack that created it (empty
	// for a resource a cellctl before project-qualified stacks recorded
	// without a URN); two fleets in one account are told apart by it.
	Project    string         `json:"project,omitempty"`
	Stack      string         `json:"stack"`
	URN        string         `json:"urn,omitempty"`
	Type       string         `json:"type"`
	Name       string         `json:"name"`
	ID         string         `json:"id"`
	Region     string         `json:"region"`
	Inputs     map[string]any `json:"inputs"`
	Outputs    map[string]any `json:"outputs"`
	Edited     []string       `json:"edited,omitempty"`
	AlarmState string         `json:"alarmState,omitempty"`
	// Abandoned: deleted from Pulumi's state with skipDestroy, still in
	// the cloud (a Lambda@Edge function until its replicas are gone).
	Abandoned bool      `json:"abandoned,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
}

// Filter selects resources; empty fields match everything.
type Filter struct {
	Stack  string `json:"stack,omitempty"` // stack or cell id, optionally "project/stack" (see MatchStack)
	Type   string `json:"type,omitempty"`  // token or short form
	Region string `json:"region,omitempty"`
	Name   string `json:"name,omitempty"` // logical name or glob
}

// StackKey is the project-qualified stack a resource belongs to
// ("shop/cell-a"): the simulated account may hold several fleets (two
// checkouts or two projects naming one sim dir, CELLCTL_SIM_DIR), and
// every fleet has a cell-a. A stack recorded without its project (a
// resource a cellctl before project-qualified stacks created without a
// URN) keeps the bare stack name.
func StackKey(project, stack string) string {
	if project == "" {
		return stack
	}
	return project + "/" + stack
}

// SplitKey is StackKey's inverse.
func SplitKey(key string) (project, stack string) {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

// QualifiedStack is a stack pattern that names only project's stack (or
// cell id): what `cellctl sim …` hands the cloud for a fleet's --cell, so
// a fault, edit or alarm in one fleet never reaches another fleet's cell
// of the same name in a shared simulated account.
func QualifiedStack(project, pattern string) string {
	if pattern == "" || project == "" || strings.Contains(pattern, "/") {
		return pattern
	}
	return project + "/" + pattern
}

// MatchStack reports whether a stack pattern names the stack of key (see
// StackKey). The pattern is a stack name or a cell id ("cell-a", "a"),
// which matches that stack of every project, or "project/stack", which
// matches only that project's. A key recorded without a project matches
// on its stack alone (its project is unknown, so it may be the one).
func MatchStack(pattern, key string) bool {
	if pattern == "" {
		return true
	}
	kp, ks := SplitKey(key)
	pp, ps := SplitKey(pattern)
	if strings.Contains(pattern, "/") && kp != "" && pp != kp {
		return false
	}
	return ps == ks || "cell-"+ps == ks
}

// matchType reports whether a type pattern names the token.
// "aws:rds/cluster:Cluster" matches exactly; "rds/cluster", "rds:Cluster",
// "rds.Cluster" and "Cluster" match case-insensitively.
func matchType(pattern, token string) bool {
	if pattern == "" || pattern == token {
		return true
	}
	p := strings.ToLower(pattern)
	t := strings.ToLower(token)
	parts := strings.SplitN(strings.TrimPrefix(t, "aws:"), ":", 2) // ["rds/cluster", "cluster"]
	if len(parts) != 2 {
		return p == t
	}
	mod := strings.SplitN(parts[0], "/", 2)[0]
	candidates := []string{parts[0], strings.TrimPrefix(t, "aws:"), mod + ":" + parts[1], mod + "." + parts[1]}
	for _, c := range candidates {
		if p == c {
			return true
		}
	}
	return false
}

func matchName(pattern, name string) bool {
	if pattern == "" || pattern == name {
		return true
	}
	ok, _ := path.Match(pattern, name)
	return ok
}

func matchOp(pattern, op string) bool {
	return pattern == "" || pattern == OpAny || pattern == op
}

func (f Fault) Matches(key, op, typ, name string) bool {
	return MatchStack(f.Stack, key) && matchOp(f.Op, op) && matchType(f.Type, typ) && matchName(f.Name, name)
}

func (f Fault) describe() string {
	var what []string
	if f.Op != "" && f.Op != OpAny {
		what = append(what, f.Op)
	}
	if f.Type != "" {
		what = append(what, f.Type)
	}
	if f.Name != "" {
		what = append(what, fmt.Sprintf("%q", f.Name))
	}
	if f.Stack != "" {
		what = append(what, "in "+f.Stack)
	}
	return strings.Join(what, " ")
}

// InjectedFaultError is the error an injected fault produces.
type InjectedFaultError struct {
	Fault    Fault  `json:"fault"`
	Op       string `json:"op"`
	Stack    string `json:"stack"`
	Type     string `json:"type"`
	Resource string `json:"resource"`
	// Detail is the AWS-style error text.
	Detail string `json:"detail"`
}

func (e *InjectedFaultError) Error() string { return e.Detail }
