package awsapi

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/smithy-go"
	"gocloud.dev/gcerrors"
	"gocloud.dev/secrets/awskms"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/store"
)

func kmsClient(t *testing.T, c *store.Cloud, region string) *kms.Client {
	t.Helper()
	endpoint, stop, err := Serve(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return kms.New(kms.Options{Region: region, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("ASIACELLCTLSIMULATED", "cellctl-simulated-aws-not-a-secret", "")})
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// The gocloud awskms keeper (what `secretsprovider: awskms://…` runs, in
// cellctl and in the pulumi CLI) encrypts and decrypts through the
// simulator's KMS API with the real SDK, by alias, key id or ARN; a
// disabled key, a denied caller, the wrong key and a changed encryption
// context fail with AWS's error shapes.
func TestKMSThroughTheSDK(t *testing.T) {
	c, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key, err := c.CreateKMSKey("us-east-1", "cells", "fleet secrets")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateKMSKey("us-east-1", "alias/cells", ""); err == nil {
		t.Fatal("an alias names one key")
	}
	other, _ := c.CreateKMSKey("us-east-1", "other", "")
	client := kmsClient(t, c, "us-east-1")
	ctx := context.Background()

	keeper := awskms.OpenKeeper(client, "alias/cells", &awskms.KeeperOptions{EncryptionContext: map[string]string{"fleet": "cells"}})
	defer keeper.Close()
	blob, err := keeper.Encrypt(ctx, []byte("data key"))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := keeper.Decrypt(ctx, blob); err != nil || string(plain) != "data key" {
		t.Fatalf("decrypt = %q, %v", plain, err)
	}
	for _, ref := range []string{key.ID, key.ARN} {
		if out, err := client.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: blob, KeyId: aws.String(ref), EncryptionContext: map[string]string{"fleet": "cells"}}); err != nil || string(out.Plaintext) != "data key" || *out.KeyId != key.ARN {
			t.Fatalf("decrypt naming %s: %v", ref, err)
		}
	}
	dk, err := client.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String("alias/cells"), KeySpec: "AES_256"})
	if err != nil || len(dk.Plaintext) != 32 {
		t.Fatalf("GenerateDataKey: %v", err)
	}
	if out, err := client.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: dk.CiphertextBlob}); err != nil || string(out.Plaintext) != string(dk.Plaintext) {
		t.Fatalf("the data key does not decrypt: %v", err)
	}
	if d, err := client.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String("alias/cells")}); err != nil || *d.KeyMetadata.Arn != key.ARN || !d.KeyMetadata.Enabled {
		t.Fatalf("DescribeKey: %+v %v", d, err)
	}

	_, err = client.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: blob, KeyId: aws.String(other.ARN), EncryptionContext: map[string]string{"fleet": "cells"}})
	if apiCode(err) != awsmodel.KMSIncorrectKey {
		t.Errorf("the wrong key: %v", err)
	}
	if _, err := client.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: blob}); apiCode(err) != awsmodel.KMSInvalidCiphertext {
		t.Errorf("another encryption context: %v", err)
	}
	if _, err := client.Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String("alias/none"), Plaintext: []byte("x")}); apiCode(err) != awsmodel.KMSNotFound {
		t.Errorf("an unknown alias: %v", err)
	}
	if _, err := kmsClient(t, c, "eu-west-1").Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String("alias/cells"), Plaintext: []byte("x")}); apiCode(err) != awsmodel.KMSNotFound {
		t.Errorf("keys are regional: %v", err)
	}

	if _, err := c.SetKMSKey("us-east-1", "alias/cells", "disable"); err != nil {
		t.Fatal(err)
	}
	_, err = keeper.Decrypt(ctx, blob)
	if apiCode(err) != awsmodel.KMSDisabled || gcerrors.Code(err) != gcerrors.PermissionDenied {
		t.Errorf("a disabled key: %v", err)
	}
	c.SetKMSKey("us-east-1", key.ID, "enable")
	c.SetKMSKey("us-east-1", key.ARN, "deny")
	if _, err := keeper.Encrypt(ctx, []byte("x")); apiCode(err) != awsmodel.KMSAccessDenied {
		t.Errorf("a denied caller: %v", err)
	}
	c.SetKMSKey("us-east-1", key.ARN, "allow")
	if _, err := keeper.Decrypt(ctx, blob); err != nil {
		t.Errorf("allowed again: %v", err)
	}
	if keys, _ := c.KMSKeys(); len(keys) != 2 || keys[0].Aliases == nil && keys[1].Aliases == nil {
		t.Errorf("keys = %+v", keys)
	}
}
