package spec

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
