package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/awssts"
)

func TestASecondAccountIsAStoreOfItsOwnAndHomeKeepsItsLayout(t *testing.T) {
	dir := t.TempDir()
	home, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := home.Account("222233334444"); !errors.As(err, new(*UnknownAccountError)) {
		t.Fatalf("unregistered account opened: %v", err)
	}
	if _, err := home.AddRole("222233334444", "cellctl-deploy", nil, ""); err != nil {
		t.Fatal(err)
	}
	second, err := home.Account("222233334444")
	if err != nil {
		t.Fatal(err)
	}
	if err := second.SetQuota("us-east-1", "L-0263D0A3", 9); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, AccountsDir, "222233334444", controlFile)); err != nil {
		t.Fatalf("the second account's quota is not in its own store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, controlFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the home account gained a control.json: %v", err)
	}
	err = second.Read(func(st *State, _ *Control) error {
		if st.AccountID() != "222233334444" {
			t.Errorf("second account's state reports %s", st.AccountID())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if same, _ := home.Account(awsmodel.DefaultAccount); same != home {
		t.Error("the home id did not open the home store")
	}
	accts, err := home.Accounts()
	if err != nil || len(accts) != 2 || !accts[0].Home || accts[1].ID != "222233334444" ||
		len(accts[1].Roles) != 1 || accts[1].Roles[0].Trust[0] != awsmodel.DefaultAccount {
		t.Fatalf("Accounts = %+v, %v", accts, err)
	}
}

func TestAddRoleRefusesWhatIAMWouldNot(t *testing.T) {
	home, _ := Open(t.TempDir())
	for _, bad := range []struct{ account, name, ext string }{
		{"2222", "deploy", ""}, {"222233334444", "de ploy", ""}, {"222233334444", "deploy", "x"},
	} {
		if _, err := home.AddRole(bad.account, bad.name, nil, bad.ext); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := home.AddRole("222233334444", "deploy", []string{"12"}, ""); err == nil {
		t.Error("a malformed trusted account was accepted")
	}
}

func TestAssumeRoleDecidesAsSTS(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	home, _ := Open(t.TempDir())
	home = home.WithClock(func() time.Time { return now })
	home.AddRole("222233334444", "deploy", nil, "")
	home.AddRole("222233334444", "vendor", []string{"999988887777"}, "")
	home.AddRole("222233334444", "guarded", nil, "s3cr3t-id")
	caller, _ := home.HomeIdentity()
	const base = "arn:aws:iam::222233334444:role/"
	for _, c := range []struct {
		in   AssumeRoleInput
		code string
	}{
		{AssumeRoleInput{RoleARN: base + "missing", SessionName: "s1"}, awssts.STSAccessDenied},
		{AssumeRoleInput{RoleARN: base + "vendor", SessionName: "s1"}, awssts.STSAccessDenied},
		{AssumeRoleInput{RoleARN: base + "guarded", SessionName: "s1"}, awssts.STSAccessDenied},
		{AssumeRoleInput{RoleARN: base + "guarded", SessionName: "s1", ExternalID: "wrong-id"}, awssts.STSAccessDenied},
		{AssumeRoleInput{RoleARN: base + "deploy", SessionName: "s"}, awssts.STSValidation},
		{AssumeRoleInput{RoleARN: base + "deploy", SessionName: "s1", Seconds: 60}, awssts.STSValidation},
		{AssumeRoleInput{RoleARN: "arn:aws:iam::2222:role/deploy", SessionName: "s1"}, awssts.STSValidation},
	} {
		_, err := home.AssumeRole(caller, c.in)
		var se *STSError
		if !errors.As(err, &se) || se.Code != c.code {
			t.Errorf("%+v: %v, want %s", c.in, err, c.code)
		}
		if c.code == awssts.STSAccessDenied && se != nil && se.Message != awssts.AssumeRoleDenied(caller.ARN, c.in.RoleARN) {
			t.Errorf("%+v: message %q", c.in, se.Message)
		}
	}
	sess, err := home.AssumeRole(caller, AssumeRoleInput{RoleARN: base + "guarded", SessionName: "cellctl", ExternalID: "s3cr3t-id", Issue: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sess.AccessKeyID, "ASIA") || len(sess.AccessKeyID) != 20 || sess.SessionToken == "" || !sess.Expires.Equal(now.Add(time.Hour)) {
		t.Fatalf("issued %+v", sess)
	}
	id, err := home.Identity(sess.AccessKeyID)
	if err != nil || id.Account != "222233334444" || id.ARN != "arn:aws:sts::222233334444:assumed-role/guarded/cellctl" {
		t.Fatalf("Identity = %+v, %v", id, err)
	}
	if id, err := home.Identity("ASIACELLCTLSIMULATED"); err != nil || id.Account != awsmodel.DefaultAccount {
		t.Fatalf("home Identity = %+v, %v", id, err)
	}
	var se *STSError
	if _, err := home.Identity("ASIAUNKNOWN000000000"); !errors.As(err, &se) || se.Code != awssts.STSInvalidClientTokenID {
		t.Fatalf("unknown key: %v", err)
	}
	now = now.Add(2 * time.Hour)
	if _, err := home.Identity(sess.AccessKeyID); !errors.As(err, &se) || se.Code != "ExpiredToken" {
		t.Fatalf("expired key: %v", err)
	}
}
