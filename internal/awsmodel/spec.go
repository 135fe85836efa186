package awsmodel

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// typeSpec is everything the model knows about one resource type. Adding a
// type is one entry in specs (see the per-service files) plus, for exact
// output names, one line in sdkTypes.
type typeSpec struct {
	token string
	api   apiInfo
	// required inputs, as the SDK's New<Resource> constructor checks them.
	required []string
	// name is the property pulumi-aws autonames, if any.
	name *autoName
	// defaults are pulumi-aws's own input defaults, added at Check.
	defaults map[string]any
	// outDefaults are the values AWS reports for inputs left unset.
	outDefaults map[string]any
	// replace lists the inputs whose change forces a replacement.
	replace []string
	// replaceAllExcept makes every input but these force a replacement.
	replaceAllExcept []string
	// deleteBeforeReplace is set where pulumi-aws always replaces by
	// deleting first.
	deleteBeforeReplace bool
	// recompute lists computed outputs that change on every update; all
	// other computed outputs keep their first value.
	recompute []string
	// refs are the inputs that name other resources.
	refs []Reference
	// unique are the names AWS requires to be unique.
	unique []uniqueRule
	// compute fills the id and the computed outputs.
	compute func(c *calc) error
	// validate adds per-property failures for inputs the provider rejects.
	validate func(v *validator)
	// deleteCheck rejects deletes AWS refuses (deletion protection…).
	deleteCheck func(outputs resource.PropertyMap) error
}

type apiInfo struct {
	service string // SDK service id, e.g. "EC2"
	noun    string // what the provider calls it, e.g. "EC2 VPC"
	ops     [4]string
}

// autoName describes pulumi-aws's autonaming of one property.
type autoName struct {
	prop    string
	maxLen  int
	lower   bool
	fifo    bool // append ".fifo" when fifoQueue is true
	unique  bool // a fixed name forces delete-before-replace
	randLen int
}

var specs = map[string]*typeSpec{}

func register(s *typeSpec) {
	if _, dup := specs[s.token]; dup {
		panic("awsmodel: duplicate spec " + s.token)
	}
	specs[s.token] = s
}

// Known reports whether the model has specific knowledge of typ. Unknown
// types still work (inputs echoed as outputs, a generic id).
func Known(typ string) bool { _, ok := specs[typ]; return ok }

