package component

import "testing"

// The router's documents keep the text they had when they were built as
// Go maps (routerPolicy): these were written by that code, including the
// cases the rendered fleets do not reach (one cross-account role, whose
// key policy principal stays a list of one; no role).
func TestRouterPolicyTextIsUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  func() (string, error)
		want string
	}{
		{"key policy, one role", func() (string, error) {
			return BucketKeyPolicy("aws", "111122223333", "eu-west-1", "arn:aws:s3:::b", []string{"arn:aws:iam::444455556666:role/r"})
		}, `{"Statement":[{"Action":"kms:*","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Resource":"*","Sid":"OwningAccount"},{"Action":["kms:Decrypt","kms:GenerateDataKey"],"Condition":{"StringEquals":{"kms:EncryptionContext:aws:s3:arn":"arn:aws:s3:::b","kms:ViaService":"s3.eu-west-1.amazonaws.com"}},"Effect":"Allow","Principal":{"AWS":["arn:aws:iam::444455556666:role/r"]},"Resource":"*","Sid":"CellsThroughS3"}],"Version":"2012-10-17"}`},
		{"key policy, no role", func() (string, error) {
			return BucketKeyPolicy("aws", "111122223333", "eu-west-1", "arn:aws:s3:::b", []string{""})
		}, `{"Statement":[{"Action":"kms:*","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Resource":"*","Sid":"OwningAccount"}],"Version":"2012-10-17"}`},
		{"access point policy", func() (string, error) {
			return AccessPointPolicy("arn:aws:s3:eu-west-1:111122223333:accesspoint/ap", "cells/x/", "arn:aws:iam::444455556666:role/r")
		}, `{"Statement":[{"Action":["s3:GetObject","s3:PutObject","s3:DeleteObject"],"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::444455556666:role/r"},"Resource":"arn:aws:s3:eu-west-1:111122223333:accesspoint/ap/object/cells/x/*","Sid":"CellObjects"},{"Action":["s3:ListBucket"],"Condition":{"StringLike":{"s3:prefix":["cells/x/","cells/x/*"]}},"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::444455556666:role/r"},"Resource":"arn:aws:s3:eu-west-1:111122223333:accesspoint/ap","Sid":"CellList"}],"Version":"2012-10-17"}`},
	} {
		got, err := tc.got()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
