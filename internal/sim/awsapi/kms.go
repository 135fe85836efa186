package awsapi

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// The simulator's KMS API: AWS KMS's JSON 1.1 protocol (X-Amz-Target:
// TrentService.<Op>) over the account's keys (kms.go in the store), for
// the secrets providers that name `awskms://…` (gocloud.dev/secrets/awskms,
// in cellctl and in the pulumi CLI alike). Encrypt, Decrypt,
// GenerateDataKey and DescribeKey are answered with AWS's shapes and
// errors (internal/awsmodel/kms.go).

const kmsTarget = "TrentService."

func (h *apiHandler) serveKMS(w http.ResponseWriter, op string, body []byte, region string) {
	var in struct {
		KeyID             string            `json:"KeyId"`
		Plaintext         []byte            `json:"Plaintext"`
		CiphertextBlob    []byte            `json:"CiphertextBlob"`
		EncryptionContext map[string]string `json:"EncryptionContext"`
		KeySpec           string            `json:"KeySpec"`
		NumberOfBytes     int               `json:"NumberOfBytes"`
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			h.fail(w, false, &apiError{400, "SerializationException", "SerializationException", "request body is not JSON: " + err.Error()})
			return
		}
	}
	var out any
	err := h.c.WithKMS(false, func(st *store.State, k *store.KMSState) error {
		account := st.AccountID()
		usable := func(ref, verb string) (*store.KMSKeyRecord, error) {
			key, err := k.Resolve(ref, region, account)
			if err != nil {
				return nil, err
			}
			if key.Denied {
				return nil, awsmodel.KMSAccessDeniedError(account, verb, key.ARN)
			}
			return key, awsmodel.KMSUsable(key.ARN, key.State)
		}
		switch op {
		case "DescribeKey":
			key, err := k.Resolve(in.KeyID, region, account)
			if err != nil {
				return err
			}
			if key.Denied {
				return awsmodel.KMSAccessDeniedError(account, op, key.ARN)
			}
			out = map[string]any{"KeyMetadata": map[string]any{
				"AWSAccountId": key.Account, "KeyId": key.ID, "Arn": key.ARN, "CreationDate": float64(key.Created.Unix()),
				"Enabled": key.State == awsmodel.KMSKeyEnabled, "Description": key.Description, "KeyUsage": "ENCRYPT_DECRYPT",
				"KeyState": key.State, "Origin": "AWS_KMS", "KeyManager": "CUSTOMER", "KeySpec": "SYMMETRIC_DEFAULT",
				"CustomerMasterKeySpec": "SYMMETRIC_DEFAULT", "EncryptionAlgorithms": []string{"SYMMETRIC_DEFAULT"}, "MultiRegion": false,
			}}
		case "Encrypt":
			key, err := usable(in.KeyID, op)
			if err != nil {
				return err
			}
			if err := awsmodel.CheckKMSPlaintext(len(in.Plaintext)); err != nil {
				return err
			}
			blob, err := h.c.KMSEncrypt(key, in.Plaintext, in.EncryptionContext)
			if err != nil {
				return err
			}
			out = map[string]any{"CiphertextBlob": blob, "KeyId": key.ARN, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"}
		case "GenerateDataKey":
			key, err := usable(in.KeyID, op)
			if err != nil {
				return err
			}
			n, err := awsmodel.KMSDataKeyBytes(in.KeySpec, in.NumberOfBytes)
			if err != nil {
				return err
			}
			plain := make([]byte, n)
			if _, err := rand.Read(plain); err != nil {
				return err
			}
			blob, err := h.c.KMSEncrypt(key, plain, in.EncryptionContext)
			if err != nil {
				return err
			}
			out = map[string]any{"CiphertextBlob": blob, "Plaintext": plain, "KeyId": key.ARN}
		case "Decrypt":
			if len(in.CiphertextBlob) == 0 {
				return &awsmodel.KMSError{Code: awsmodel.KMSValidation, Message: "1 validation error detected: Value at 'ciphertextBlob' failed to satisfy constraint: Member must have length greater than or equal to 1"}
			}
			arn, rest, ok := store.BlobKey(in.CiphertextBlob)
			if !ok {
				return awsmodel.KMSInvalidCiphertextError()
			}
			key := k.Keys[arn]
			if key == nil || key.Account != account {
				return awsmodel.KMSInvalidCiphertextError()
			}
			if in.KeyID != "" {
				named, err := k.Resolve(in.KeyID, region, account)
				if err != nil {
					return err
				}
				if named.ARN != key.ARN {
					return awsmodel.KMSIncorrectKeyError()
				}
			}
			if key.Denied {
				return awsmodel.KMSAccessDeniedError(account, op, key.ARN)
			}
			if err := awsmodel.KMSUsable(key.ARN, key.State); err != nil {
				return err
			}
			aead, err := h.c.KMSKeyAEAD(key)
			if err != nil {
				return err
			}
			if len(rest) < aead.NonceSize() {
				return awsmodel.KMSInvalidCiphertextError()
			}
			plain, err := aead.Open(nil, rest[:aead.NonceSize()], rest[aead.NonceSize():], store.KMSAAD(in.EncryptionContext))
			if err != nil {
				return awsmodel.KMSInvalidCiphertextError()
			}
			out = map[string]any{"Plaintext": plain, "KeyId": key.ARN, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"}
		default:
			return &apiError{400, "UnknownOperationException", "UnknownOperation", "the simulator serves KMS Encrypt, Decrypt, GenerateDataKey and DescribeKey only, not " + op}
		}
		return nil
	})
	if err != nil {
		var ke *awsmodel.KMSError
		var ae *apiError
		switch {
		case errors.As(err, &ke):
			h.fail(w, false, &apiError{400, ke.Code, ke.Code, ke.Message})
		case errors.As(err, &ae):
			h.fail(w, false, ae)
		default:
			h.fail(w, false, internal(err))
		}
		return
	}
	b, _ := json.Marshal(out) // []byte fields encode as base64, as JSON 1.1 blobs
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Write(b)
}
