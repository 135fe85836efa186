package simulator

import (
	"strings"
	"testing"
)

func TestSimAccountRoleListAndAccountFlag(t *testing.T) {
	fx := newSimFixture(t)
	fx.must("table", "account", "role", "222233334444", "cellctl-deploy", "--external-id", "fleet-7f3a")
	out := fx.must("table", "account", "list")
	if !strings.Contains(out, "arn:aws:iam::222233334444:role/cellctl-deploy") || !strings.Contains(out, "123456789012 (home)") {
		t.Errorf("account list:\n%s", out)
	}
	fx.must("table", "--account", "222233334444", "quota", "set", "us-east-1", "ec2/L-0263D0A3", "40")
	if out := fx.must("json", "--account", "222233334444", "resources"); strings.Contains(out, "cell-a") {
		t.Errorf("the second account lists the home account's resources: %s", out)
	}
	for _, bad := range [][]string{
		{"account", "role", "2222", "x"},
		{"--account", "999988887777", "resources"},
		{"--account", "12", "resources"},
		{"--account", "222233334444", "account", "list"},
	} {
		if _, err := fx.run("table", bad...); err == nil {
			t.Errorf("sim %v accepted", bad)
		}
	}
}
