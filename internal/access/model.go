// Package access decides whether a principal of the rendered fleet may
// make a request, the way AWS evaluates it: from the identity policies of
// the caller and the resource, key and trust policies of the target, with
// their conditions. cellctl uses it to prove what a cell-based fleet
// promises: every path a cell needs is allowed, and no path between cells
// is ("Policy evaluation logic" and "Cross-account policy evaluation
// logic", IAM User Guide; "Key policies in AWS KMS", KMS Developer Guide).
//
// It evaluates identity-based, resource-based, key and trust policies.
// Service control policies, permission boundaries and session policies are
// out of its scope: cellctl renders none, and an organisation's SCPs can
// only deny more.
package access

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cellctl/cellctl/internal/policy"
)

// Policy is a document and where it came from.
type Policy struct {
	// Name says where the policy lives: "<stack>/<resource>" and its kind,
	// e.g. "cell-a/task-policy (inline)".
	Name string
	Doc  policy.Document

	// index (a resource policy's) maps a principal to the statements that
	// may name it, so a bucket policy with a grant per cell is not read
	// whole for every request.
	once  sync.Once
	index *principalIndex
}

type principalIndex struct {
	byARN     map[string][]int
	byAccount map[string][]int
	// allowARN, allowAccount and allowRest say whether an Allow statement
	// may name a principal, its account, or anyone.
	allowARN     map[string]bool
	allowAccount map[string]bool
	allowRest    bool
	// rest name everyone, a service or use NotPrincipal: read for every
	// caller.
	rest []int
}

// statementsFor are the indexes of the statements that may apply to
// caller, in document order.
func (p *Policy) statementsFor(caller *Principal) []int {
	ix := p.indexed()
	out := append(append(append([]int{}, ix.rest...), ix.byARN[caller.ARN]...), ix.byAccount[caller.Account]...)
	sort.Ints(out)
	return slicesCompact(out)
}

func (p *Policy) indexed() *principalIndex {
	p.once.Do(func() {
		ix := &principalIndex{byARN: map[string][]int{}, byAccount: map[string][]int{},
			allowARN: map[string]bool{}, allowAccount: map[string]bool{}}
		for i, s := range p.Doc.Statement {
			allow := s.Effect == policy.Allow
			if s.Principal == nil || s.Principal.All || s.NotPrincipal != nil || len(s.Principal.Kinds[policy.KindAWS]) == 0 ||
				len(s.Principal.Kinds) > 1 || slices.Contains(s.Principal.Kinds[policy.KindAWS], "*") {
				ix.rest = append(ix.rest, i)
				// A statement that holds only for requests made through an
				// access point (a bucket's delegation) cannot allow a
				// request made to the bucket itself, which is all the
				// forbidden paths ask the bucket (mayAllow).
				ix.allowRest = ix.allowRest || (allow && !throughAccessPointOnly(s))
				continue
			}
			for _, a := range s.Principal.Kinds[policy.KindAWS] {
				if arn, ok := ParseARN(a); ok && arn.Service == "iam" && arn.Resource == "root" {
					ix.byAccount[arn.Account] = append(ix.byAccount[arn.Account], i)
					ix.allowAccount[arn.Account] = ix.allowAccount[arn.Account] || allow
				} else if ok {
					ix.byARN[a] = append(ix.byARN[a], i)
					ix.allowARN[a] = ix.allowARN[a] || allow
				} else {
					ix.byAccount[a] = append(ix.byAccount[a], i)
					ix.allowAccount[a] = ix.allowAccount[a] || allow
				}
			}
		}
		p.index = ix
	})
	return p.index
}

// throughAccessPointOnly reports whether a statement's conditions require
// a key only a request through an access point carries
// (s3:DataAccessPointAccount or s3:DataAccessPointArn under a non-negated
// String or Arn operator without IfExists).
func throughAccessPointOnly(s policy.Statement) bool {
	for op, keys := range s.Condition {
		if strings.Contains(op, "Not") || strings.HasSuffix(op, "IfExists") || strings.HasPrefix(op, "ForAllValues:") ||
			!(strings.Contains(op, "String") || strings.Contains(op, "Arn")) {
			continue
		}
		for k := range keys {
			if strings.EqualFold(k, "s3:DataAccessPointAccount") || strings.EqualFold(k, "s3:DataAccessPointArn") {
				return true
			}
		}
	}
	return false
}

