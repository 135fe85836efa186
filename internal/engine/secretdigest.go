package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/cellctl/cellctl/internal/safefile"
)

// SecretDigest returns a SHA-256 digest of a stack's secret configuration
// value (present false when its stack file does not hold key), so the
// drift audit compares secrets across stacks without ever holding their
// values past this call. It decrypts the stack file's secure: value with
// the same crypter as the secret's own write path (stackFileSecret),
// offline: no workspace, no backend, nothing written.
func (e *Engine) SecretDigest(ctx context.Context, stack, key string) (string, bool, error) {
	rel, err := e.stackFileOf(stack)
	if err != nil {
		return "", false, err
	}
	data, err := safefile.Read(filepath.Join(e.opts.Fleet.Dir, rel), 1<<20)
	if err != nil {
		return "", false, err
	}
	plain, found, err := e.stackFileSecret(data, key)
	if err != nil {
		return "", found, fmt.Errorf("%s: %w", rel, err)
	}
	if !found {
		return "", false, nil
	}
	return OriginDigest(plain), true, nil
}

// OriginDigest is the one digest of a secret value (SHA-256, hex) that
// cellctl compares and records: SecretDigest's of a stack file, and a
// rotation record's (executor.OriginDigests), so what a checkout is about
// to ship is compared with what the backend says was shipped without the
// value leaving the process. The fleet's values are 32 random bytes:
// their digest tells nothing about them.
func OriginDigest(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}
