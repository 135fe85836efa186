package cellmodule

import (
	"fmt"
	"hash/fnv"
	"reflect"
	"strings"
	"testing"

	iampolicy "github.com/cellctl/cellctl/internal/policy"
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

// A cell in another account than the fleet bucket's reaches its prefix
// through its own access point (the bucket policy delegates cross-account
// access to the bucket account's access points): its task policy allows
// that access point's ARN for its prefix's objects and listing, and
// nothing else through it. A cell in the bucket's account has no such
// statement, so its policy is what it was.
func TestCrossAccountTaskPolicyNamesItsAccessPoint(t *testing.T) {
	const bucket = "example-cells-fleet"
	name := "cell-a-" + fmt.Sprintf("%08x", fnv32(bucket))
	for _, tc := range []struct {
		name string
		key  FleetKey
		want string
	}{
		{"shares the cell's account", FleetKey{Region: "us-east-1", SharesAccount: true}, ""},
		{"declared router account", FleetKey{Account: "111122223333", Region: "us-east-1"}, "arn:aws:s3:us-east-1:111122223333:accesspoint/" + name},
		{"another, unnamed account", FleetKey{Region: "us-east-1"}, "arn:aws:s3:us-east-1:*:accesspoint/" + name},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ap := tc.key.AccessPointARN("aws", bucket, "cell-a")
			if ap != tc.want {
				t.Fatalf("access point %q, want %q", ap, tc.want)
			}
			doc := taskRolePolicy(taskRolePolicyInput{BucketArn: "arn:aws:s3:::" + bucket, Prefix: "cells/cell-a/", FleetKey: &tc.key,
				Account: "123456789012", AccessPoint: ap})
			var through []PolicyStatement
			for _, st := range doc.Statement {
				for _, r := range st.Resource {
					if strings.Contains(r, ":accesspoint/") {
						through = append(through, st)
						break
					}
				}
			}
			if tc.want == "" {
				if len(through) != 0 {
					t.Fatalf("a cell in the bucket's account names access points: %+v", through)
				}
				return
			}
			want := []PolicyStatement{
				{Sid: "CellObjectsThroughAccessPoint", Effect: "Allow", Action: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"},
					Resource: []string{tc.want + "/object/cells/cell-a/*"}},
				{Sid: "ListCellPrefixThroughAccessPoint", Effect: "Allow", Action: []string{"s3:ListBucket"}, Resource: []string{tc.want},
					Condition: iampolicy.Conditions{"StringLike": {"s3:prefix": {"cells/cell-a/", "cells/cell-a/*"}}}},
			}
			if !reflect.DeepEqual(through, want) {
				t.Errorf("statements through the access point\n got %+v\nwant %+v", through, want)
			}
		})
	}
}

func fnv32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}
