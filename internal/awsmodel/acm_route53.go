package awsmodel

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

const (
	tCertificate = "aws:acm/certificate:Certificate"
	tCertValid   = "aws:acm/certificateValidation:CertificateValidation"
	tRecord      = "aws:route53/record:Record"
)

// RecordLookupKey is how a Route 53 record is found by name and type
// through Cloud.Lookup ("route53:<fqdn>:<TYPE>"): a certificate validation
// waits for its CNAME by name, not by the record's id.
func RecordLookupKey(fqdn, typ string) string {
	return "route53:" + strings.ToLower(strings.TrimSuffix(fqdn, ".")) + ":" + strings.ToUpper(typ)
}

// certificateDomains lists the names a certificate covers: its domain name
// first, then the subject alternative names, without duplicates.
func certificateDomains(in resource.PropertyMap) []string {
	var out []string
	for _, d := range append([]string{str(in, "domainName")}, strings_(in, "subjectAlternativeNames")...) {
		d = strings.ToLower(strings.TrimSuffix(d, "."))
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// ValidationRecordName is the CNAME ACM asks for to validate domain in an
// account. A wildcard and its base domain share one record, as in ACM.
func ValidationRecordName(env Env, domain string) (name, value string) {
	env = env.normalized()
	base := strings.TrimPrefix(strings.ToLower(strings.TrimSuffix(domain, ".")), "*.")
	r := newRand([]byte("acm-validation:" + env.Account + ":" + base))
	return "_" + r.Hex("name", 32) + "." + base + ".", "_" + r.Hex("value", 32) + "." + r.Chars("zone", 10, lowerAlnum) + ".acm-validations.aws."
}

// CertificateCovers reports whether a certificate for names covers host
// (a wildcard covers exactly one more label).
func CertificateCovers(names []string, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, n := range names {
		n = strings.ToLower(n)
		if n == host {
			return true
		}
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			if i := strings.IndexByte(host, '.'); i > 0 && host[i+1:] == rest && !strings.HasPrefix(host, "*.") {
				return true
			}
		}
	}
	return false
}

func init() {
	register(&typeSpec{
		token:   tCertificate,
		api:     apiInfo{"ACM", "ACM Certificate", ops("RequestCertificate", "UpdateCertificateOptions", "DeleteCertificate", "DescribeCertificate")},
		replace: []string{"domainName", "subjectAlternativeNames", "validationMethod", "keyAlgorithm", "certificateAuthorityArn", "privateKey", "certificateBody", "certificateChain"},
		outDefaults: map[string]any{
			"keyAlgorithm": "RSA_2048", "type": "AMAZON_ISSUED", "renewalEligibility": "INELIGIBLE", "pendingRenewal": false,
			"validationEmails": []string{}, "renewalSummaries": []string{}, "notBefore": "", "notAfter": "",
			"certificateAuthorityArn": "", "earlyRenewalDuration": "", "subjectAlternativeNames": []string{},
			"options": map[string]any{"certificateTransparencyLoggingPreference": "ENABLED"},
		},
		compute: func(c *calc) error {
			if c.s("domainName") == "" && c.s("certificateBody") == "" {
				return c.apiErr(OpCreate, "ValidationException", "1 validation error detected: Value null at 'domainName' failed to satisfy constraint: Member must not be null")
			}
			c.id = c.env.regional("acm", "certificate/"+c.r.UUID("certificate"))
			c.set("arn", c.id)
			if strings.EqualFold(c.s("validationMethod"), "DNS") {
				var opts []resource.PropertyMap
				for _, d := range certificateDomains(c.in) {
					name, value := ValidationRecordName(c.env, d)
					opts = append(opts, resource.PropertyMap{
						"domainName":          pv(d),
						"resourceRecordName":  pv(name),
						"resourceRecordType":  pv("CNAME"),
						"resourceRecordValue": pv(value),
					})
				}
				c.set("domainValidationOptions", opts)
			} else {
				c.set("domainValidationOptions", []resource.PropertyMap{})
			}
			c.set("status", "PENDING_VALIDATION")
			return nil
		},
		validate: func(v *validator) {
			v.enum("validationMethod", "DNS", "EMAIL", "NONE")
			v.enum("keyAlgorithm", "RSA_1024", "RSA_2048", "RSA_3072", "RSA_4096", "EC_prime256v1", "EC_secp384r1", "EC_secp521r1")
		},
	})

	register(&typeSpec{
		token:            tCertValid,
		api:              apiInfo{"ACM", "ACM Certificate Validation", ops("DescribeCertificate", "DescribeCertificate", "DescribeCertificate", "DescribeCertificate")},
		required:         []string{"certificateArn"},
		replaceAllExcept: []string{},
		refs: []Reference{{Property: "certificateArn", Target: tCertificate, Code: "ResourceNotFoundException",
			Message: "Could not find certificate %s."}},
		compute: func(c *calc) error {
			arn := c.s("certificateArn")
			// The provider's id is the certificate's IssuedAt, which differs
			// per certificate.
			issued := c.now.Add(time.Duration(c.r.Intn("issued-at", 1<<30)) * time.Microsecond)
			c.id = issued.UTC().Format("2006-01-02 15:04:05.999999999 -0700 MST")
			_, cert, ok := c.lookup(arn)
			if !ok {
				return nil // the mocks know only what they created; the simulator checks the reference first
			}
			given := strings_(c.in, "validationRecordFqdns")
			for _, o := range objects(cert, "domainValidationOptions") {
				want := strings.TrimSuffix(str(o, "resourceRecordName"), ".")
				if len(given) > 0 && !slices.ContainsFunc(given, func(g string) bool { return strings.EqualFold(strings.TrimSuffix(g, "."), want) }) {
					return fmt.Errorf("validating ACM Certificate (%s): missing %s DNS validation record: %s", arn, str(o, "domainName"), want)
				}
				if _, _, found := c.lookup(RecordLookupKey(want, "CNAME")); !found && c.cloud != nil {
					return fmt.Errorf("waiting for ACM Certificate (%s) to be issued: timeout while waiting for state to become 'ISSUED' (last state: 'PENDING_VALIDATION', timeout: 1h15m0s): no CNAME %s exists in Route 53", arn, want)
				}
			}
			return nil
		},
	})

	register(&typeSpec{
		token:    tRecord,
		api:      apiInfo{"Route53", "Route 53 Record", ops("ChangeResourceRecordSets", "ChangeResourceRecordSets", "ChangeResourceRecordSets", "ListResourceRecordSets")},
		required: []string{"name", "type", "zoneId"},
		replace:  []string{"name", "type", "zoneId", "setIdentifier"},
		unique: []uniqueRule{{
			key: func(_ Env, out resourceMap) (string, string) {
				return str(out, "zoneId") + "|" + str(out, "type") + "|" + str(out, "setIdentifier"), strings.ToLower(strings.TrimSuffix(str(out, "name"), "."))
			},
			code:    "InvalidChangeBatch",
			message: "[Tried to create resource record set [name='%s.'] but it already exists]",
		}},
		outDefaults: map[string]any{"records": []string{}, "aliases": []string{}, "setIdentifier": "", "healthCheckId": "",
			"allowOverwrite": false, "multivalueAnswerRoutingPolicy": false},
		compute: func(c *calc) error {
			name := strings.ToLower(strings.TrimSuffix(c.s("name"), "."))
			c.set("fqdn", name)
			c.id = c.s("zoneId") + "_" + name + "_" + c.s("type")
			if si := c.s("setIdentifier"); si != "" {
				c.id += "_" + si
			}
			return nil
		},
		validate: func(v *validator) {
			v.enum("type", "A", "AAAA", "CAA", "CNAME", "DS", "HTTPS", "MX", "NAPTR", "NS", "PTR", "SOA", "SPF", "SRV", "SSHFP", "SVCB", "TLSA", "TXT")
		},
	})
}

// HostedZoneLookupKey is the Cloud.Lookup key of a Route 53 hosted zone by
// its id ("Z…" or "/hostedzone/Z…"); a cloud that knows the zone answers
// with outputs {"name": "<domain>"}. The mocks know no zone and judge
// nothing.
func HostedZoneLookupKey(id string) string {
	return "route53-zone:" + strings.TrimPrefix(strings.TrimSpace(id), "/hostedzone/")
}

// NameInZone reports whether a record called name may be created in a
// hosted zone for the domain zone: the zone's own name or a subdomain of
// it (a wildcard "*.x" is a name under x). Case and a trailing dot do not
// matter.
func NameInZone(name, zone string) bool {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	zone = strings.ToLower(strings.TrimSuffix(zone, "."))
	return zone != "" && (name == zone || strings.HasSuffix(name, "."+zone))
}

// RecordNotPermitted is Route 53's message for a record outside its zone.
func RecordNotPermitted(name, zone string) string {
	return fmt.Sprintf("RRSet with DNS name %s. is not permitted in zone %s.", strings.ToLower(strings.TrimSuffix(name, ".")), strings.ToLower(strings.TrimSuffix(zone, ".")))
}

func init() {
	rules = append(rules, Rule{
		ID: "route53.record-in-zone",
		Doc: "Amazon Route 53 API Reference, ChangeResourceRecordSets (InvalidChangeBatch: \"RRSet with DNS name … is not permitted in zone …\"); " +
			"Route 53 Developer Guide, Working with records: a hosted zone holds records only for its domain and its subdomains " +
			"(ACM's DNS validation CNAME _….<domain> included)",
		Code:    "InvalidChangeBatch",
		applies: types(tRecord),
		check: func(r ruleInput) string {
			if !known(r.in, "name") || !known(r.in, "zoneId") {
				return ""
			}
			_, zone, ok := r.lookup(HostedZoneLookupKey(str(r.in, "zoneId")))
			if !ok || str(zone, "name") == "" {
				return ""
			}
			if name := str(r.in, "name"); !NameInZone(name, str(zone, "name")) {
				return RecordNotPermitted(name, str(zone, "name"))
			}
			return ""
		},
	})
}
