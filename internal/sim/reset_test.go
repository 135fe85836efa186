package sim

import (
	"testing"
)

// A reset empties every account's cloud and keeps the accounts and their
// roles: a second `up` after `sim reset` must not find the last one's
// resources in the second account.
func TestResetEveryAccountKeepsTheAccounts(t *testing.T) {
	dir := t.TempDir()
	if err := AddRole(dir, "222233334444", "cellctl-deploy", nil, ""); err != nil {
		t.Fatal(err)
	}
	home, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	second, err := home.Account("222233334444")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Cloud{home, second} {
		if err := c.SetQuota("us-east-1", "ec2/L-0263D0A3", 9); err != nil {
			t.Fatal(err)
		}
	}
	if err := home.ResetEveryAccount(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*Cloud{"home": home, "second": second} {
		qs, err := c.Quotas("us-east-1")
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if q.Code == "ec2/L-0263D0A3" && q.Value == 9 {
				t.Errorf("%s account's quota override survived the reset: %+v", name, q)
			}
		}
	}
	accts, err := Accounts(dir)
	if err != nil || len(accts) != 2 {
		t.Fatalf("accounts after the reset = %+v, %v", accts, err)
	}
}
