package access

import (
	"fmt"
	"strings"

	"github.com/cellctl/cellctl/internal/offline"
)

// The fleet's Route 53 hosted zones and records in the access model.
//
// A hosted zone is a resource (arn:…:route53:::hostedzone/<id>) the fleet
// shares: no stack owns it, so the isolation claim does not try it as a
// whole. Each record the render declares is its stack's, though: every
// principal of another cell (and every cell principal, for the router's
// records) must not change it — route53:ChangeResourceRecordSets on its
// zone, carrying the record's name in
// route53:ChangeResourceRecordSetsNormalizedRecordNames, as Route 53 does
// (recordTargets). A cell whose records go through a DNS role
// (cells:dnsAssumeRole) has that role as a principal (AddDNSRole).

// NormalizedRecordNamesKey is the condition key Route 53 fills with the
// names a ChangeResourceRecordSets request changes, normalized
// (NormalizeRecordName).
const NormalizedRecordNamesKey = "route53:ChangeResourceRecordSetsNormalizedRecordNames"

// HostedZoneLabel is a hosted zone's label in the access model.
func HostedZoneLabel(zoneID string) string { return "hostedzone/" + zoneID }

// HostedZoneARN is a hosted zone's ARN: Route 53 is global, so it names
// neither a Region nor an account.
func HostedZoneARN(partition, zoneID string) string {
	return fmt.Sprintf("arn:%s:route53:::hostedzone/%s", partition, zoneID)
}

// DNSRoleLabel is a cell's DNS role in the access model.
func DNSRoleLabel(cell string) string { return cell + "/dns-role" }

// record is one Route 53 record the render declares.
type record struct {
	zone  *Resource
	name  string // normalized
	owner string
	label string
}

// addRecord adds a rendered record and its zone (in the stack's account
// until a DNS role says otherwise).
func (m *Model) addRecord(s offline.Stack, label, zoneID, name string) {
	if zoneID == "" || name == "" {
		return
	}
	zone := m.AddResource(&Resource{ARN: HostedZoneARN(s.Partition, zoneID), Account: s.Account, Kind: KindHostedZone,
		Label: HostedZoneLabel(zoneID)})
	m.records = append(m.records, record{zone: zone, name: NormalizeRecordName(name), owner: s.Owner, label: label})
}

// AddDNSRole adds the role a cell writes its records through
// (cells:dnsAssumeRole): the role itself is not in the render, its
// identity policy is the one the cell's stack exports for it
// (cellmodule.DNSRecordPolicy, the dnsRecordPolicy output; "" when the
// render exports none, and then nothing allows the role anything). The
// zones of the cell's records are in the role's account: the role is how
// the cell reaches them. One role named by several cells holds every
// such cell's policy — what it would need to serve them all — and answers
// to each cell's label.
func (m *Model) AddDNSRole(cell, roleARN, doc string) error {
	a, ok := ParseARN(roleARN)
	if !ok || a.Service != "iam" || a.Account == "" {
		return fmt.Errorf("%s: cells:dnsAssumeRole %q is not an IAM role ARN", cell, roleARN)
	}
	p := m.AddPrincipal(&Principal{ARN: roleARN, Account: a.Account, Owner: cell, Label: DNSRoleLabel(cell)})
	m.byLabel[DNSRoleLabel(cell)] = p
	if doc != "" {
		d, err := parsePolicy(doc)
		if err != nil {
			return fmt.Errorf("%s: its dnsRecordPolicy output: %w", cell, err)
		}
		p.Identity = append(p.Identity, Policy{Name: cell + "/dnsRecordPolicy (the DNS role's policy, as the stack exports it)", Doc: d})
	}
	for _, r := range m.records {
		if r.owner == cell {
			r.zone.Account = a.Account
		}
	}
	return nil
}

// recordTargets are the forbidden-path targets of the render's records:
// each record's owner alone may change its name in its zone.
func (m *Model) recordTargets(isCell func(string) bool) []target {
	out := make([]target, 0, len(m.records))
	for _, r := range m.records {
		if r.owner == "" {
			continue
		}
		from := fromAll
		if !isCell(r.owner) {
			from = fromCells // the router's records: tried from the cells' principals
		}
		out = append(out, target{res: r.zone, arn: r.zone.ARN, owner: r.owner, from: from,
			actions: []string{"route53:ChangeResourceRecordSets"},
			ctx:     map[string][]string{NormalizedRecordNamesKey: {r.name}},
			name:    fmt.Sprintf("%%s must not change %s's record %s (%s)", r.owner, r.name, r.label)})
	}
	return out
}

// NormalizeRecordName is a record name as Route 53 puts it in
// route53:ChangeResourceRecordSetsNormalizedRecordNames: lowercase,
// without the trailing dot, and every character other than a–z, 0–9,
// "-", "_" and "." written as a backslash and its three-digit octal code
// ("*" is \052) — "Using IAM policy conditions for fine-grained access
// control", Amazon Route 53 Developer Guide, "Normalizing the condition
// key values". A name already escaped (\052) keeps its escape. So a
// policy's "*" is a wildcard of StringLike only: the wildcard record
// *.example.com reaches a policy as \052.example.com.
func NormalizeRecordName(name string) string {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteByte(c)
		case c == '\\' && i+3 < len(name) && octal(name[i+1:i+4]):
			b.WriteString(name[i : i+4])
			i += 3
		default:
			fmt.Fprintf(&b, "\\%03o", c)
		}
	}
	return b.String()
}

func octal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return len(s) == 3
}
