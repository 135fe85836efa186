package awsmodel

import (
	"testing"

	"github.com/cellctl/cellctl/internal/awsfacts"
)

// The simulator enforces every quota the product knows, with AWS's code,
// name and default from awsfacts — one definition for both.
func TestQuotaDefsAreTheProductsFacts(t *testing.T) {
	byCode := map[string]QuotaDef{}
	for _, d := range QuotaDefs() {
		byCode[d.Code] = d
	}
	for _, q := range awsfacts.Quotas {
		d, ok := byCode[q.Code]
		if !ok {
			t.Errorf("%s (%s) is not enforced by the simulator", q.Code, q.Name)
			continue
		}
		if d.Quota != q {
			t.Errorf("%s: simulator %+v, facts %+v", q.Code, d.Quota, q)
		}
	}
	if d, ok := QuotaDefByCode("L-F678F1CE"); !ok || d.Quota != awsfacts.VPCsPerRegion {
		t.Fatalf("lookup by bare quota code: %+v %v", d, ok)
	}
}
