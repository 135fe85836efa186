package cellmodule

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/acm"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/route53"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

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
	}, b.opts()...)
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
	}, b.opts()...)
	return err
}

// DatabaseBootstrapSQL is the one-time grant the app's database user needs,
// run once per cell as the master user (whose password AWS keeps in
// Secrets Manager; see docs/ARCHITECTURE.md). rds_iam makes the user log in
// with IAM tokens only.
func DatabaseBootstrapSQL() string {
	return fmt.Sprintf("CREATE USER %[1]s WITH LOGIN; GRANT rds_iam TO %[1]s; GRANT CONNECT, TEMPORARY ON DATABASE %[2]s TO %[1]s; GRANT USAGE, CREATE ON SCHEMA public TO %[1]s;",
		DatabaseAppUser, DatabaseName)
}

// moreOutputs adds the outputs of the cell's name and database user.
func (b *builder) moreOutputs() error {
	c := b.cell
	c.Outputs["dnsName"] = c.DNSRecord.Fqdn
	c.Outputs["certificateArn"] = c.CertificateArn
	c.Outputs["dbUser"] = pulumi.String(DatabaseAppUser)
	c.Outputs["dbBootstrapSql"] = pulumi.String(DatabaseBootstrapSQL())
	return nil
}
