package awsfacts

import (
	"regexp"
	"testing"
)

// Service Quotas codes have one shape: a service code and an L- code.
var codeShape = regexp.MustCompile(`^[a-z0-9-]+/L-[0-9A-F]{8}$`)

func TestQuotas(t *testing.T) {
	seen := map[string]bool{}
	for _, q := range Quotas {
		if !codeShape.MatchString(q.Code) {
			t.Errorf("%s: not a <service>/L-XXXXXXXX code", q.Code)
		}
		if seen[q.Code] {
			t.Errorf("%s listed twice", q.Code)
		}
		seen[q.Code] = true
		if q.Name == "" || q.Default <= 0 {
			t.Errorf("%s: name %q default %v", q.Code, q.Name, q.Default)
		}
	}
	if VPCsPerRegion.ServiceCode() != "vpc" || VPCsPerRegion.QuotaCode() != "L-F678F1CE" {
		t.Fatalf("codes: %s %s", VPCsPerRegion.ServiceCode(), VPCsPerRegion.QuotaCode())
	}
	if ElasticIPs.Code != "ec2/L-0263D0A3" || ElasticIPs.Default != 5 {
		t.Fatalf("Elastic IPs: %+v", ElasticIPs)
	}
}
