package isolation

import (
	"fmt"
	"github.com/cellctl/cellctl/internal/policy"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/props"
)

// RuleCrossAccountGrant: a policy of a stack lets a principal of another
// account in, and the grant is not one the fleet declares.
const RuleCrossAccountGrant = "cross-account-grant"

// GrantStack is one rendered stack for the cross-account audit: the
// account it is deployed in and its resources.
type GrantStack struct {
	Name      string
	Account   string
	Resources []*offline.Resource
}

// DeclaredGrant is the one cross-account grant a fleet makes: the fleet
// bucket (in the router's account) lets a cell of another account's task
// role at the cell's own prefix, and its key be used through S3.
type DeclaredGrant struct {
	Cell        string
	TaskRoleArn string
	// Prefix is the cell's prefix ("cells/<id>/").
	Prefix string
}

// policyInputs are the inputs that hold a resource or trust policy.
var policyInputs = []resource.PropertyKey{"policy", "assumeRolePolicy"}

var principalAccount = regexp.MustCompile(`^(?:arn:[a-z-]+:(?:iam|sts)::(\d{12}):.*|(\d{12}))$`)

// CrossAccountGrants checks every resource and trust policy of the
// stacks: an Allow to a principal outside the stack's account must be
// one of the declared grants, exactly (that cell's task role, its own
// prefix, the grant's actions), and an Allow to everyone is always
// reported. Service principals (ecs-tasks.amazonaws.com…) are not
// accounts and are not judged here.
func CrossAccountGrants(stacks []GrantStack, declared []DeclaredGrant) []Violation {
	byRole := map[string]DeclaredGrant{}
	for _, d := range declared {
		byRole[d.TaskRoleArn] = d
	}
	var vs []Violation
	for _, s := range stacks {
		for _, r := range s.Resources {
			for _, key := range policyInputs {
				v, ok := r.Inputs[key]
				if !ok {
					continue
				}
				props.Strings(string(key), v, func(path, doc string) {
					for i, st := range statements(doc) {
						if st.effect() != "Allow" {
							continue
						}
						for _, p := range st.principals() {
							if msg := judgeGrant(s, r, st, p, byRole); msg != "" {
								vs = append(vs, Violation{Cell: s.Name, Resource: r.Name, Type: r.Type,
									Property: fmt.Sprintf("%s.Statement[%d]", path, i), Rule: RuleCrossAccountGrant, Message: msg})
							}
						}
					}
				})
			}
		}
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].String() < vs[j].String() })
	return vs
}

// judgeGrant returns "" when principal p of statement st is in the
// stack's own account, a service, or a declared grant used as declared.
func judgeGrant(s GrantStack, r *offline.Resource, st statement, p string, byRole map[string]DeclaredGrant) string {
	if p == "*" {
		if r.Type == "aws:s3/bucketPolicy:BucketPolicy" {
			return judgeDelegation(s, st)
		}
		return "allows everyone (Principal \"*\"): no declared grant is public"
	}
	m := principalAccount.FindStringSubmatch(p)
	if m == nil {
		return "" // not an account principal (a federated or canonical user is not one the programs create)
	}
	account := m[1] + m[2]
	if account == s.Account {
		return ""
	}
	d, ok := byRole[p]
	if !ok {
		return fmt.Sprintf("grants %s (account %s) access; the fleet declares cross-account grants only to its cells' task roles", p, account)
	}
	switch r.Type {
	case "aws:s3/bucketPolicy:BucketPolicy":
		return judgeBucketGrant(st, d)
	case "aws:s3/accessPoint:AccessPoint":
		name, _ := props.Plain(r.Inputs)["name"].(string)
		return judgeAccessPointGrant(st, d, name)
	case "aws:kms/key:Key":
		if extra := outside(st.actions(), spec.FleetKeyActions); extra != "" {
			return fmt.Sprintf("grants %s's task role %s on the bucket key; a cell may only use the key through S3 (%s)", d.Cell, extra, strings.Join(spec.FleetKeyActions, ", "))
		}
		if !st.hasCondition("kms:ViaService") {
			return fmt.Sprintf("lets %s's task role use the bucket key outside S3: the grant must be conditioned on kms:ViaService", d.Cell)
		}
		return ""
	}
	return fmt.Sprintf("grants %s's task role access to a %s; its declared grant is its prefix of the fleet bucket", d.Cell, r.Type)
}

func judgeBucketGrant(st statement, d DeclaredGrant) string {
	acts := st.actions()
	for _, res := range st.resources() {
		i := strings.Index(res, ":s3:::")
		if i < 0 {
			return fmt.Sprintf("grants %s's task role %s, which is not the fleet bucket", d.Cell, res)
		}
		bucketAndKey := res[i+len(":s3:::"):]
		if j := strings.Index(bucketAndKey, "/"); j >= 0 {
			if why := judgeObjects(acts, d, res, bucketAndKey[j+1:]); why != "" {
				return why
			}
			continue
		}
		if why := judgeListing(st, acts, d, "the whole bucket", ""); why != "" {
			return why
		}
	}
	return ""
}

