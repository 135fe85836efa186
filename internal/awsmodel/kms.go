package awsmodel

import (
	"fmt"
	"regexp"
	"strings"
)

// AWS KMS, as the simulator's KMS API answers it for the secrets
// providers (gocloud.dev/secrets/awskms, which the pulumi CLI and cellctl
// both use for `secretsprovider: awskms://…`): Encrypt, Decrypt,
// GenerateDataKey and DescribeKey on symmetric encryption keys. Sources:
// the AWS KMS API Reference pages of those operations (parameters, length
// constraints, errors) and the KMS Developer Guide ("Key identifiers
// (KeyId)", "Key states of AWS KMS keys", "Troubleshooting key access").
// Every KMS error is HTTP 400 with the error shape's name as __type
// (AWS JSON 1.1, X-Amz-Target: TrentService.<Op>).

// KMS error shapes (API Reference, "Errors" of each operation).
const (
	KMSNotFound          = "NotFoundException"
	KMSDisabled          = "DisabledException"
	KMSAccessDenied      = "AccessDeniedException"
	KMSIncorrectKey      = "IncorrectKeyException"
	KMSInvalidCiphertext = "InvalidCiphertextException"
	KMSInvalidState      = "KMSInvalidStateException"
	KMSValidation        = "ValidationException"
)

// KMSError is a KMS API error: the shape and AWS's message.
type KMSError struct {
	Code    string
	Message string
}

func (e *KMSError) Error() string { return e.Code + ": " + e.Message }

// KMSKeyRef is a KeyId parameter as KMS reads it. "To specify a KMS key,
// use its key ID, key ARN, alias name, or alias ARN. When using an alias
// name, prefix it with "alias/"" (Encrypt, KeyId); an ARN names its
// region and account, a key id or alias name the caller's.
type KMSKeyRef struct {
	// Alias is the alias name ("alias/cells"), or "" for a key.
	Alias string
	// KeyID is the key id (a UUID), or "" for an alias.
	KeyID string
	// Region and Account are the ARN's, or the caller's.
	Region, Account string
}

var (
	kmsKeyID    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	kmsAliasRe  = regexp.MustCompile(`^alias/[a-zA-Z0-9/_-]{1,250}$`)
	kmsARNParts = regexp.MustCompile(`^arn:aws[a-z-]*:kms:([a-z0-9-]+):(\d{12}):(key/.+|alias/.+)$`)
)

// ParseKMSKeyRef reads a KeyId (1 to 2048 characters, API Reference) in
// the caller's region and account. A malformed one is NotFoundException
// ("Invalid keyId"), as KMS answers it; an alias name must start with
// "alias/", and the aws/ prefix is reserved for AWS managed keys
// (Developer Guide, "Aliases in AWS KMS").
func ParseKMSKeyRef(ref, region, account string) (KMSKeyRef, error) {
	if ref == "" || len(ref) > 2048 {
		return KMSKeyRef{}, &KMSError{KMSValidation, "1 validation error detected: Value at 'keyId' failed to satisfy constraint: Member must have length between 1 and 2048"}
	}
	out := KMSKeyRef{Region: region, Account: account}
	rest := ref
	if m := kmsARNParts.FindStringSubmatch(ref); m != nil {
		out.Region, out.Account, rest = m[1], m[2], m[3]
	} else if strings.HasPrefix(ref, "arn:") {
		return KMSKeyRef{}, &KMSError{KMSNotFound, fmt.Sprintf("Invalid arn %s", ref)}
	}
	switch {
	case strings.HasPrefix(rest, "alias/"):
		if !kmsAliasRe.MatchString(rest) {
			return KMSKeyRef{}, &KMSError{KMSNotFound, fmt.Sprintf("Alias %s is not found.", KMSAliasARN(out.Region, out.Account, rest))}
		}
		out.Alias = rest
	case strings.HasPrefix(rest, "key/"):
		out.KeyID = strings.TrimPrefix(rest, "key/")
		if !kmsKeyID.MatchString(out.KeyID) {
			return KMSKeyRef{}, &KMSError{KMSNotFound, fmt.Sprintf("Invalid keyId %s", ref)}
		}
	default:
		if !kmsKeyID.MatchString(rest) {
			return KMSKeyRef{}, &KMSError{KMSNotFound, fmt.Sprintf("Invalid keyId %s", ref)}
		}
		out.KeyID = rest
	}
	return out, nil
}

// CheckKMSAliasName checks an alias a caller creates: "alias/" then 1 to
// 250 letters, digits, slashes, underscores or dashes; "alias/aws/" is
// reserved for AWS managed keys (CreateAlias, AliasName).
func CheckKMSAliasName(name string) error {
	if !kmsAliasRe.MatchString(name) {
		return &KMSError{KMSValidation, fmt.Sprintf("Alias %s must begin with alias/ and contain only alphanumeric characters, forward slashes (/), underscores (_), and dashes (-), at most 256 characters", name)}
	}
	if strings.HasPrefix(name, "alias/aws/") {
		return &KMSError{"NotAuthorizedException", "Cannot create alias with prefix 'alias/aws/'"}
	}
	return nil
}

