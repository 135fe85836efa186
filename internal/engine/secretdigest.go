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
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:]), true, nil
}
