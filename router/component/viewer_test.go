package component_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/router/component"
	"github.com/cellctl/cellctl/router/edge"
	"github.com/cellctl/cellctl/stacks"
)

const (
	typeCertificate = "aws:acm/certificate:Certificate"
	typeValidation  = "aws:acm/certificateValidation:CertificateValidation"
	typeRecord      = "aws:route53/record:Record"
)

// TestViewerDomainsGetAliasesCertificateAndRecords: the demo router's
// viewer domains become the distribution's aliases, with a us-east-1
// certificate the router requests and validates, and alias records.
func TestViewerDomainsGetAliasesCertificateAndRecords(t *testing.T) {
	f := demoFleet(t)
	r := mustRunRouter(t, f)
	dist := r.primary(t)
	aliases := stringOrList(plain(in(dist, "aliases")).Mappable())
	if strings.Join(aliases, ",") != strings.Join(f.Router.ViewerDomains, ",") || len(aliases) != 2 {
		t.Fatalf("aliases %v, want the viewer domains %v", aliases, f.Router.ViewerDomains)
	}
	cert := r.one(t, typeCertificate)
	if str(in(cert, "domainName")) != "app.example.com" || strings.Join(stringOrList(plain(in(cert, "subjectAlternativeNames")).Mappable()), ",") != "*.app.example.com" ||
		str(in(cert, "validationMethod")) != "DNS" {
		t.Errorf("viewer certificate %v", cert.Inputs)
	}
	if !strings.Contains(str(out(cert, "arn")), ":us-east-1:") || !strings.Contains(cert.Provider, component.EdgeRegion) {
		t.Errorf("viewer certificate %s via %q: CloudFront reads certificates only in us-east-1", str(out(cert, "arn")), cert.Provider)
	}
	val := r.one(t, typeValidation)
	vc := in(dist, "viewerCertificate")
	if str(get(vc, "acmCertificateArn")) != str(out(val, "certificateArn")) || str(get(vc, "sslSupportMethod")) != "sni-only" ||
		isTrue(get(vc, "cloudfrontDefaultCertificate")) {
		t.Errorf("viewer certificate of the distribution %v, want the validated certificate, SNI", vc)
	}
	var validation, alias []string
	for _, rec := range r.rec.ByType(typeRecord) {
		if str(in(rec, "zoneId")) != f.Router.ViewerHostedZoneID {
			t.Errorf("%s is in zone %s", rec.Name, str(in(rec, "zoneId")))
		}
		if str(in(rec, "type")) == "CNAME" {
			validation = append(validation, str(in(rec, "name")))
			continue
		}
		alias = append(alias, str(in(rec, "name"))+" "+str(in(rec, "type")))
		a := arr(in(rec, "aliases"))
		if len(a) != 1 || str(get(a[0], "name")) != str(out(dist, "domainName")) || str(get(a[0], "zoneId")) != awsmodel.CloudFrontHostedZoneID {
			t.Errorf("%s: alias %v, want the distribution", rec.Name, a)
		}
	}
	// app.example.com and *.app.example.com share one validation record.
	if len(validation) != 1 || !strings.HasSuffix(validation[0], ".app.example.com.") {
		t.Errorf("validation records %v, want one", validation)
	}
	sort.Strings(alias)
	if strings.Join(alias, ",") != "*.app.example.com A,*.app.example.com AAAA,app.example.com A,app.example.com AAAA" {
		t.Errorf("alias records %v", alias)
	}
}

