package quota

import (
	"context"
	"errors"
	"fmt"
	"sort"

	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
)

// zoneUse is one record the fleet is about to write in a hosted zone, and
// the config key that chose the zone.
type zoneUse struct {
	// access is the account whose provider writes the record: the zone
	// must be in it (a cell in another account writes through its role).
	access          fleet.Access
	zone, key, file string
	line            int
	record, what    string
}

// hostedZones reads the name of every zone the new stacks write records
// in (Route 53 GetHostedZone) and refuses a record Route 53 would refuse
// there: ChangeResourceRecordSets fails with InvalidChangeBatch "RRSet
// with DNS name … is not permitted in zone …" for a name outside the
// zone's domain (the rule route53.record-in-zone, awsmodel.NameInZone),
// after the VPC, database and load balancer already exist. A cell writes
// <id>.<fleetDomain> and ACM's validation CNAME under it in
// cells:hostedZoneId; the router writes each viewer domain and its
// certificate's validation CNAME in cells:viewerHostedZoneId. ACM's
// validation names are "_<hash>.<name>", inside the zone whenever the
// name is, so checking the name checks both. A zone that cannot be read
// (unknown, no permission, unreachable) is a refusal too: fail closed.
func hostedZones(ctx context.Context, o Options) []string {
	var uses []zoneUse
	for _, id := range o.NewCells {
		c := o.Fleet.Cell(id)
		if c == nil || c.HostedZoneID == "" {
			continue
		}
		key := o.Fleet.ConfigKey("hostedZoneId")
		file, line := c.File, c.Lines[key]
		if _, set := c.Lines[key]; !set {
			file, line = fleet.ProjectFile, o.Fleet.BaselineLines[key]
		}
		uses = append(uses, zoneUse{access: c.DNSAccess().InRegion(AccountRegion), zone: c.HostedZoneID, key: key, file: file, line: line, record: c.DNSName(),
			what: id + "'s name (and its certificate's DNS validation record)"})
	}
	if r := o.Fleet.Router; o.NewRouter && r != nil && r.ViewerHostedZoneID != "" {
		key := o.Fleet.ConfigKey("viewerHostedZoneId")
		for _, d := range r.ViewerDomains {
			uses = append(uses, zoneUse{access: r.Access().InRegion(AccountRegion), zone: r.ViewerHostedZoneID, key: key, file: r.File, line: r.Lines[key], record: d,
				what: "the router's viewer domain (and its certificate's DNS validation record)"})
		}
	}
	if len(uses) == 0 {
		return nil
	}
	// Route 53 is global: one reader per account, one read per zone.
	type reader struct {
		r53 *awsapi.Route53
		err error
	}
	r53s := map[fleet.Access]reader{}
	type answer struct {
		z   awsapi.HostedZone
		err error
	}
	type zoneIn struct {
		access fleet.Access
		zone   string
	}
	read := map[zoneIn]answer{}
	var out []string
	for _, u := range uses {
		at := u.file
		if u.line > 0 {
			at = fmt.Sprintf("%s:%d", u.file, u.line)
		}
		rd, ok := r53s[u.access]
		if !ok {
			rd.r53, rd.err = awsapi.NewRoute53(ctx, o.Target(u.access))
			r53s[u.access] = rd
		}
		a, done := read[zoneIn{u.access, u.zone}]
		if !done {
			if rd.err != nil {
				a.err = rd.err
			} else {
				a.z, a.err = rd.r53.HostedZone(ctx, u.zone)
			}
			read[zoneIn{u.access, u.zone}] = a
		}
		account := "this account"
		if u.access.Account != "" {
			account = "account " + u.access.Account
		}
		var nsz *r53types.NoSuchHostedZone
		switch {
		case errors.As(a.err, &nsz):
			out = append(out, fmt.Sprintf("%s: %s: hosted zone %s does not exist in %s (Route 53 GetHostedZone: NoSuchHostedZone); %s %s cannot be created; set the id of the zone that holds %s (on --cloud sim, name it first: cellctl sim%s zone add %s <domain>)",
				at, u.key, u.zone, account, u.what, u.record, u.record, simAccountFlag(u.access), u.zone))
		case a.err != nil:
			out = append(out, fmt.Sprintf("%s: %s: cannot read hosted zone %s to check that it holds %s: %v; fix the read (route53:GetHostedZone) and rerun",
				at, u.key, u.zone, u.record, a.err))
		case !awsmodel.NameInZone(u.record, a.z.Name):
			out = append(out, fmt.Sprintf("%s: %s: hosted zone %s is %s, which cannot hold %s %s (Route 53 would refuse it: InvalidChangeBatch: %s); set the id of the zone of %s or of a parent domain",
				at, u.key, u.zone, a.z.Name, u.what, u.record, awsmodel.RecordNotPermitted(u.record, a.z.Name), u.record))
		case a.z.Private:
			out = append(out, fmt.Sprintf("%s: %s: hosted zone %s (%s) is private: CloudFront and ACM resolve %s through public DNS; set the id of a public zone",
				at, u.key, u.zone, a.z.Name, u.record))
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

// simAccountFlag is the sim CLI's --account for a zone of another account.
func simAccountFlag(a fleet.Access) string {
	if a.Account == "" {
		return ""
	}
	return " --account " + a.Account
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
