package awsmodel

import (
	"errors"
	"strings"
	"testing"
)

func kmsCode(err error) string {
	var ke *KMSError
	if errors.As(err, &ke) {
		return ke.Code
	}
	return ""
}

// A KeyId is a key id, key ARN, alias name or alias ARN; anything else is
// refused as KMS refuses it.
func TestKMSKeyRefs(t *testing.T) {
	const id = "1234abcd-12ab-34cd-56ef-1234567890ab"
	for _, tc := range []struct {
		ref, alias, key, region, code string
	}{
		{ref: id, key: id, region: "us-east-1"},
		{ref: "arn:aws:kms:eu-west-1:111122223333:key/" + id, key: id, region: "eu-west-1"},
		{ref: "alias/cells", alias: "alias/cells", region: "us-east-1"},
		{ref: "arn:aws:kms:us-west-2:111122223333:alias/cells", alias: "alias/cells", region: "us-west-2"},
		{ref: "cells", code: KMSNotFound},
		{ref: "alias/", code: KMSNotFound},
		{ref: "arn:aws:s3:::bucket", code: KMSNotFound},
		{ref: "", code: KMSValidation},
	} {
		got, err := ParseKMSKeyRef(tc.ref, "us-east-1", "123456789012")
		if kmsCode(err) != tc.code {
			t.Errorf("%q: error %v, want code %q", tc.ref, err, tc.code)
			continue
		}
		if tc.code == "" && (got.Alias != tc.alias || got.KeyID != tc.key || got.Region != tc.region) {
			t.Errorf("%q = %+v", tc.ref, got)
		}
	}
	if err := CheckKMSAliasName("alias/aws/s3"); err == nil || !strings.Contains(err.Error(), "alias/aws/") {
		t.Errorf("the aws/ prefix is AWS's: %v", err)
	}
	if err := CheckKMSAliasName("alias/cells-prod"); err != nil {
		t.Error(err)
	}
}

func TestKMSLimits(t *testing.T) {
	if kmsCode(CheckKMSPlaintext(0)) != KMSValidation || kmsCode(CheckKMSPlaintext(4097)) != KMSValidation || CheckKMSPlaintext(4096) != nil {
		t.Error("Encrypt takes 1 to 4096 bytes of plaintext")
	}
	for _, tc := range []struct {
		spec string
		n    int
		want int
	}{{"AES_256", 0, 32}, {"AES_128", 0, 16}, {"", 64, 64}, {"AES_256", 32, 0}, {"", 0, 0}, {"", 1025, 0}, {"RSA_2048", 0, 0}} {
		got, err := KMSDataKeyBytes(tc.spec, tc.n)
		if got != tc.want || (tc.want == 0) != (kmsCode(err) == KMSValidation) {
			t.Errorf("KeySpec %q NumberOfBytes %d = %d, %v", tc.spec, tc.n, got, err)
		}
	}
}

func TestKMSKeyStates(t *testing.T) {
	arn := KMSKeyARN("us-east-1", "123456789012", "1234abcd-12ab-34cd-56ef-1234567890ab")
	if KMSUsable(arn, KMSKeyEnabled) != nil || kmsCode(KMSUsable(arn, KMSKeyDisabled)) != KMSDisabled ||
		kmsCode(KMSUsable(arn, KMSKeyPendingDeletion)) != KMSInvalidState {
		t.Error("only an enabled key encrypts and decrypts")
	}
	if kmsCode(KMSAccessDeniedError("123456789012", "Decrypt", arn)) != KMSAccessDenied || kmsCode(KMSIncorrectKeyError()) != KMSIncorrectKey {
		t.Error("error shapes")
	}
}