// KMSKeyARN is a key's ARN.
func KMSKeyARN(region, account, keyID string) string {
	return fmt.Sprintf("arn:aws:kms:%s:%s:key/%s", region, account, keyID)
}

// KMSAliasARN is an alias's ARN.
func KMSAliasARN(region, account, alias string) string {
	return fmt.Sprintf("arn:aws:kms:%s:%s:%s", region, account, alias)
}

// CheckKMSPlaintext checks Encrypt's Plaintext: "Encrypts plaintext of up
// to 4,096 bytes" (Length Constraints: Minimum length of 1. Maximum
// length of 4096).
func CheckKMSPlaintext(n int) error {
	if n < 1 || n > 4096 {
		return &KMSError{KMSValidation, "1 validation error detected: Value at 'plaintext' failed to satisfy constraint: Member must have length between 1 and 4096"}
	}
	return nil
}

// KMSDataKeyBytes is the length of the data key GenerateDataKey returns:
// "You must specify either the KeySpec or the NumberOfBytes parameter (but
// not both)"; KeySpec AES_256 (32 bytes) or AES_128 (16); NumberOfBytes
// Valid Range 1 to 1024.
func KMSDataKeyBytes(keySpec string, numberOfBytes int) (int, error) {
	switch {
	case keySpec != "" && numberOfBytes != 0:
		return 0, &KMSError{KMSValidation, "Please specify either number of bytes or key spec."}
	case keySpec == "AES_256":
		return 32, nil
	case keySpec == "AES_128":
		return 16, nil
	case keySpec != "":
		return 0, &KMSError{KMSValidation, fmt.Sprintf("1 validation error detected: Value '%s' at 'keySpec' failed to satisfy constraint: Member must satisfy enum value set: [AES_256, AES_128]", keySpec)}
	case numberOfBytes < 1 || numberOfBytes > 1024:
		if numberOfBytes == 0 {
			return 0, &KMSError{KMSValidation, "Please specify either number of bytes or key spec."}
		}
		return 0, &KMSError{KMSValidation, fmt.Sprintf("1 validation error detected: Value '%d' at 'numberOfBytes' failed to satisfy constraint: Member must have value less than or equal to 1024 and greater than or equal to 1", numberOfBytes)}
	}
	return numberOfBytes, nil
}

// KMS key states (Developer Guide, "Key states of AWS KMS keys").
const (
	KMSKeyEnabled         = "Enabled"
	KMSKeyDisabled        = "Disabled"
	KMSKeyPendingDeletion = "PendingDeletion"
)

// KMSUsable says whether a key in state may encrypt or decrypt: a
// disabled key is DisabledException ("The request was rejected because
// the specified KMS key is not enabled"), a key pending deletion
// KMSInvalidStateException; DescribeKey answers in every state.
func KMSUsable(arn, state string) error {
	switch state {
	case KMSKeyEnabled:
		return nil
	case KMSKeyDisabled:
		return &KMSError{KMSDisabled, arn + " is disabled."}
	case KMSKeyPendingDeletion:
		return &KMSError{KMSInvalidState, arn + " is pending deletion."}
	}
	return &KMSError{KMSInvalidState, fmt.Sprintf("%s is %s.", arn, state)}
}

// KMSAccessDeniedError is what KMS answers a caller the key policy does not
// allow (Developer Guide, "Troubleshooting key access").
func KMSAccessDeniedError(account, op, arn string) error {
	return &KMSError{KMSAccessDenied, fmt.Sprintf("User: arn:aws:sts::%s:assumed-role/cellctl-simulated is not authorized to perform: kms:%s on resource: %s because no resource-based policy allows the kms:%s action", account, op, arn, op)}
}

// KMSIncorrectKeyError is Decrypt naming a KeyId that did not encrypt the
// ciphertext: "The KeyId in a Decrypt request … must identify the same
// KMS key that was used to encrypt the ciphertext."
func KMSIncorrectKeyError() error {
	return &KMSError{KMSIncorrectKey, "The key ID in the request does not identify a CMK that can perform this operation."}
}

// KMSInvalidCiphertextError is a ciphertext KMS cannot decrypt: corrupted,
// from another account or region, or with a different encryption context
// ("you must specify the same encryption context (a case-sensitive exact
// match) when decrypting the data. Otherwise, the request to decrypt
// fails with an InvalidCiphertextException", Encrypt).
func KMSInvalidCiphertextError() error {
	return &KMSError{KMSInvalidCiphertext, ""}
}
