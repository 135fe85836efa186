package engine

import (
	"errors"
	"testing"
)

// What the pulumi CLI printed (reproduced on --cloud sim with a gofakes3
// backend): with the KMS key disabled its AWS SDK logged a checksum
// warning first, and status showed that line as the stack's error.
const kmsDisabledCLIError = "failed to run command: exit status 255\ncode: 255\nstdout: \nstderr: " +
	"SDK 2026/12/07 12:26:25 WARN Response has no supported checksum. Not validating response payload.\n" +
	"SDK 2026/12/07 12:26:25 WARN Response has no supported checksum. Not validating response payload.\n" +
	"error: decrypting secrets: secrets (code=PermissionDenied): operation error KMS: Decrypt, https response error StatusCode: 400, RequestID: , " +
	"DisabledException: arn:aws:kms:us-east-1:123456789012:key/ae6ad1ed-9872-4db3-b5af-9483ca9ca7bc is disabled.\n"

func TestCleanErrDropsTheAWSSDKsLogLines(t *testing.T) {
	want := "error: decrypting secrets: secrets (code=PermissionDenied): operation error KMS: Decrypt, https response error StatusCode: 400, RequestID: , " +
		"DisabledException: arn:aws:kms:us-east-1:123456789012:key/ae6ad1ed-9872-4db3-b5af-9483ca9ca7bc is disabled."
	if got := cleanErr(errors.New(kmsDisabledCLIError)).Error(); got != want {
		t.Errorf("cleanErr =\n%q\nwant\n%q", got, want)
	}
}

// A status table cell says what failed in a few words, the AWS error code
// first; the whole message follows once, on stderr.
func TestErrorSummaryNamesTheAWSErrorCode(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{cleanErr(errors.New(kmsDisabledCLIError)).Error(), "KMS Decrypt: DisabledException"},
		{`stack cell-a: error: read ".pulumi/meta.yaml": blob (key ".pulumi/meta.yaml") (code=Unknown): operation error S3: GetObject, exceeded maximum number of attempts, 3, ` +
			`https response error StatusCode: 503, RequestID: R1, HostID: , api error ServiceUnavailable: Service is unable to handle request.`, "S3 GetObject: ServiceUnavailable"},
		{`stack cell-a: error: read ".pulumi/meta.yaml": blob (key ".pulumi/meta.yaml") (code=Unknown): operation error S3: GetObject, exceeded maximum number of attempts, 3, ` +
			`https response error StatusCode: 0, RequestID: , HostID: , request send failed, Get "http://127.0.0.1:9/cells-state/.pulumi/meta.yaml?x-id=GetObject": dial tcp 127.0.0.1:9: connect: connection refused`,
			"S3 GetObject: dial tcp 127.0.0.1:9: connect: connection refused"},
		{"operation error STS: AssumeRole, get identity: get credentials: failed to refresh cached credentials", "STS AssumeRole: get identity: get credentials: failed to refresh cached credentials"},
		{"the state of stack cell-b is corrupt: x.json: truncated\nRestore the last good checkpoint", "the state of stack cell-b is corrupt: x.json: truncated"},
	} {
		if got := ErrorSummary(tc.msg); got != tc.want {
			t.Errorf("ErrorSummary(%.60q…) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}
