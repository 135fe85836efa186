package policy

import "testing"

// The default key policy is the one document KMS gives a key created
// without a policy; the AWS model answers GetKeyPolicy with it and the
// access model evaluates it, so both read this one value. Its text is
// what the AWS model wrote before the two copies became one.
func TestDefaultKeyPolicyIsKMSs(t *testing.T) {
	d := DefaultKeyPolicy("aws", "111122223333")
	got, err := d.JSON()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"Id":"key-default-1","Statement":[{"Action":"kms:*","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Resource":"*","Sid":"Enable IAM User Permissions"}],"Version":"2012-10-17"}`
	if got != want {
		t.Fatalf("default key policy\n got %s\nwant %s", got, want)
	}
	back, err := Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	s := back.Statement[0]
	if len(back.Statement) != 1 || s.Effect != Allow || s.Action[0] != "kms:*" || s.Resource[0] != "*" ||
		len(s.Principal.AWS()) != 1 || s.Principal.AWS()[0] != "arn:aws:iam::111122223333:root" {
		t.Fatalf("read back: %+v", back)
	}
}
