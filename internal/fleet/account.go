package fleet

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/awssts"
	"github.com/cellctl/cellctl/internal/diag"
	"gopkg.in/yaml.v3"
)

// Where a stack lives is data: a cell's stack file (or the fleet baseline)
// may name the AWS account it lives in and how to reach it — the
// pulumi-aws provider's own settings (aws:assumeRole, aws:profile), so the
// same file drives `pulumi up` and cellctl's readers — and cells:account
// declares the account a reviewer expects. The loader refuses the
// contradictions it can see offline.

// AccountKey (project namespace) declares the AWS account a stack lives
// in: checked against the role the stack assumes and aws:allowedAccountIds.
const AccountKey = "account"

var accountIDRe = regexp.MustCompile(`^\d{12}$`)

// DNSRoleKey (project namespace) is the role a cell's DNS records are
// written through when the fleet's hosted zone lives in another account
// than the cell: an object of aws:assumeRole's shape, for a second,
// explicit provider that only the cell's records use.
const DNSRoleKey = "dnsAssumeRole"

// AssumeRole is the role a stack's provider and cellctl's readers assume
// to reach its account (pulumi-aws's aws:assumeRole). Zero: none.
type AssumeRole struct {
	// RoleARN is the role (arn:aws:iam::<account>:role/<name>).
	RoleARN string
	// SessionName names the session in CloudTrail ("" = a name cellctl
	// picks for its readers, "cellctl-<stack>").
	SessionName string
	// ExternalID is the id the role's trust policy requires, when it does.
	ExternalID string
	// Duration is the session's length (0 = STS's default, one hour).
	Duration time.Duration
}

// Access is where a stack lives and how cellctl reaches it: what every
// aws-sdk-go-v2 reader of that stack's resources signs with. It is
// comparable, so readers are cached per Access.
type Access struct {
	// Account is the 12-digit account id: the role's, or cells:account;
	// "" means the caller's own account (the default credential chain's).
	Account string
	// Region is the stack's region.
	Region string
	// Profile is a shared-config profile (aws:profile); "" = the chain.
	Profile string
	// Role is assumed on top of the profile or chain when set.
	Role AssumeRole
}

// SameAccount reports whether a and b read the same account's resources
// with the same credentials (the region aside).
func (a Access) SameAccount(b Access) bool {
	return a.Account == b.Account && a.Profile == b.Profile && a.Role == b.Role
}

// InRegion is a copy of a in another region (a router reading its edge
// metrics in us-east-1).
func (a Access) InRegion(region string) Access { a.Region = region; return a }

// AccountLabel is how views name the account: the id, or "default".
func (a Access) AccountLabel() string {
	if a.Account == "" {
		return "default"
	}
	return a.Account
}

// DNSAccess is how the cell's DNS records are written and its zone read:
// through cells:dnsAssumeRole into the zone's account when it is set,
// else with the cell's own access.
func (c *Cell) DNSAccess() Access {
	if c.dnsRole.RoleARN == "" {
		return c.Access()
	}
	r, _ := awssts.ParseRoleARN(c.dnsRole.RoleARN)
	return Access{Account: r.Account, Region: c.Region, Role: c.dnsRole}
}

// DNSRole is cells:dnsAssumeRole (zero: the records use the cell's own
// provider).
func (c *Cell) DNSRole() AssumeRole { return c.dnsRole }

// resolveDNSRole is the stack file's cells:dnsAssumeRole, else the
// baseline's (a malformed one is a load error, and sets none).
func resolveDNSRole(base, own accountSettings) AssumeRole {
	if own.dnsRole.RoleARN != "" {
		return own.dnsRole
	}
	return base.dnsRole
}

// Access is how cellctl reaches the cell's account and region.
func (c *Cell) Access() Access {
	a := c.access
	a.Region = c.Region
	return a
}

// Access is how cellctl reaches the router stack's account in its region.
func (r *Router) Access() Access {
	a := r.access
	a.Region = r.Region
	return a
}

// Accounts lists the distinct accounts of the fleet's cells, in order
// ("" for the caller's own account).
func (f *Fleet) Accounts() []string {
	var out []string
	for _, c := range f.Cells {
		if !slices.Contains(out, c.access.Account) {
			out = append(out, c.access.Account)
		}
	}
	slices.Sort(out)
	return out
}

// accountSettings collects one file's (or the baseline's) account keys
// before they are checked together.
type accountSettings struct {
	access             Access
	dnsRole            AssumeRole
	allowed, forbidden []string
	// lines of each key that was set, for messages.
	lines map[string]int
}

