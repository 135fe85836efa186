package cellmodule

import (
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/offline"
)

// TestCellsPassEveryAWSRule renders both test cells against awsmodel's
// mock (which refuses what AWS refuses) and runs every AWS rule, quotas
// included, over every resource.
func TestCellsPassEveryAWSRule(t *testing.T) {
	for _, s := range testCells() {
		t.Run(s.ID, func(t *testing.T) {
			r, err := runCell(s, awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: testAccount, Region: s.Region}), nil)
			if err != nil {
				t.Fatalf("NewCell under the AWS model: %v", err)
			}
			var rs []awsmodel.AuditResource
			for _, res := range r.rec.Resources() {
				rs = append(rs, awsmodel.AuditResource{Stack: s.ID, Type: res.Type, Name: res.Name, ID: res.ID,
					Inputs: res.Inputs, Outputs: res.Outputs, Env: awsmodel.Env{Account: testAccount, Region: s.Region}})
			}
			for _, v := range awsmodel.Audit(rs) {
				t.Errorf("rule violation: %s", v)
			}
		})
	}
}

// TestSecurityGroupRuleDescriptionsUseEC2Charset: an apostrophe (or any
// character outside EC2's set) fails every cell's first up.
func TestSecurityGroupRuleDescriptionsUseEC2Charset(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		rules := append(r.rec.ByType("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"),
			r.rec.ByType("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule")...)
		if len(rules) != 8 {
			t.Fatalf("%d rules, want 8", len(rules))
		}
		for _, res := range rules {
			if err := awsmodel.CheckRules(res.Type, res.Name, res.Inputs, awsmodel.Env{}, nil, awsmodel.OpCreate); err != nil {
				t.Errorf("%s: %v", res.Name, err)
			}
		}
	})
}

func TestCellHasItsOwnDNSNameAndCertificate(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		want := s.ID + "." + testDomain
		rec := in(r.one(t, "dns"))
		alb := out(r.one(t, "alb"))
		if rec["name"] != want || rec["type"] != "A" || rec["zoneId"] != testZone || rec["ttl"] != nil ||
			get(rec, "aliases", 0, "name") != alb["dnsName"] || get(rec, "aliases", 0, "zoneId") != alb["zoneId"] ||
			get(rec, "aliases", 0, "evaluateTargetHealth") != true {
			t.Errorf("DNS record %v, want an alias %s → the ALB in zone %s", rec, want, testZone)
		}
		if got := str(r.outputs["dnsName"].Value); got != want {
			t.Errorf("dnsName output %q, want %q", got, want)
		}
		if got := str(r.outputs["certificateArn"].Value); got != r.listenerCertificate(t) || got == "" {
			t.Errorf("certificateArn output %q, want the listener's %q", got, r.listenerCertificate(t))
		}
		if s.CertificateArn != "" {
			// An existing certificate: the cell requests none.
			for _, typ := range []string{"aws:acm/certificate:Certificate", "aws:acm/certificateValidation:CertificateValidation"} {
				if n := len(r.rec.ByType(typ)); n != 0 {
					t.Errorf("%d × %s with cells:certificateArn set, want none", n, typ)
				}
			}
			return
		}
		cert := in(r.one(t, "cert"))
		if cert["domainName"] != want || cert["validationMethod"] != "DNS" || cert["subjectAlternativeNames"] != nil {
			t.Errorf("certificate %v, want exactly %s, DNS-validated", cert, want)
		}
		vrec := in(r.one(t, "cert-validation"))
		if vrec["zoneId"] != testZone || vrec["type"] != "CNAME" || vrec["name"] != "_abc."+want+"." ||
			strs(vrec["records"])[0] != "_def.acm-validations.aws." {
			t.Errorf("validation record %v", vrec)
		}
		val := in(r.one(t, "cert-validated"))
		if val["certificateArn"] != out(r.one(t, "cert"))["arn"] || strs(val["validationRecordFqdns"])[0] != "_abc."+want {
			t.Errorf("certificate validation %v", val)
		}
		if r.one(t, "https").Inputs["certificateArn"].StringValue() != str(out(r.one(t, "cert-validated"))["certificateArn"]) {
			t.Error("the listener does not wait for the validated certificate")
		}
	})
}

func TestAuroraVersionPinSurvivesPatching(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		pinsMinor := strings.Contains(r.spec.AuroraEngineVersion, ".")
		for _, res := range r.rec.ByType("aws:rds/clusterInstance:ClusterInstance") {
			if got := in(res)["autoMinorVersionUpgrade"]; got != !pinsMinor {
				t.Errorf("%s: engine %s, autoMinorVersionUpgrade %v, want %v", res.Name, r.spec.AuroraEngineVersion, got, !pinsMinor)
			}
		}
	})
}

func TestFinalSnapshotIsUniquePerRelease(t *testing.T) {
	s := testCells()[0]
	s.Releasing = true
	snapshot := func(at time.Time) string {
		t.Helper()
		rec, _, err := offline.Run(offline.Options{Project: "cells", Stack: s.ID}, newTestModel(s.Region), func(ctx *pulumi.Context) error {
			_, err := NewCell(ctx, s.ID, &CellArgs{Spec: s, OriginVerifySecret: pulumi.ToSecret(pulumi.String(testSecret)).(pulumi.StringOutput),
				Now: func() time.Time { return at }})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		db := rec.ByName(s.ID + "-db")
		if db == nil {
			t.Fatal("no cluster")
		}
		if db.Inputs["deletionProtection"].BoolValue() {
			t.Error("a release keeps deletion protection on")
		}
		id := db.Inputs["finalSnapshotIdentifier"].StringValue()
		if err := awsmodel.CheckRules("aws:rds/cluster:Cluster", db.Name, db.Inputs, awsmodel.Env{}, nil, awsmodel.OpUpdate); err != nil {
			t.Errorf("snapshot id %s: %v", id, err)
		}
		return id
	}
	first := snapshot(time.Date(2026, 12, 1, 9, 15, 0, 0, time.UTC))
	if first != "shop-cell-a-final-20261201t091500z" {
		t.Errorf("first release: %s", first)
	}
	if second := snapshot(time.Date(2027, 3, 2, 10, 0, 1, 0, time.UTC)); second == first {
		t.Errorf("a second release (recreated cell) reuses %s: DBClusterSnapshotAlreadyExists", first)
	}
}
