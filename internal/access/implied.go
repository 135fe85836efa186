package access

import "strings"

// implied are the calls a service makes on the caller's behalf, with the
// caller's permissions, to serve a request on encrypted data:
//   - S3 under SSE-KMS: PutObject needs kms:GenerateDataKey and GetObject
//     kms:Decrypt on the bucket's key; with S3 Bucket Keys the encryption
//     context is the bucket's ARN, otherwise the object's ("Using
//     server-side encryption with AWS KMS keys" and "Reducing the cost of
//     SSE-KMS with Amazon S3 Bucket Keys", Amazon S3 User Guide).
//   - SQS with a KMS key: a producer needs kms:GenerateDataKey and
//     kms:Decrypt, a consumer kms:Decrypt ("Key management", Amazon SQS
//     Developer Guide).
//   - Secrets Manager: GetSecretValue needs kms:Decrypt on the secret's
//     key ("Secret encryption and decryption", Secrets Manager User
//     Guide).
func (m *Model) implied(req Request) []Request {
	r := m.resource(req.Resource)
	if r != nil && r.Kind == KindAccessPoint {
		// Through an access point S3 uses the bucket's key, with the
		// bucket's (or the object's) ARN as the context.
		ap, key, _ := m.accessPointOf(req.Resource)
		breq, ok := m.bucketForm(req, ap, key)
		if !ok {
			return nil
		}
		req, r = breq, ap.bucket
	}
	if r == nil || r.Key == "" {
		return nil
	}
	action := strings.ToLower(req.Action)
	var kms []string
	var svc, ctxKey, ctxVal string
	switch r.Kind {
	case KindBucket:
		svc = "s3"
		ctxKey, ctxVal = "kms:EncryptionContext:aws:s3:arn", req.Resource
		if r.BucketKey {
			ctxVal = r.ARN
		}
		switch action {
		case "s3:putobject":
			kms = []string{"kms:GenerateDataKey"}
		case "s3:getobject", "s3:getobjectversion":
			kms = []string{"kms:Decrypt"}
		}
	case KindQueue:
		svc = "sqs"
		ctxKey, ctxVal = "kms:EncryptionContext:aws:sqs:arn", r.ARN
		switch action {
		case "sqs:sendmessage":
			kms = []string{"kms:GenerateDataKey", "kms:Decrypt"}
		case "sqs:receivemessage":
			kms = []string{"kms:Decrypt"}
		}
	case KindSecret:
		svc = "secretsmanager"
		ctxKey, ctxVal = "kms:EncryptionContext:SecretARN", r.ARN
		if action == "secretsmanager:getsecretvalue" {
			kms = []string{"kms:Decrypt"}
		}
	}
	out := make([]Request, 0, len(kms))
	for _, a := range kms {
		out = append(out, Request{Principal: req.Principal, Action: a, Resource: r.Key, Context: map[string][]string{
			"kms:ViaService": {svc + "." + r.Region + ".amazonaws.com"},
			ctxKey:           {ctxVal},
		}})
	}
	return out
}
