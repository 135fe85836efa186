package spec

import (
	"fmt"
	"hash/fnv"
)

// What a cell may do in the fleet bucket: its task role's identity policy
// (cellmodule), the bucket policy's grant to a cell in another account
// (router/component) and the isolation audit that accepts exactly that
// grant (internal/isolation) all read these, so they cannot disagree.
var (
	// PrefixObjectActions are a cell's actions on the objects of its own
	// prefix (cells/<id>/*).
	PrefixObjectActions = []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}
	// PrefixListActions list the bucket, conditioned on the cell's prefix.
	PrefixListActions = []string{"s3:ListBucket"}
	// FleetKeyActions are what S3 asks KMS for on a cell's behalf when it
	// reads and writes SSE-KMS objects under the fleet bucket's key.
	FleetKeyActions = []string{"kms:Decrypt", "kms:GenerateDataKey"}
)

// FleetKeyEncryptionContextKey is the condition key that holds the
// encryption context S3 passes to KMS for an object. The fleet bucket
// enables S3 Bucket Keys, so the context is the bucket's ARN, not the
// object's ("Configuring your bucket to use an S3 Bucket Key with SSE-KMS
// for new objects", Amazon S3 User Guide); the task roles and the key
// policy both hold the key to the fleet bucket with it.
const FleetKeyEncryptionContextKey = "kms:EncryptionContext:aws:s3:arn"

// ViaS3 is kms:ViaService's value for the requests S3 makes to KMS in
// region on a caller's behalf ("kms:ViaService", AWS KMS Developer Guide:
// <service>.<region>.amazonaws.com).
func ViaS3(region string) string { return "s3." + region + ".amazonaws.com" }

// AccessPointName is the name of the fleet bucket's access point for a
// cell in another account than the bucket's (router/component creates
// it, the cell's task policy names it): the cell id and 8 hex digits of
// the bucket's name, so two fleets' access points in one account and
// Region never collide (S3 access point names are unique per account and
// Region, 3 to 50 characters of lowercase letters, digits and hyphens,
// Amazon S3 User Guide, "Access points naming rules, restrictions, and
// limitations"; a cell id is at most 20 such characters).
func AccessPointName(bucket, cell string) string {
	h := fnv.New32a()
	h.Write([]byte(bucket))
	return fmt.Sprintf("%s-%08x", cell, h.Sum32())
}

// AccessPointARN is an access point's ARN; account may be "*" where the
// fleet does not name the bucket's account (an identity policy's
// resource may use the wildcard; the access point's own policy still
// decides).
func AccessPointARN(partition, region, account, name string) string {
	return fmt.Sprintf("arn:%s:s3:%s:%s:accesspoint/%s", partition, region, account, name)
}

// AccessPointObjectARN is the ARN of key (or a key pattern) through an
// access point: <access point ARN>/object/<key> (Amazon S3 User Guide,
// "Configuring IAM policies for using access points").
func AccessPointObjectARN(accessPoint, key string) string {
	return accessPoint + "/object/" + key
}