// mayAllow reports whether an Allow statement of the policy can name
// caller (its conditions, actions and resources aside) in a request made
// to the resource itself (not through an access point).
func (p *Policy) mayAllow(caller *Principal) bool {
	ix := p.indexed()
	return ix.allowRest || ix.allowARN[caller.ARN] || ix.allowAccount[caller.Account]
}

func slicesCompact(s []int) []int {
	if len(s) < 2 {
		return s
	}
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// Principal is a caller: an IAM role, or an AWS service (Service set).
type Principal struct {
	// ARN is the role's ARN, or the service principal's name
	// ("cloudfront.amazonaws.com").
	ARN     string
	Account string
	Service bool
	// Owner is the cell id, "router", or "" for the fleet's operators.
	Owner string
	// Label is the short name paths use ("cell-a/task").
	Label    string
	Identity []Policy

	roleName string
}

// Resource kinds whose own policy must allow before anything else can:
// a KMS key ("the key policy must allow") and a role's trust policy.
const (
	KindKey    = "kms-key"
	KindRole   = "iam-role"
	KindBucket = "s3-bucket"
	KindQueue  = "sqs-queue"
	KindSecret = "secret"
	KindOther  = "other"
	// KindAccessPoint is an S3 access point (accesspoint.go).
	KindAccessPoint = "s3-access-point"
	// KindHostedZone is a Route 53 hosted zone (dns.go).
	KindHostedZone = "route53-hosted-zone"
)

// Resource is a target of requests: an ARN (a bucket's ARN also stands for
// its objects), its account, its policy and the key that encrypts it.
type Resource struct {
	ARN     string
	Account string
	Region  string
	Kind    string
	Owner   string
	Label   string
	Policy  *Policy
	// Key is the KMS key that encrypts the resource's data at rest (a
	// bucket's default encryption, a queue's or secret's key): its ARN,
	// or an AWS managed key's alias ARN.
	Key string
	// BucketKey is set on a bucket whose SSE-KMS uses S3 Bucket Keys: the
	// key's encryption context is then the bucket's ARN.
	BucketKey bool
	// Protected and Retained are the resource's protect and
	// retainOnDelete options (a key that encrypts data must have both).
	Protected, Retained bool
	// Probes are the requests the forbidden paths try against the
	// resource from every other cell.
	Probes []Probe

	name string // a bucket's name, a queue's URL
	// bucket is the bucket an access point serves, serves the owner whose
	// prefix it is the way to (accesspoint.go).
	bucket *Resource
	serves string
	// shared: the fleet declares it shared (DeclareShared).
	shared bool
}

// Probe is one request against a resource: the action, a suffix to the
// resource's ARN (an object key, a log stream) and the context.
type Probe struct {
	Action  string
	Suffix  string
	Context map[string][]string
}

// Prefix is a part of a bucket one owner's data lives under.
type Prefix struct {
	Bucket *Resource
	Owner  string
	Prefix string
}

// Model is the access model of a rendered fleet.
type Model struct {
	principals map[string]*Principal
	byLabel    map[string]*Principal
	resources  map[string]*Resource
	resByLabel map[string]*Resource
	buckets    map[string]*Resource // bucket name -> bucket
	prefixes   []Prefix
	dbClusters []dbCluster
	images     []Image
	redrives   []redrive
	queues     map[*Resource]*queueSettings
	records    []record
	edge       edgeFacts
}

// NewModel is an empty model.
func NewModel() *Model {
	return &Model{principals: map[string]*Principal{}, byLabel: map[string]*Principal{}, resources: map[string]*Resource{},
		resByLabel: map[string]*Resource{}, buckets: map[string]*Resource{}}
}

// AddPrincipal adds (or returns) a principal by ARN.
func (m *Model) AddPrincipal(p *Principal) *Principal {
	if have := m.principals[p.ARN]; have != nil {
		return have
	}
	m.principals[p.ARN] = p
	m.byLabel[p.Label] = p
	return p
}

// Principal returns a principal by ARN or label.
func (m *Model) Principal(ref string) *Principal {
	if p := m.principals[ref]; p != nil {
		return p
	}
	return m.byLabel[ref]
}

// Principals are every principal, by label.
func (m *Model) Principals() []*Principal {
	out := make([]*Principal, 0, len(m.principals))
	for _, p := range m.principals {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out
}

// AddResource adds (or returns) a resource by ARN.
func (m *Model) AddResource(r *Resource) *Resource {
	if have := m.resources[r.ARN]; have != nil {
		return have
	}
	m.resources[r.ARN] = r
	m.resByLabel[r.Label] = r
	if r.Kind == KindBucket {
		if a, ok := ParseARN(r.ARN); ok {
			m.buckets[a.Resource] = r
		}
	}
	return r
}

// Resources are every resource, by label.
func (m *Model) Resources() []*Resource {
	out := make([]*Resource, 0, len(m.resources))
	for _, r := range m.resources {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out
}

// ResourceByLabel returns a resource by its label.
func (m *Model) ResourceByLabel(label string) *Resource {
	return m.resByLabel[label]
}

// resource finds the resource a request's ARN addresses: the resource
// itself, or the bucket of an object ARN.
func (m *Model) resource(arn string) *Resource {
	if r := m.resources[arn]; r != nil {
		return r
	}
	if ap, _, ok := m.accessPointOf(arn); ok {
		return ap
	}
	if a, ok := ParseARN(arn); ok && a.Service == "s3" {
		bucket, _, _ := strings.Cut(a.Resource, "/")
		return m.buckets[bucket]
	}
	return nil
}

// AWSManagedKey stands for a service's AWS managed key (aws/s3, aws/sqs,
// aws/secretsmanager) in an account and region. KMS resolves the alias to
// a key ARN whose id the render cannot know, and key policies and
// identity policies name keys by key ARN, so the model names it
// key/aws-managed-<service>.
func AWSManagedKey(partition, region, account, service string) string {
	return fmt.Sprintf("arn:%s:kms:%s:%s:key/%s%s", partition, region, account, managedKeyPrefix, service)
}

const managedKeyPrefix = "aws-managed-"

// awsManagedService returns the service of an AWS managed key's stand-in
// ARN ("" for any other key).
func awsManagedService(arn string) string {
	a, ok := ParseARN(arn)
	if !ok || a.Service != "kms" || !strings.HasPrefix(a.Resource, "key/"+managedKeyPrefix) {
		return ""
	}
	return strings.TrimPrefix(a.Resource, "key/"+managedKeyPrefix)
}

// AddAWSManagedKey adds an AWS managed key with the policy AWS gives every
// such key: any principal of the account may use it, only through the
// service ("AWS managed keys", KMS Developer Guide; the policy of aws/s3
// as GetKeyPolicy returns it). It is why another account can never read
// objects encrypted under aws/s3.
func (m *Model) AddAWSManagedKey(partition, region, account, service string) *Resource {
	arn := AWSManagedKey(partition, region, account, service)
	doc := policy.New(policy.Statement{
		Sid:       "Allow access through " + service + " for all principals in the account that are authorized to use " + service,
		Effect:    policy.Allow,
		Principal: policy.Everyone(),
		Action:    policy.Values{"kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"},
		Resource:  policy.Values{"*"},
		Condition: policy.Conditions{"StringEquals": {
			"kms:CallerAccount": {account},
			"kms:ViaService":    {service + "." + region + ".amazonaws.com"},
		}},
	})
	return m.AddResource(&Resource{ARN: arn, Account: account, Region: region, Kind: KindKey,
		Label: "aws/" + service + " (" + account + ")", Policy: &Policy{Name: "aws/" + service + " (AWS managed key policy)", Doc: doc}})
}

// DeclareShared records that the resource with the ARN is one the fleet
// shares on purpose (stacks/shared.yaml): the cross-account forbidden
// paths leave it out, and who of another account reaches it is what the
// cell and router families decide (a cell's own prefix of the fleet
// bucket, never another's). It reports whether the model has it (a
// distribution or a zone is no resource of the model).
func (m *Model) DeclareShared(arn string) bool {
	r := m.resources[arn]
	if r != nil {
		r.shared = true
	}
	return r != nil
}

// AddPrefix records that owner's objects live under prefix of the bucket
// labelled bucket ("cells/<id>/").
func (m *Model) AddPrefix(bucket, owner, prefix string) error {
	b := m.ResourceByLabel(bucket)
	if b == nil || b.Kind != KindBucket {
		return fmt.Errorf("no bucket %s in the render", bucket)
	}
	m.prefixes = append(m.prefixes, Prefix{Bucket: b, Owner: owner, Prefix: prefix})
	return nil
}
