package awsapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSTS answers AssumeRole for one role and GetCallerIdentity for
// whoever signed: the assumed session's key says it is the role.
func fakeSTS(t *testing.T, wantExternalID string, assumes *atomic.Int32) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		auth := r.Header.Get("Authorization")
		switch r.Form.Get("Action") {
		case "AssumeRole":
			assumes.Add(1)
			if !strings.Contains(auth, "Credential=AKIDBASE/") {
				t.Errorf("AssumeRole signed with %q, want the base key", auth)
			}
			if r.Form.Get("ExternalId") != wantExternalID || r.Form.Get("RoleSessionName") != "cellctl-cell-c" || r.Form.Get("DurationSeconds") != "1800" {
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprintf(w, `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User: arn:aws:iam::123456789012:user/ci is not authorized to perform: sts:AssumeRole on resource: %s</Message></Error><RequestId>r1</RequestId></ErrorResponse>`, r.Form.Get("RoleArn"))
				return
			}
			fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>
<AccessKeyId>ASIAASSUMED</AccessKeyId><SecretAccessKey>s</SecretAccessKey><SessionToken>tok</SessionToken><Expiration>%s</Expiration>
</Credentials><AssumedRoleUser><Arn>arn:aws:sts::222233334444:assumed-role/deploy/cellctl-cell-c</Arn><AssumedRoleId>AROA1:cellctl-cell-c</AssumedRoleId></AssumedRoleUser>
</AssumeRoleResult><ResponseMetadata><RequestId>r2</RequestId></ResponseMetadata></AssumeRoleResponse>`, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
		case "GetCallerIdentity":
			account, arn := "123456789012", "arn:aws:iam::123456789012:user/ci"
			if strings.Contains(auth, "Credential=ASIAASSUMED/") {
				if r.Header.Get("X-Amz-Security-Token") != "tok" {
					t.Error("the assumed session's token was not sent")
				}
				account, arn = "222233334444", "arn:aws:sts::222233334444:assumed-role/deploy/cellctl-cell-c"
			}
			fmt.Fprintf(w, `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>%s</Arn><UserId>U</UserId><Account>%s</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>r3</RequestId></ResponseMetadata></GetCallerIdentityResponse>`, arn, account)
		default:
			t.Errorf("unexpected action %q", r.Form.Get("Action"))
		}
	}))
}

// A Target with a Role signs with the assumed session (key and token),
// and every reader of that session shares one AssumeRole call.
func TestTargetAssumesItsRole(t *testing.T) {
	var assumes atomic.Int32
	srv := fakeSTS(t, "tenant-c", &assumes)
	defer srv.Close()
	base := Target{Region: "us-east-1", Endpoint: srv.URL, AccessKeyID: "AKIDBASE", SecretAccessKey: "x", MaxBackoff: time.Millisecond}
	id, err := CallerIdentity(context.Background(), base)
	if err != nil || id.Account != "123456789012" {
		t.Fatalf("base identity = %+v, %v", id, err)
	}
	role := base
	role.Role = Role{ARN: "arn:aws:iam::222233334444:role/deploy", SessionName: "cellctl-cell-c", ExternalID: "tenant-c", Duration: 30 * time.Minute}
	for i := 0; i < 3; i++ {
		id, err = CallerIdentity(context.Background(), role)
		if err != nil || id.Account != "222233334444" {
			t.Fatalf("assumed identity = %+v, %v", id, err)
		}
	}
	if n := assumes.Load(); n != 1 {
		t.Errorf("AssumeRole called %d times for one session, want 1 (the credentials are cached)", n)
	}

	// A role the caller may not assume: STS's AccessDenied, role named.
	denied := base
	denied.Role = Role{ARN: "arn:aws:iam::222233334444:role/other", SessionName: "cellctl-cell-c", ExternalID: "wrong", Duration: 30 * time.Minute}
	_, err = CallerIdentity(context.Background(), denied)
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") || !strings.Contains(err.Error(), "arn:aws:iam::222233334444:role/other") {
		t.Fatalf("denied role: %v", err)
	}
}