// accountKey reads one of the account keys (aws:assumeRole, aws:profile,
// aws:allowedAccountIds, aws:forbiddenAccountIds, <project>:account) into
// s; it reports whether key is one of them.
func (l *loader) accountKey(s *accountSettings, file, full string, v *yaml.Node) bool {
	if s.lines == nil {
		s.lines = map[string]int{}
	}
	ns, key, _ := strings.Cut(full, ":")
	switch {
	case ns == "aws" && key == "assumeRole":
		if r, ok := l.assumeRole(file, full, v); ok {
			s.access.Role = r
			s.lines[full] = v.Line
		}
	case ns == "aws" && key == "profile":
		if p, ok := l.plainString(file, full, v); ok {
			s.access.Profile = p
			s.lines[full] = v.Line
		}
	case ns == "aws" && (key == "allowedAccountIds" || key == "forbiddenAccountIds"):
		if ids, ok := l.accountList(file, full, v); ok {
			if key == "allowedAccountIds" {
				s.allowed = ids
			} else {
				s.forbidden = ids
			}
			s.lines[full] = v.Line
		}
	case ns != "aws" && key == DNSRoleKey:
		if r, ok := l.assumeRole(file, full, v); ok {
			s.dnsRole = r
			s.lines[full] = v.Line
		}
	case ns != "aws" && key == AccountKey:
		if id, ok := l.plainString(file, full, v); ok {
			if !accountIDRe.MatchString(id) {
				l.errs.Add(file, v.Line, full, "must be a 12-digit AWS account id, got %s", diag.Echo(id))
			} else {
				s.access.Account = id
				s.lines[full] = v.Line
			}
		}
	default:
		return false
	}
	return true
}

// assumeRole reads aws:assumeRole, the object pulumi-aws v6 takes:
// roleArn (required), sessionName, externalId, duration ("1h"), and the
// session policy keys it passes to STS untouched.
func (l *loader) assumeRole(file, field string, v *yaml.Node) (AssumeRole, bool) {
	if v.Kind == yaml.ScalarNode && strings.HasPrefix(strings.TrimSpace(v.Value), "{") {
		// `pulumi config set aws:assumeRole '{"roleArn": …}'` stores the
		// object as a JSON string; read it as the mapping it is.
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(v.Value), &n); err == nil && len(n.Content) == 1 && n.Content[0].Kind == yaml.MappingNode {
			m := n.Content[0]
			setLines(m, v.Line)
			v = m
		}
	}
	if v.Kind != yaml.MappingNode || hasKey(v, "secure") {
		l.errs.Add(file, v.Line, field, "must be an object {roleArn: arn:aws:iam::<account>:role/<name>, sessionName, externalId, duration}, got %s", diag.KindName(v))
		return AssumeRole{}, false
	}
	var r AssumeRole
	ok := true
	for _, p := range diag.Pairs(file, field, v, &l.errs) {
		sub := field + "." + p.Key.Value
		switch p.Key.Value {
		case "roleArn":
			s, good := l.plainString(file, sub, p.Value)
			if !good {
				ok = false
				continue
			}
			if _, err := awssts.ParseRoleARN(s); err != nil {
				l.errs.Add(file, p.Value.Line, sub, "%v", err)
				ok = false
				continue
			}
			r.RoleARN = s
		case "sessionName":
			s, good := l.plainString(file, sub, p.Value)
			if good {
				if err := awssts.CheckRoleSessionName(s); err != nil {
					l.errs.Add(file, p.Value.Line, sub, "%v", err)
					good = false
				}
			}
			ok = ok && good
			r.SessionName = s
		case "externalId":
			// AWS's guidance: an external id is not a secret. A secure value
			// is accepted (the pulumi CLI decrypts it for the provider) but
			// cellctl's readers cannot use it.
			if p.Value.Kind == yaml.MappingNode && hasKey(p.Value, "secure") {
				l.errs.Add(file, p.Value.Line, sub, "cannot be a secret: cellctl's readers pass it to STS too, and AWS documents the external id as not secret; store it in plaintext")
				ok = false
				continue
			}
			s, good := l.plainString(file, sub, p.Value)
			if good {
				if err := awssts.CheckExternalID(s); err != nil {
					l.errs.Add(file, p.Value.Line, sub, "%v", err)
					good = false
				}
			}
			ok = ok && good
			r.ExternalID = s
		case "duration":
			s, good := l.plainString(file, sub, p.Value)
			if !good {
				ok = false
				continue
			}
			d, err := time.ParseDuration(s)
			if err == nil && d%time.Second == 0 {
				err = awssts.CheckRoleSessionSeconds(int(d / time.Second))
			} else if err == nil {
				err = fmt.Errorf("must be whole seconds")
			}
			if err != nil {
				l.errs.Add(file, p.Value.Line, sub, "must be a duration from 15m to 12h such as \"1h\", got %s: %v", diag.Echo(s), err)
				ok = false
				continue
			}
			r.Duration = d
		case "policy", "policyArns", "sourceIdentity", "tags", "transitiveTagKeys":
			// Passed to STS by the provider; cellctl's readers do not narrow
			// their session with them.
		default:
			l.errs.Add(file, p.Key.Line, sub, "unknown key (allowed: roleArn, sessionName, externalId, duration, policy, policyArns, sourceIdentity, tags, transitiveTagKeys)")
			ok = false
		}
	}
	if r.RoleARN == "" && ok {
		l.errs.Add(file, v.Line, field+".roleArn", "missing: the role to assume, arn:aws:iam::<account>:role/<name>")
		ok = false
	}
	return r, ok
}

