package engine

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/safefile"
)

// SecretDigest returns a SHA-256 digest of a stack's secret configuration
// value (present false when its stack file does not hold key), so the
// drift audit compares secrets across stacks without ever holding their
// values past this call. It decrypts the stack file's secure: value with
// the passphrase secrets provider's own scheme (the file's
// encryptionsalt), offline: no workspace, no backend, nothing written.
func (e *Engine) SecretDigest(ctx context.Context, stack, key string) (string, bool, error) {
	rel, err := e.stackFileOf(stack)
	if err != nil {
		return "", false, err
	}
	data, err := safefile.Read(filepath.Join(e.opts.Fleet.Dir, rel), 1<<20)
	if err != nil {
		return "", false, err
	}
	var file struct {
		Salt   string               `yaml:"encryptionsalt"`
		Config map[string]yaml.Node `yaml:"config"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		return "", false, fmt.Errorf("%s: %w", rel, err)
	}
	node, ok := file.Config[key]
	if !ok {
		return "", false, nil
	}
	var secure struct {
		Secure string `yaml:"secure"`
	}
	if node.Kind != yaml.MappingNode || node.Decode(&secure) != nil || secure.Secure == "" {
		return "", true, fmt.Errorf("%s: %s is not a secure: value", rel, key)
	}
	crypter, err := passphraseCrypter(e.passphrase, file.Salt)
	if err != nil {
		return "", true, fmt.Errorf("%s: %w", rel, err)
	}
	plain, err := crypter.DecryptValue(ctx, secure.Secure)
	if err != nil {
		return "", true, fmt.Errorf("%s: %s does not decrypt with this passphrase", rel, key)
	}
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:]), true, nil
}

// passphraseCrypter rebuilds the passphrase secrets provider's crypter
// from a stack file's encryptionsalt ("v1:<salt>:<encrypted check>"), as
// pulumi's pkg/secrets/passphrase does, and checks the passphrase with
// the encrypted check value.
func passphraseCrypter(phrase, state string) (config.Crypter, error) {
	if state == "" {
		return nil, errors.New("no encryptionsalt: the stack file holds no passphrase-encrypted values")
	}
	parts := strings.SplitN(state, ":", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return nil, errors.New("encryptionsalt is not a v1 passphrase salt")
	}
	salt, err := base64.StdEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("encryptionsalt: %w", err)
	}
	c := config.NewSymmetricCrypterFromPassphrase(phrase, salt)
	if check, err := c.DecryptValue(context.Background(), parts[2]); err != nil || check != "pulumi" {
		return nil, errors.New("the passphrase does not open this stack file (PULUMI_CONFIG_PASSPHRASE)")
	}
	return c, nil
}
