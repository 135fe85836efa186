package awssts

import "testing"

func TestCheckAccountID(t *testing.T) {
	for _, ok := range []string{"123456789012", "000000000000"} {
		if err := CheckAccountID(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "12345678901", "1234567890123", "12345678901a", " 123456789012"} {
		if err := CheckAccountID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAssumedRoleARN(t *testing.T) {
	if got := AssumedRoleARN("", "222233334444", "deploy", "cellctl"); got != "arn:aws:sts::222233334444:assumed-role/deploy/cellctl" {
		t.Errorf("got %s", got)
	}
}

func TestRoleSessionSeconds(t *testing.T) {
	for in, want := range map[string]int{"": 3600, "1h": 3600, "15m": 900, "12h": 43200} {
		if got, err := RoleSessionSeconds(in); err != nil || got != want {
			t.Errorf("%q = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"10m", "13h", "an hour"} {
		if _, err := RoleSessionSeconds(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