// accountList reads aws:allowedAccountIds / forbiddenAccountIds: a YAML
// list of 12-digit ids, or the JSON array `pulumi config set` stores.
func (l *loader) accountList(file, field string, v *yaml.Node) ([]string, bool) {
	var ids []string
	switch {
	case v.Kind == yaml.SequenceNode:
		for _, n := range v.Content {
			ids = append(ids, n.Value)
		}
	case v.Kind == yaml.ScalarNode && json.Unmarshal([]byte(v.Value), &ids) == nil:
	default:
		l.errs.Add(file, v.Line, field, "must be a list of 12-digit AWS account ids, got %s", diag.KindName(v))
		return nil, false
	}
	for _, id := range ids {
		if !accountIDRe.MatchString(id) {
			l.errs.Add(file, v.Line, field, "must be a list of 12-digit AWS account ids, got %s", diag.Echo(id))
			return nil, false
		}
	}
	return ids, true
}

// resolveAccess merges a stack file's account settings over the
// baseline's and refuses what contradicts itself: a declared account that
// is not the role's, an account the allowed list leaves out or the
// forbidden list names. It returns the stack's Access (region aside).
func (l *loader) resolveAccess(file string, base, own accountSettings) (Access, bool) {
	eff := base
	eff.lines = map[string]int{}
	from := map[string]string{}
	for k := range base.lines {
		from[k] = ProjectFile
		eff.lines[k] = base.lines[k]
	}
	for k, line := range own.lines {
		from[k] = file
		eff.lines[k] = line
	}
	if _, set := own.lines["aws:assumeRole"]; set {
		eff.access.Role = own.access.Role
	}
	if _, set := own.lines["aws:profile"]; set {
		eff.access.Profile = own.access.Profile
	}
	if own.allowed != nil {
		eff.allowed = own.allowed
	}
	if own.forbidden != nil {
		eff.forbidden = own.forbidden
	}
	declared, declaredKey := "", ""
	for k := range eff.lines {
		if strings.HasSuffix(k, ":"+AccountKey) && !strings.HasPrefix(k, "aws:") {
			declaredKey = k
			declared = own.access.Account
			if _, set := own.lines[k]; !set {
				declared = base.access.Account
			}
		}
	}
	at := func(key string) (string, int) { return from[key], eff.lines[key] }
	account := declared
	ok := true
	if eff.access.Role.RoleARN != "" {
		r, _ := awssts.ParseRoleARN(eff.access.Role.RoleARN)
		if declared != "" && declared != r.Account {
			f, line := at(declaredKey)
			rf, rl := at("aws:assumeRole")
			l.once(f, line, declaredKey, "is %s but the role this stack assumes (%s:%d, aws:assumeRole) is in account %s: fix one of them", declared, rf, rl, r.Account)
			ok = false
		}
		account = r.Account
	}
	if account != "" && eff.allowed != nil && !slices.Contains(eff.allowed, account) {
		f, line := at("aws:allowedAccountIds")
		l.once(f, line, "aws:allowedAccountIds", "does not include %s, the account this stack lives in: the provider would refuse it (allowed: %s)", account, strings.Join(eff.allowed, ", "))
		ok = false
	}
	if account != "" && slices.Contains(eff.forbidden, account) {
		f, line := at("aws:forbiddenAccountIds")
		l.once(f, line, "aws:forbiddenAccountIds", "names %s, the account this stack lives in: the provider would refuse it", account)
		ok = false
	}
	a := eff.access
	a.Account = account
	return a, ok
}

// setLines gives every node of a parsed JSON value the line of the YAML
// scalar that held it.
func setLines(n *yaml.Node, line int) {
	n.Line = line
	for _, c := range n.Content {
		setLines(c, line)
	}
}
