package cellmodule

import (
	"fmt"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/acm"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/route53"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	iampolicy "github.com/cellctl/cellctl/internal/policy"
)

// DNSRecordPolicyOutput is the cell stack's output holding its DNS role's
// least privilege (DNSRecordPolicy), when the cell has a DNS role.
const DNSRecordPolicyOutput = "dnsRecordPolicy"

// The cell's name. CloudFront connects to each origin over HTTPS and checks
// the origin's certificate against the origin domain; no certificate can be
// issued for *.elb.amazonaws.com, so every cell gets its own name under the
// fleet domain, an alias record to its ALB, and a certificate for that name.
//
// The certificate is one the cell requests from ACM and validates through
// DNS in the fleet's hosted zone (unless cells:certificateArn names an
// existing one): one certificate per cell covering exactly its name, so no
// key is shared between cells, adding a cell needs no manual step, and ACM
// renews it for as long as the validation record exists.

// certificate requests (or adopts) the listener's certificate.
func (b *builder) certificate() error {
	ctx, s, c := b.ctx, b.spec, b.cell
	if s.CertificateArn != "" {
		c.CertificateArn = pulumi.String(s.CertificateArn).ToStringOutput()
		return nil
	}
	var err error
	name := b.name("cert")
	c.Certificate, err = acm.NewCertificate(ctx, name, &acm.CertificateArgs{
		DomainName:       pulumi.String(c.DNSName),
		ValidationMethod: pulumi.String("DNS"),
		KeyAlgorithm:     pulumi.String("RSA_2048"),
		Tags:             b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	// One domain, so exactly one validation record.
	opt := c.Certificate.DomainValidationOptions.ApplyT(func(opts []acm.CertificateDomainValidationOption) (acm.CertificateDomainValidationOption, error) {
		if len(opts) != 1 {
			return acm.CertificateDomainValidationOption{}, fmt.Errorf("the certificate for %s reports %d DNS validation records, want 1", c.DNSName, len(opts))
		}
		return opts[0], nil
	}).(acm.CertificateDomainValidationOptionOutput)
	record, err := route53.NewRecord(ctx, b.name("cert-validation"), &route53.RecordArgs{
		ZoneId:  pulumi.String(s.HostedZoneID),
		Name:    opt.ResourceRecordName().Elem(),
		Type:    opt.ResourceRecordType().Elem(),
		Records: pulumi.StringArray{opt.ResourceRecordValue().Elem()},
		Ttl:     pulumi.Int(300),
		// A recreated cell asks for the same record (ACM derives it from the
		// account and the name): taking it over is correct.
		AllowOverwrite: pulumi.Bool(true),
	}, b.opts(b.dnsOpts...)...)
	if err != nil {
		return err
	}
	c.CertificateValidation, err = acm.NewCertificateValidation(ctx, b.name("cert-validated"), &acm.CertificateValidationArgs{
		CertificateArn:        c.Certificate.Arn,
		ValidationRecordFqdns: pulumi.StringArray{record.Fqdn},
	}, b.opts()...)
	if err != nil {
		return err
	}
	// The listener takes the ARN from the validation, so it waits until the
	// certificate is issued (an ALB refuses a pending certificate).
	c.CertificateArn = c.CertificateValidation.CertificateArn
	return nil
}

// dnsRecord points <cell id>.<fleetDomain> at the cell's ALB.
func (b *builder) dnsRecord() error {
	c := b.cell
	var err error
	c.DNSRecord, err = route53.NewRecord(b.ctx, b.name("dns"), &route53.RecordArgs{
		ZoneId: pulumi.String(b.spec.HostedZoneID),
		Name:   pulumi.String(c.DNSName),
		Type:   pulumi.String("A"),
		Aliases: route53.RecordAliasArray{route53.RecordAliasArgs{
			Name:                 c.LoadBalancer.DnsName,
			ZoneId:               c.LoadBalancer.ZoneId,
			EvaluateTargetHealth: pulumi.Bool(true),
		}},
	}, b.opts(b.dnsOpts...)...)
	return err
}

// dnsProvider creates the explicit provider of the cell's DNS records when
// the fleet's zone is reached through cells:dnsAssumeRole. It starts from
// the ambient credentials (the caller's, as an explicit provider does not
// take the stack's aws:assumeRole), so the caller assumes the zone
// account's role directly; the cell's own role never needs Route 53
// rights in the fleet's zone.
func (b *builder) dnsProvider() error {
	if b.dnsProviderArgs == nil {
		return nil
	}
	args := *b.dnsProviderArgs
	if args.Region == nil {
		args.Region = pulumi.String(b.spec.Region)
	}
	p, err := aws.NewProvider(b.ctx, b.name("dns-provider"), &args, pulumi.Parent(b.cell))
	if err != nil {
		return err
	}
	b.dnsOpts = []pulumi.ResourceOption{pulumi.Provider(p)}
	return nil
}

// DNSRecordPolicy is the least privilege of a cell's DNS role in the
// fleet's zone: change only the cell's own name and its certificate's
// validation record ("_<token>.<name>"), read the zone and the changes.
// Route 53 checks record names with the condition key
// route53:ChangeResourceRecordSetsNormalizedRecordNames (lowercase, no
// trailing dot; "Using IAM policy conditions for fine-grained access
// control", Amazon Route 53 Developer Guide). The access model reads the
// exported document back (access.AddDNSRole) and proves it.
func DNSRecordPolicy(partition, zoneID, name string) (string, error) {
	return DNSRecordDocument(partition, zoneID, name).JSON()
}

// DNSRecordDocument is DNSRecordPolicy as a typed document. Its layout is
// the one the output was first exported in (sorted keys, single values as
// strings), so a deployed stack's output does not change.
func DNSRecordDocument(partition, zoneID, name string) iampolicy.Document {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	zone := fmt.Sprintf("arn:%s:route53:::hostedzone/%s", partition, zoneID)
	d := iampolicy.New(
		iampolicy.Statement{Sid: "CellRecordsOnly", Effect: iampolicy.Allow,
			Action: iampolicy.Values{"route53:ChangeResourceRecordSets"}, Resource: iampolicy.Values{zone},
			Condition: iampolicy.Conditions{"ForAllValues:StringLike": {
				"route53:ChangeResourceRecordSetsNormalizedRecordNames": {name, "_*." + name},
			}},
			Scalar: []string{"Action", "Resource"}},
		iampolicy.Statement{Sid: "ReadTheZone", Effect: iampolicy.Allow,
			Action: iampolicy.Values{"route53:GetHostedZone", "route53:ListResourceRecordSets"}, Resource: iampolicy.Values{zone},
			Scalar: []string{"Resource"}},
		iampolicy.Statement{Sid: "ReadChanges", Effect: iampolicy.Allow,
			Action: iampolicy.Values{"route53:GetChange"}, Resource: iampolicy.Values{fmt.Sprintf("arn:%s:route53:::change/*", partition)},
			Scalar: []string{"Action", "Resource"}},
	)
	d.Layout = iampolicy.SortedKeys
	return d
}

// DatabaseBootstrapStatements are the statements that give the cell's
// database users what they need, run as the master user (whose password
// AWS keeps in Secrets Manager) before the app first connects and again
// whenever the cell's migration mode changes. Each is one statement (the
// RDS Data API runs one per ExecuteStatement call) and safe to run again:
// roles are created only when absent, GRANT and REVOKE of what is already
// (not) granted only draw a notice, ALTER DEFAULT PRIVILEGES is
// idempotent. rds_iam makes a user log in with IAM tokens only.
//
// Without migrations (migrations false) the app owns its schema: it
// creates its own tables, so it keeps CREATE on schema public.
//
// With migrations the schema belongs to cellctl_migrator, which the
// migration task logs in as: it alone may CREATE in public, and the app
// gets SELECT, INSERT, UPDATE, DELETE on the tables and USAGE, SELECT on
// the sequences the migrator creates (default privileges), never CREATE,
// ALTER or DROP. CREATE is revoked from PUBLIC too: Aurora PostgreSQL 13
// and 14 still grant it to every role (15 stopped). ALTER DEFAULT
// PRIVILEGES FOR ROLE needs the caller to be a member of that role, and
// Aurora's master user is rds_superuser, not a superuser, so the master is
// granted cellctl_migrator first (PostgreSQL 15 and older: CREATEROLE may
// grant it; 16 and later: the master holds ADMIN OPTION on the role it
// created, and a plain GRANT gives it the INHERIT and SET options the
// command needs). A cell that ran without migrations keeps the tables its
// app created (owned by cellctl_app): hand them over once with REASSIGN
// OWNED BY cellctl_app TO cellctl_migrator before the first migration.
func DatabaseBootstrapStatements(migrations bool) []string {
	createRole := func(role string) string {
		return fmt.Sprintf("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '%[1]s') THEN CREATE ROLE %[1]s LOGIN; END IF; END $$", role)
	}
	app, mig, db := DatabaseAppUser, DatabaseMigratorUser, DatabaseName
	if !migrations {
		return []string{
			createRole(app),
			"GRANT rds_iam TO " + app,
			"GRANT CONNECT, TEMPORARY ON DATABASE " + db + " TO " + app,
			"GRANT USAGE, CREATE ON SCHEMA public TO " + app,
		}
	}
	return []string{
		createRole(app),
		createRole(mig),
		"GRANT rds_iam TO " + app,
		"GRANT rds_iam TO " + mig,
		"GRANT CONNECT, TEMPORARY ON DATABASE " + db + " TO " + app,
		"GRANT CONNECT ON DATABASE " + db + " TO " + mig,
		"REVOKE CREATE ON SCHEMA public FROM PUBLIC",
		"REVOKE CREATE ON SCHEMA public FROM " + app,
		"GRANT USAGE ON SCHEMA public TO " + app,
		"GRANT USAGE, CREATE ON SCHEMA public TO " + mig,
		"GRANT " + mig + " TO " + DatabaseMasterUser,
		"ALTER DEFAULT PRIVILEGES FOR ROLE " + mig + " IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO " + app,
		"ALTER DEFAULT PRIVILEGES FOR ROLE " + mig + " IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO " + app,
	}
}

// DatabaseBootstrapSQL is DatabaseBootstrapStatements as one script (the
// dbBootstrapSql output), for an operator with psql in the cell's VPC.
func DatabaseBootstrapSQL(migrations bool) string {
	return strings.Join(DatabaseBootstrapStatements(migrations), ";\n") + ";"
}

// moreOutputs adds the outputs of the cell's name and database user.
func (b *builder) moreOutputs() error {
	c := b.cell
	c.Outputs["dnsName"] = c.DNSRecord.Fqdn
	c.Outputs["certificateArn"] = c.CertificateArn
	c.Outputs["dbUser"] = pulumi.String(DatabaseAppUser)
	c.Outputs["dbBootstrapSql"] = pulumi.String(DatabaseBootstrapSQL(b.spec.RunsMigrations()))
	if b.dnsProviderArgs != nil {
		doc, err := DNSRecordPolicy(b.partition, b.spec.HostedZoneID, c.DNSName)
		if err != nil {
			return err
		}
		c.Outputs[DNSRecordPolicyOutput] = pulumi.String(doc)
	}
	return nil
}