// judgeObjects: a grant on res, the objects under key, holds the cell's
// object actions under its own prefix only.
func judgeObjects(acts []string, d DeclaredGrant, res, key string) string {
	if !strings.HasPrefix(key, d.Prefix) {
		return fmt.Sprintf("grants %s's task role %s, outside its own prefix %s", d.Cell, res, d.Prefix)
	}
	if extra := outside(acts, spec.PrefixObjectActions); extra != "" {
		return fmt.Sprintf("grants %s's task role %s on %s; its declared grant is %s", d.Cell, extra, res, strings.Join(spec.PrefixObjectActions, ", "))
	}
	return ""
}

// judgeListing: a grant on the bucket (on, reached via) lists the
// cell's own prefix only, by an s3:prefix condition.
func judgeListing(st statement, acts []string, d DeclaredGrant, on, via string) string {
	if extra := outside(acts, spec.PrefixListActions); extra != "" {
		return fmt.Sprintf("grants %s's task role %s on %s; its declared grant lists its own prefix only", d.Cell, extra, on)
	}
	prefixes := st.conditionValues("s3:prefix")
	if len(prefixes) == 0 {
		return fmt.Sprintf("lets %s's task role list the whole bucket%s: the grant must be conditioned on s3:prefix %s", d.Cell, via, d.Prefix)
	}
	for _, p := range prefixes {
		if !strings.HasPrefix(p, d.Prefix) {
			return fmt.Sprintf("lets %s's task role list %q, outside its own prefix %s", d.Cell, p, d.Prefix)
		}
	}
	return ""
}

// judgeDelegation accepts the one Allow to everyone a fleet bucket
// policy may hold: its delegation to the access points of the bucket's
// own account (router/component), which holds only for requests made
// through such an access point (s3:DataAccessPointAccount equal to the
// stack's account) and hands over no more than a cell's actions on its
// prefix; each access point's policy is then judged as a grant.
func judgeDelegation(s GrantStack, st statement) string {
	if !slices.Equal(st.Condition["StringEquals"]["s3:DataAccessPointAccount"], []string{s.Account}) {
		return fmt.Sprintf("allows everyone (Principal \"*\"): only a delegation to the access points of the bucket's own account (s3:DataAccessPointAccount %s) may", s.Account)
	}
	if extra := outside(st.actions(), append(append([]string{}, spec.PrefixObjectActions...), spec.PrefixListActions...)); extra != "" {
		return fmt.Sprintf("delegates %s to the account's access points; a cell's grant is %s", extra,
			strings.Join(append(append([]string{}, spec.PrefixObjectActions...), spec.PrefixListActions...), ", "))
	}
	return ""
}

// judgeAccessPointGrant: a cell's task role on an access point named for
// the cell (spec.AccessPointName: "<cell id>-<hash>"), its objects under
// its own prefix and its listing conditioned on that prefix, through that
// access point only.
func judgeAccessPointGrant(st statement, d DeclaredGrant, name string) string {
	if !strings.HasPrefix(name, d.Cell+"-") {
		return fmt.Sprintf("grants %s's task role access point %s, which is not its own", d.Cell, name)
	}
	acts := st.actions()
	for _, res := range st.resources() {
		i := strings.Index(res, ":accesspoint/")
		if i < 0 {
			return fmt.Sprintf("grants %s's task role %s, which is not its access point", d.Cell, res)
		}
		ap, key, isObject := strings.Cut(res[i+len(":accesspoint/"):], "/object/")
		if ap != name {
			return fmt.Sprintf("grants %s's task role %s, through another access point than %s", d.Cell, res, name)
		}
		if isObject {
			if why := judgeObjects(acts, d, res, key); why != "" {
				return why
			}
			continue
		}
		if why := judgeListing(st, acts, d, "its access point", " through its access point"); why != "" {
			return why
		}
	}
	return ""
}

// outside returns the first action not in allowed ("" when all are).
func outside(actions, allowed []string) string {
	for _, a := range actions {
		if !slices.ContainsFunc(allowed, func(b string) bool { return strings.EqualFold(a, b) }) {
			return a
		}
	}
	return ""
}

// statement is one policy statement, as the audit reads it: the typed
// statement of internal/policy, the one reader the access evaluator and
// the AWS model share.
type statement struct{ policy.Statement }

func (s statement) actions() []string   { return s.Action }
func (s statement) resources() []string { return s.Resource }

// principals are the statement's AWS principals ("*" for everyone).
func (s statement) principals() []string { return s.Principal.AWS() }

func (s statement) hasCondition(key string) bool { return len(s.conditionValues(key)) > 0 }

// conditionValues are the values of key under any operator.
func (s statement) conditionValues(key string) []string { return s.Condition.Values(key) }

// Effect is the statement's effect.
func (s statement) effect() string { return s.Effect }

// statements reads a policy document; one that does not parse has none
// here (the access model, internal/access, refuses it with its error).
func statements(doc string) []statement {
	d, err := policy.Parse(doc)
	if err != nil {
		return nil
	}
	out := make([]statement, len(d.Statement))
	for i, st := range d.Statement {
		out[i] = statement{st}
	}
	return out
}