// Types lists the resource type tokens the model knows.
func Types() []string {
	out := make([]string, 0, len(specs))
	for t := range specs {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ProviderType is the token of the aws provider resource.
const ProviderType = "pulumi:providers:aws"

// Cloud lets the model look at other live resources while computing
// outputs (a NAT gateway's private IP lies in its subnet, an RDS instance
// inherits its cluster's engine version). The mocks and the simulator each
// implement it over their own store; nil means "nothing else is known".
type Cloud interface {
	// Lookup finds a live resource by id, ARN or (for name-addressed
	// resources such as IAM roles or S3 buckets) name.
	Lookup(ref string) (typ string, outputs resource.PropertyMap, ok bool)
	// Next increments and returns a per-account counter (an ECS task
	// definition family's revision, a Lambda function's version…).
	Next(counter string) int
}

// Lister is a Cloud that also lists its live resources of one type: the
// rules that compare a resource with its siblings (a subnet must not
// overlap another subnet of its VPC) need them. The mocks, the audit and
// the simulator implement it; a Cloud that does not is never judged by
// those rules.
type Lister interface {
	List(typ string) []Listed
}

// Listed is one live resource a Lister returns.
type Listed struct {
	ID      string
	Outputs resource.PropertyMap
}

// calc is the context one compute function works in.
type calc struct {
	spec   *typeSpec
	env    Env
	typ    string
	name   string
	in     resource.PropertyMap
	out    resource.PropertyMap
	old    resource.PropertyMap
	r      Rand
	cloud  Cloud
	now    time.Time
	id     string
	update bool
}

func (c *calc) s(k string) string { return str(c.in, k) }

// set writes a computed output.
func (c *calc) set(k string, v any) { c.out[resource.PropertyKey(k)] = pv(v) }

// def writes an output only when the inputs did not set it.
func (c *calc) def(k string, v any) {
	if cur, ok := c.out[resource.PropertyKey(k)]; ok && !cur.IsNull() {
		return
	}
	c.set(k, v)
}

// outStr reads the current output value (input or computed).
func (c *calc) outStr(k string) string { return str(c.out, k) }

func (c *calc) lookup(ref string) (string, resource.PropertyMap, bool) {
	if c.cloud == nil || ref == "" {
		return "", nil, false
	}
	return c.cloud.Lookup(ref)
}

// next draws from a per-account counter on create; on update it returns 0
// (values drawn at create are kept, see Outputs).
func (c *calc) next(counter string) int {
	if c.update {
		return 0
	}
	if c.cloud == nil {
		return 1
	}
	return c.cloud.Next(counter)
}

// apiErr is an error as the provider reports an AWS API failure.
func (c *calc) apiErr(op int, code, format string, args ...any) error {
	return c.spec.apiError(op, c.name, code, fmt.Sprintf(format, args...))
}

// Operation indexes apiInfo.ops.
const (
	OpCreate = iota
	OpUpdate
	OpDelete
	OpRead
)

// OpName names an operation index for messages.
func OpName(op int) string {
	return [...]string{"create", "update", "delete", "read"}[op]
}

// APIError is an AWS API failure, formatted the way pulumi-aws (terraform
// provider over aws-sdk-go-v2) reports it.
type APIError struct {
	Action    string `json:"action"` // "creating", "updating"…
	Noun      string `json:"noun"`   // "EC2 VPC"
	Resource  string `json:"resource,omitempty"`
	Service   string `json:"service"`
	Operation string `json:"operation"`
	Status    int    `json:"status"`
	RequestID string `json:"requestId"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

func (e *APIError) Error() string {
	what := e.Noun
	if e.Resource != "" {
		what += " (" + e.Resource + ")"
	}
	return fmt.Sprintf("%s %s: operation error %s: %s, https response error StatusCode: %d, RequestID: %s, api error %s: %s",
		e.Action, what, e.Service, e.Operation, e.Status, e.RequestID, e.Code, e.Message)
}

var actions = [4]string{"creating", "updating", "deleting", "reading"}

func (s *typeSpec) apiError(op int, res, code, msg string) *APIError {
	status := 400
	switch {
	case strings.HasSuffix(code, "NotFound") || strings.HasPrefix(code, "NoSuch") || strings.HasSuffix(code, "NotFoundFault") || strings.HasSuffix(code, "NotFoundException"):
		status = 404
	case strings.Contains(code, "AlreadyExists") || strings.Contains(code, "Conflict") || code == "EntityAlreadyExists" || code == "BucketAlreadyOwnedByYou":
		status = 409
	}
	r := newRand([]byte(fmt.Sprintf("%s%s%s%d", res, code, msg, time.Now().UnixNano())))
	return &APIError{
		Action: actions[op], Noun: s.api.noun, Resource: res, Service: s.api.service,
		Operation: s.api.ops[op], Status: status, RequestID: r.UUID("request"), Code: code, Message: msg,
	}
}

// NewAPIError builds the error AWS would return for an operation on a
// resource of typ; the simulator uses it for its cross-resource failures.
func NewAPIError(typ string, op int, resourceName, code, message string) *APIError {
	s := specs[typ]
	if s == nil {
		s = &typeSpec{api: apiInfo{service: serviceOf(typ), noun: typ, ops: [4]string{"Create", "Update", "Delete", "Describe"}}}
	}
	return s.apiError(op, resourceName, code, message)
}

func serviceOf(typ string) string {
	// aws:ec2/vpc:Vpc → EC2
	parts := strings.SplitN(typ, ":", 3)
	if len(parts) < 2 {
		return typ
	}
	return strings.ToUpper(strings.SplitN(parts[1], "/", 2)[0])
}

func ops(create, update, del, read string) [4]string { return [4]string{create, update, del, read} }

// tfUniqueID mimics terraform's id.UniqueId: a UTC timestamp with four
// decimals and an 8-digit counter.
func tfUniqueID(r Rand, now time.Time, label string) string {
	ts := strings.Replace(now.UTC().Format("20060102150405.0000"), ".", "", 1)
	return ts + fmt.Sprintf("%08x", r.Intn(label, 1<<31)+1)
}