// TestNoViewerDomainsNoHostFallback: a router without viewer domains keeps
// CloudFront's default certificate and bakes no tenant host domain, so the
// edge never takes "dXXXX" of dXXXX.cloudfront.net for a tenant.
func TestNoViewerDomainsNoHostFallback(t *testing.T) {
	f := demoFleet(t)
	f.Router.ViewerDomains, f.Router.ViewerHostedZoneID = nil, ""
	r := mustRunRouter(t, f)
	dist := r.primary(t)
	if a := stringOrList(plain(in(dist, "aliases")).Mappable()); len(a) != 0 {
		t.Errorf("aliases %v, want none", a)
	}
	if !isTrue(get(in(dist, "viewerCertificate"), "cloudfrontDefaultCertificate")) {
		t.Error("without viewer domains the distribution uses CloudFront's certificate")
	}
	if n := len(r.rec.ByType(typeCertificate)) + len(r.rec.ByType(typeRecord)); n != 0 {
		t.Errorf("%d certificates/records without viewer domains", n)
	}
	var cfg struct {
		TenantHostDomains []string `json:"tenantHostDomains"`
	}
	if err := json.Unmarshal([]byte(codeFiles(t, r.one(t, typeFunction))[edge.ConfigFile]), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.TenantHostDomains == nil || len(cfg.TenantHostDomains) != 0 {
		t.Errorf("tenantHostDomains %v, want []", cfg.TenantHostDomains)
	}
}

// TestOriginsAreTheCellsDNSNames: CloudFront connects to <cell>.<fleet
// domain>, which the cell's certificate covers, never to *.elb.amazonaws.com
// — the distribution's one origin and every cell the function sends to.
func TestOriginsAreTheCellsDNSNames(t *testing.T) {
	r := mustRunRouter(t, demoFleet(t))
	for _, o := range arr(in(r.primary(t), "origins")) {
		if d := str(get(o, "domainName")); !strings.HasSuffix(d, ".cells.example.com") || strings.Contains(d, "elb.amazonaws.com") {
			t.Errorf("origin %s: domain %s", str(get(o, "originId")), d)
		}
	}
	var cfg struct {
		Origins map[string]string `json:"origins"`
	}
	if err := json.Unmarshal([]byte(codeFiles(t, r.one(t, typeFunction))[edge.ConfigFile]), &cfg); err != nil {
		t.Fatal(err)
	}
	for cell, d := range cfg.Origins {
		if !strings.HasSuffix(d, ".cells.example.com") || strings.Contains(d, "elb.amazonaws.com") {
			t.Errorf("the function sends %s to %s", cell, d)
		}
	}
}

func TestEdgeFunctionSurvivesReplicasOnDelete(t *testing.T) {
	fn := mustRunRouter(t, demoFleet(t)).one(t, typeFunction)
	if !isTrue(in(fn, "skipDestroy")) {
		t.Error("the edge function must set skipDestroy: Lambda refuses to delete a function CloudFront still replicates")
	}
}

// TestEdgeProviderInheritsTheStackSettings: profile, assumeRole and
// defaultTags of the stack reach the explicit us-east-1 provider (an
// explicit provider inherits nothing), secrets stay secret.
func TestEdgeProviderInheritsTheStackSettings(t *testing.T) {
	f := demoFleet(t)
	model := awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: "123456789012", Region: f.Router.Region})
	for _, c := range f.Cells {
		model.SetStackOutputs(c.ID, resource.PropertyMap{"dnsName": resource.NewStringProperty(albDNS(c.ID)),
			"albArnSuffix": resource.NewStringProperty("app/" + c.ID + "/1"), "targetGroupArnSuffix": resource.NewStringProperty("targetgroup/" + c.ID + "/2")})
	}
	key := f.ConfigKey(fleet.OriginVerifyKey)
	rec, _, err := offline.Run(offline.Options{
		Project: f.Project, Stack: fleet.RouterStack,
		Config: map[string]string{
			key:                     testSecret,
			"aws:region":            "eu-west-1",
			"aws:profile":           "fleet-admin",
			"aws:assumeRole":        `{"roleArn":"arn:aws:iam::210987654321:role/cellctl-router","sessionName":"cellctl"}`,
			"aws:defaultTags":       `{"tags":{"owner":"platform","cost-center":"42"}}`,
			"aws:maxRetries":        "7",
			"aws:allowedAccountIds": `["123456789012"]`,
			// A local emulator's settings (fleet.EmulatorKeys).
			"aws:endpoints":               `[{"s3":"http://localhost:4566","lambda":"http://localhost:4566"}]`,
			"aws:s3UsePathStyle":          "true",
			"aws:skipRequestingAccountId": "true",
		},
		SecretKeys: []string{key},
	}, model, stacks.Program(f))
	if err != nil {
		t.Fatal(err)
	}
	var p *offline.Resource
	for _, res := range rec.ByType(typeProvider) {
		p = res
	}
	if p == nil {
		t.Fatal("no explicit aws provider")
	}
	if str(in(p, "region")) != component.EdgeRegion || str(in(p, "profile")) != "fleet-admin" {
		t.Errorf("provider region %q profile %q", str(in(p, "region")), str(in(p, "profile")))
	}
	ar := plain(in(p, "assumeRole"))
	if str(get(ar, "roleArn")) != "arn:aws:iam::210987654321:role/cellctl-router" || str(get(ar, "sessionName")) != "cellctl" {
		t.Errorf("assumeRole %v", ar)
	}
	if tags := plain(get(in(p, "defaultTags"), "tags")); str(get(tags, "owner")) != "platform" || str(get(tags, "cost-center")) != "42" {
		t.Errorf("defaultTags %v", in(p, "defaultTags"))
	}
	if n := plain(in(p, "maxRetries")); !n.IsNumber() || n.NumberValue() != 7 {
		t.Errorf("maxRetries %v", n)
	}
	if ids := stringOrList(plain(in(p, "allowedAccountIds")).Mappable()); strings.Join(ids, ",") != "123456789012" {
		t.Errorf("allowedAccountIds %v", ids)
	}
	if eps := in(p, "endpoints").String(); !strings.Contains(eps, "lambda") || !strings.Contains(eps, "http://localhost:4566") {
		t.Errorf("endpoints %v", eps)
	}
	if !isTrue(in(p, "s3UsePathStyle")) || !isTrue(in(p, "skipRequestingAccountId")) {
		t.Errorf("s3UsePathStyle %v, skipRequestingAccountId %v", in(p, "s3UsePathStyle"), in(p, "skipRequestingAccountId"))
	}
	// The edge function is tagged with the stack's default tags.
	for _, fn := range rec.ByType(typeFunction) {
		if str(get(out(fn, "tagsAll"), "owner")) != "platform" {
			t.Errorf("edge function tagsAll %v, want the stack's default tags", out(fn, "tagsAll"))
		}
	}
}

func TestEdgeProviderArgsRefusesBadSettings(t *testing.T) {
	for key, raw := range map[string]string{
		"assumeRole": `{"roleArn": 5}`, "maxRetries": "many", "notAKey": "x", "defaultTags": `{"tags": `,
	} {
		_, err := component.EdgeProviderArgs([]string{key}, func(k string) (string, bool) { return raw, k == key })
		if err == nil || !strings.Contains(err.Error(), "aws:"+key) {
			t.Errorf("%s=%s: err %v, want one naming aws:%s", key, raw, err, key)
		}
	}
	args, err := component.EdgeProviderArgs([]string{"secretKey"}, func(k string) (string, bool) { return "s3cr3t", k == "secretKey" })
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := args.SecretKey.(pulumi.StringOutput); !ok || o == (pulumi.StringOutput{}) {
		t.Errorf("secretKey %T, want a secret output", args.SecretKey)
	}
}

func isTrue(v resource.PropertyValue) bool {
	v = plain(v)
	return v.IsBool() && v.BoolValue()
}
