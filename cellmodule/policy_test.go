package cellmodule

import (
	iampolicy "github.com/cellctl/cellctl/internal/policy"
	"reflect"
	"testing"
)

// The task role's use of the fleet bucket key: S3's two actions on a key
// of the bucket's account and region, through S3 only and only for the
// fleet bucket (its ARN is the encryption context with S3 Bucket Keys).
// The account is the router's when declared, the cell's own when the two
// share one, and any account only when the cell names another account
// than a router that names none.
func TestFleetKeyStatement(t *testing.T) {
	const bucket = "arn:aws:s3:::example-cells-fleet"
	for _, tc := range []struct {
		name string
		key  FleetKey
		want string
	}{
		{"declared router account", FleetKey{Account: "111122223333", Region: "us-east-1"}, "arn:aws:kms:us-east-1:111122223333:key/*"},
		{"shares the cell's account", FleetKey{Region: "us-east-1", SharesAccount: true}, "arn:aws:kms:us-east-1:123456789012:key/*"},
		{"another, unnamed account", FleetKey{Region: "us-east-1"}, "arn:aws:kms:us-east-1:*:key/*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := taskRolePolicy(taskRolePolicyInput{BucketArn: bucket, Prefix: "cells/cell-a/", FleetKey: &tc.key, Account: "123456789012"})
			st := doc.Statement[len(doc.Statement)-1]
			want := PolicyStatement{
				Sid: "FleetBucketKeyThroughS3", Effect: "Allow",
				Action:   []string{"kms:Decrypt", "kms:GenerateDataKey"},
				Resource: []string{tc.want},
				Condition: iampolicy.Conditions{"StringEquals": {
					"kms:ViaService":                   {"s3.us-east-1.amazonaws.com"},
					"kms:EncryptionContext:aws:s3:arn": {bucket},
				}},
			}
			if !reflect.DeepEqual(st, want) {
				t.Errorf("key statement\n got %+v\nwant %+v", st, want)
			}
		})
	}
	if doc := taskRolePolicy(taskRolePolicyInput{BucketArn: bucket, Prefix: "cells/cell-a/"}); doc.Statement[len(doc.Statement)-1].Sid == "FleetBucketKeyThroughS3" {
		t.Error("a cell rendered without a router got a key statement")
	}
}
