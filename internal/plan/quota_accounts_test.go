package plan

import (
	"context"
	"slices"
	"testing"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
)

// Quotas stop at the account: cell-c in the second account's us-east-1
// never counts with cell-a and cell-b in the home account's us-east-1.
func TestQuotaDemandIsPerAccount(t *testing.T) {
	fl := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	rep, err := Render(context.Background(), fl, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	vpcs := map[string][]string{}
	for _, d := range QuotaDemand(rep.Stacks) {
		if d.Code == awsfacts.VPCsPerRegion.Code && d.Scope == "us-east-1" {
			vpcs[d.Account] = d.Stacks
		}
	}
	if !slices.Equal(vpcs[""], []string{"cell-a", "cell-b"}) || !slices.Equal(vpcs[fleettest.SecondAccount], []string{"cell-c"}) {
		t.Errorf("VPCs in us-east-1 by account = %v", vpcs)
	}
}
