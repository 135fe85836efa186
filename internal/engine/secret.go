package engine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"

	"github.com/cellctl/cellctl/internal/fleet"
)

// EnsureOriginVerifySecret gives every named stack the fleet's origin-verify
// secret — the value CloudFront sends in X-Origin-Verify and every cell's
// ALB requires. It is generated once for the fleet and stored encrypted
// (secure:) in each stack file, like `pulumi config set --secret` does;
// cellctl copies it between stacks, never printing it. It returns the
// stack files it changed, which the operator should commit.
func (e *Engine) EnsureOriginVerifySecret(ctx context.Context, names []string) ([]string, error) {
	f := e.opts.Fleet
	key := f.ConfigKey(fleet.OriginVerifyKey)
	has := map[string]bool{}
	for _, c := range f.Cells {
		has[c.ID] = c.HasOriginVerifySecret
	}
	if f.Router != nil {
		has[fleet.RouterStack] = f.Router.HasOriginVerifySecret
	}
	var missing []string
	for _, n := range names {
		if !has[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	// Two operators running their first `up` at once must not mint two
	// different secrets.
	unlock, err := lockFile(filepath.Join(f.Dir, StateDir, "secret.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()

	var value string
	for _, n := range f.StackNames() {
		if !has[n] {
			continue
		}
		v, err := e.readSecret(ctx, n, key)
		if err != nil {
			return nil, fmt.Errorf("reading %s from stack %s: %w", key, n, err)
		}
		value = v
		break
	}
	if value == "" {
		buf := make([]byte, 32)
		if _, err := rand.Read(buf); err != nil {
			return nil, err
		}
		value = base64.RawURLEncoding.EncodeToString(buf)
	}
	var changed []string
	for _, n := range missing {
		w, err := e.open(ctx, n, true, readWrite, nil)
		if err != nil {
			return changed, fmt.Errorf("stack %s: %w", n, err)
		}
		err = w.stack.SetConfig(ctx, key, auto.ConfigValue{Value: value, Secret: true})
		if err == nil {
			err = w.writeBack()
		}
		w.close()
		if err != nil {
			return changed, fmt.Errorf("stack %s: storing %s: %w", n, key, cleanErr(err))
		}
		rel, _ := e.stackFileOf(n)
		changed = append(changed, rel)
	}
	return changed, nil
}

// previewSecret gives a preview's workspace the origin-verify secret when
// the stack file has none yet, without writing any stack file (a preview
// changes nothing): the fleet's value from a stack that has it, else a
// value minted for this process only (an up stores the real one).
func (e *Engine) previewSecret(ctx context.Context, w *workspace, stack string) error {
	f := e.opts.Fleet
	has := false
	if c := f.Cell(stack); c != nil {
		has = c.HasOriginVerifySecret
	} else if stack == fleet.RouterStack && f.Router != nil {
		has = f.Router.HasOriginVerifySecret
	}
	key := f.ConfigKey(fleet.OriginVerifyKey)
	if has {
		return nil
	}
	if _, err := w.stack.GetConfig(ctx, key); err == nil {
		return nil // set in the file since the fleet was loaded
	}
	e.previewMu.Lock()
	if e.previewValue == "" {
		for _, c := range f.Cells {
			if c.HasOriginVerifySecret {
				if v, err := e.readSecret(ctx, c.ID, key); err == nil {
					e.previewValue = v
					break
				}
			}
		}
	}
	if e.previewValue == "" {
		buf := make([]byte, 32)
		if _, err := rand.Read(buf); err != nil {
			e.previewMu.Unlock()
			return err
		}
		e.previewValue = base64.RawURLEncoding.EncodeToString(buf)
	}
	value := e.previewValue
	e.previewMu.Unlock()
	if err := w.stack.SetConfig(ctx, key, auto.ConfigValue{Value: value, Secret: true}); err != nil {
		return fmt.Errorf("stack %s: %s for the preview: %w", stack, key, cleanErr(err))
	}
	return nil
}

func (e *Engine) readSecret(ctx context.Context, stack, key string) (string, error) {
	w, err := e.open(ctx, stack, true, readOnly, nil)
	if err != nil {
		return "", err
	}
	defer w.close()
	v, err := w.stack.GetConfig(ctx, key)
	if err != nil {
		return "", cleanErr(err)
	}
	return v.Value, nil
}

// lockFile takes an exclusive advisory lock, released by the returned func.
func lockFile(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
