package engine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/fleet"
)

// The origin-verify secret is the one value every cell and the router
// share: CloudFront sends it in X-Origin-Verify, every cell's ALB rule
// forwards only requests that carry it. A second value minted by a
// machine whose stack files lack the first (a fresh clone, uncommitted
// files) would make every cell refuse what CloudFront sends — a
// fleet-wide outage. So the fleet's value is recovered from what is
// deployed before anything is generated, and a new value is minted only
// for a fleet with nothing deployed.

// DeployedOrigin is what one deployed stack does with X-Origin-Verify, as
// recorded in its state: the values a cell's ALB rule accepts, or the
// value each of the router's CloudFront origins sends. Values are secrets:
// never print them.
type DeployedOrigin struct {
	Stack    string
	Deployed bool
	// Accepts are a cell's accepted values, in rule order.
	Accepts []string
	// Sends maps each CloudFront origin id to the value it sends: the
	// fleet origin (cellmodule.RouterOriginID), whose requests the edge
	// function sends to every routed cell, or — in a router deployed
	// before it — one origin per cell, named by the cell.
	Sends map[string]string
	// secrets is the state's secrets provider state.
	secrets secretsState
}

// Sent is the one value the router sends to every origin; ok is false when
// its origins disagree or there are none.
func (d *DeployedOrigin) Sent() (string, bool) {
	v, ok := "", false
	for _, s := range d.Sends {
		if ok && s != v {
			return "", false
		}
		v, ok = s, true
	}
	return v, ok
}

// DeployedOriginSecret reads the origin-verify values from a stack's
// deployed state, decrypting them with the state's own secrets manager.
// A stack never deployed returns Deployed false, not an error.
func (e *Engine) DeployedOriginSecret(ctx context.Context, stack string) (*DeployedOrigin, error) {
	out := &DeployedOrigin{Stack: stack}
	d, err := e.deployed(ctx, stack)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return out, nil
	}
	var c config.Crypter
	st, err := stateSecrets(d.SecretsProviders)
	if err != nil {
		return nil, fmt.Errorf("stack %s: %w", stack, err)
	}
	if !st.empty() {
		if c, err = e.crypterOf(ctx, st); err != nil {
			return nil, fmt.Errorf("stack %s: reading its state's secrets: %w", stack, err)
		}
		out.secrets = st
	}
	header := strings.ToLower(cellmodule.OriginVerifyHeader)
	for _, r := range d.Resources {
		props := r.Outputs
		if len(props) == 0 {
			props = r.Inputs
		}
		switch r.Type {
		case "aws:lb/listenerRule:ListenerRule", "aws:alb/listenerRule:ListenerRule":
			conds, _ := props["conditions"].([]any)
			for _, cv := range conds {
				cond, _ := cv.(map[string]any)
				hh, _ := cond["httpHeader"].(map[string]any)
				if name, _ := hh["httpHeaderName"].(string); strings.ToLower(name) != header {
					continue
				}
				out.Deployed = true
				vals, _ := hh["values"].([]any)
				for _, v := range vals {
					s, err := decryptStateValue(c, v)
					if err != nil {
						return nil, fmt.Errorf("stack %s: %s: %w", stack, urnTypeName(r.URN), err)
					}
					if !slices.Contains(out.Accepts, s) {
						out.Accepts = append(out.Accepts, s)
					}
				}
			}
		case "aws:cloudfront/distribution:Distribution":
			origins, _ := props["origins"].([]any)
			for _, ov := range origins {
				o, _ := ov.(map[string]any)
				id, _ := o["originId"].(string)
				headers, _ := o["customHeaders"].([]any)
				for _, hv := range headers {
					h, _ := hv.(map[string]any)
					if name, _ := h["name"].(string); strings.ToLower(name) != header {
						continue
					}
					s, err := decryptStateValue(c, h["value"])
					if err != nil {
						return nil, fmt.Errorf("stack %s: %s: %w", stack, urnTypeName(r.URN), err)
					}
					if out.Sends == nil {
						out.Sends = map[string]string{}
					}
					out.Sends[id] = s
					out.Deployed = true
				}
			}
		}
	}
	return out, nil
}

// deploymentOf returns a stack's latest deployment: read from the
// checkpoint on a file backend, else through `pulumi stack export` (which
// keeps secrets encrypted).
// deployed is a stack's deployed state, parsed: nil (and no error) when
// the stack was never deployed or holds nothing.
func (e *Engine) deployed(ctx context.Context, stack string) (*deployment, error) {
	raw, err := e.deploymentOf(ctx, stack)
	if errors.Is(err, ErrNotDeployed) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var d deployment
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("stack %s: reading its state: %w", stack, err)
	}
	return &d, nil
}

func (e *Engine) deploymentOf(ctx context.Context, stack string) (json.RawMessage, error) {
	bl, held, err := e.blobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("stack %s: reading its state: %w", stack, err)
	}
	if held {
		// One read, judged: a broken checkpoint names its copies.
		data, err := e.checkedRead(ctx, bl, stack)
		if err != nil {
			return nil, err
		}
		if data == nil {
			return nil, ErrNotDeployed
		}
		var cp struct {
			Checkpoint struct {
				Latest json.RawMessage `json:"latest"`
			} `json:"checkpoint"`
		}
		if err := json.Unmarshal(data, &cp); err != nil {
			return nil, fmt.Errorf("stack %s: reading its state: %w", stack, err)
		}
		return cp.Checkpoint.Latest, nil
	}
	w, err := e.open(ctx, stack, false, readOnly, nil)
	if err != nil {
		return nil, err
	}
	defer w.close()
	dep, err := w.stack.Export(ctx)
	if err != nil {
		return nil, fmt.Errorf("stack %s: exporting its state: %w", stack, cleanErr(err))
	}
	return dep.Deployment, nil
}

// StackSecret decrypts a secret config key from a stack's file in the
// repository; found is false when the file does not set it.
func (e *Engine) StackSecret(stack, key string) (value string, found bool, err error) {
	rel, err := e.stackFileOf(stack)
	if err != nil {
		return "", false, err
	}
	data, err := os.ReadFile(filepath.Join(e.opts.Fleet.Dir, rel))
	if err != nil {
		return "", false, err
	}
	v, found, err := e.stackFileSecret(data, key)
	if err != nil {
		return "", found, fmt.Errorf("%s: %w", rel, err)
	}
	return v, found, nil
}

// SetStackSecrets stores config keys as secrets in a stack's file
// (encrypted in this process, never passed to a child process); a nil
// value removes the key. Only those keys change in the repository's file.
// It returns the file when it changed.
func (e *Engine) SetStackSecrets(ctx context.Context, stack string, values map[string]*string) (string, error) {
	same := true
	for k, v := range values {
		cur, found, err := e.StackSecret(stack, k)
		if err != nil || found != (v != nil) || (v != nil && cur != *v) {
			same = false
			break
		}
	}
	if same {
		return "", nil
	}
	var fallback secretsState
	if d, err := e.DeployedOriginSecret(ctx, stack); err == nil {
		fallback = d.secrets
	}
	w, err := e.open(ctx, stack, true, readWrite, nil)
	if err != nil {
		return "", fmt.Errorf("stack %s: %w", stack, err)
	}
	defer w.close()
	if err := e.setStackFileSecrets(ctx, stack, w.stackFile, values, fallback); err != nil {
		return "", fmt.Errorf("stack %s: %w", stack, err)
	}
	if err := w.writeBack(); err != nil {
		return "", fmt.Errorf("stack %s: %w", stack, err)
	}
	rel, _ := e.stackFileOf(stack)
	return rel, nil
}

// originPlan is the origin-verify configuration each stack lacking it gets.
type originPlan struct {
	// values per stack: config key → value.
	values map[string]map[string]string
}

// resolveOrigin decides what each stack in missing gets, from the stack
// files that have the secret and from what is deployed:
//
//   - a deployed stack gets exactly what it runs (a cell its accepted
//     values, the router the value it sends), so nothing changes on the
//     next up;
//   - a stack not deployed gets the fleet's current value: what the
//     deployed router sends, else the router's or a cell's stack file,
//     else the one value every deployed cell accepts;
//   - only a fleet with nothing deployed and no value in any file gets a
//     new value.
//
// Anything ambiguous or unreadable is refused (fail closed) with the way
// to restore the files.
func (e *Engine) resolveOrigin(ctx context.Context, missing []string) (*originPlan, error) {
	f := e.opts.Fleet
	key := f.ConfigKey(fleet.OriginVerifyKey)
	nextKey := f.ConfigKey(fleet.OriginVerifyNextKey)
	deployed := map[string]*DeployedOrigin{}
	var readErrs []string
	for _, n := range f.StackNames() {
		d, err := e.DeployedOriginSecret(ctx, n)
		if err != nil {
			readErrs = append(readErrs, err.Error())
			continue
		}
		deployed[n] = d
	}
	if len(readErrs) > 0 {
		return nil, e.restoreError(missing, "cannot read the deployed state to recover it: "+strings.Join(readErrs, "; "))
	}
	current := ""
	if r := deployed[fleet.RouterStack]; r != nil && r.Deployed {
		v, ok := r.Sent()
		if !ok {
			return nil, e.restoreError(missing, "the deployed router's CloudFront origins send different X-Origin-Verify values")
		}
		current = v
	}
	if current == "" {
		// A stack file that has it: the router's first, then the cells'.
		for _, n := range append([]string{fleet.RouterStack}, f.CellIDs()...) {
			if slices.Contains(missing, n) || (n == fleet.RouterStack && f.Router == nil) {
				continue
			}
			v, found, err := e.StackSecret(n, key)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", key, err)
			}
			if found {
				current = v
				break
			}
		}
	}
	if current == "" {
		// Only cells are deployed: the value all of them accept.
		var common []string
		first := true
		for _, id := range f.CellIDs() {
			d := deployed[id]
			if d == nil || !d.Deployed {
				continue
			}
			if first {
				common, first = append([]string(nil), d.Accepts...), false
				continue
			}
			common = slices.DeleteFunc(common, func(v string) bool { return !slices.Contains(d.Accepts, v) })
		}
		switch {
		case !first && len(common) == 1:
			current = common[0]
		case !first:
			return nil, e.restoreError(missing, fmt.Sprintf("the deployed cells do not agree on one accepted value (%d in common)", len(common)))
		}
	}
	anyDeployed := false
	for _, d := range deployed {
		anyDeployed = anyDeployed || d.Deployed
	}
	if current == "" {
		if anyDeployed {
			return nil, e.restoreError(missing, "stacks are deployed but none records the value")
		}
		buf := make([]byte, 32)
		if _, err := rand.Read(buf); err != nil {
			return nil, err
		}
		current = base64.RawURLEncoding.EncodeToString(buf)
	}
	p := &originPlan{values: map[string]map[string]string{}}
	for _, n := range missing {
		vals := map[string]string{key: current}
		if d := deployed[n]; d != nil && d.Deployed {
			if n == fleet.RouterStack {
				vals[key], _ = d.Sent()
			} else {
				switch len(d.Accepts) {
				case 1:
					vals[key] = d.Accepts[0]
				case 2:
					// Mid-rotation: keep both, the router's value first.
					a, b := d.Accepts[0], d.Accepts[1]
					if b == current {
						a, b = b, a
					}
					vals[key], vals[nextKey] = a, b
				default:
					return nil, e.restoreError(missing, fmt.Sprintf("%s's deployed ALB rule accepts %d values", n, len(d.Accepts)))
				}
			}
		}
		p.values[n] = vals
	}
	return p, nil
}

// restoreError refuses to mint a second secret, saying how to restore it.
func (e *Engine) restoreError(missing []string, why string) error {
	f := e.opts.Fleet
	key := f.ConfigKey(fleet.OriginVerifyKey)
	var files []string
	for _, n := range missing {
		if rel, err := e.stackFileOf(n); err == nil {
			files = append(files, rel)
		}
	}
	sort.Strings(files)
	return fmt.Errorf("%s is missing from %s and %s; cellctl never mints a second value while stacks are deployed "+
		"(every cell would refuse what CloudFront sends). Nothing was changed. Restore the files from the machine or commit that "+
		"deployed them (`git checkout -- %s`), or set the fleet's value from a file that holds it, without it appearing on a "+
		"command line: `pulumi config set --secret %s --stack <stack> < value-file` for each of them",
		key, strings.Join(files, ", "), why, strings.Join(files, " "), key)
}

// EnsureOriginVerifySecret gives every named stack the fleet's
// origin-verify secret, stored encrypted (secure:) in its stack file — a
// deployed stack exactly what it runs, any other the fleet's current
// value (see resolveOrigin). It returns the stack files it changed, which
// the operator should commit.
func (e *Engine) EnsureOriginVerifySecret(ctx context.Context, names []string) ([]string, error) {
	missing, err := e.lackingOrigin(names)
	if err != nil || len(missing) == 0 {
		return nil, err
	}
	// Two operators running their first `up` at once must not mint two
	// different secrets.
	unlock, err := lockFile(filepath.Join(e.opts.Fleet.Dir, StateDir, "secret.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Another process may have stored it while this one waited.
	if missing, err = e.lackingOrigin(names); err != nil || len(missing) == 0 {
		return nil, err
	}
	p, err := e.resolveOrigin(ctx, missing)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, n := range missing {
		values := map[string]*string{}
		for k, v := range p.values[n] {
			values[k] = &v
		}
		rel, err := e.SetStackSecrets(ctx, n, values)
		if err != nil {
			return changed, err
		}
		if rel != "" {
			changed = append(changed, rel)
		}
	}
	return changed, nil
}

// lackingOrigin lists the named stacks whose file has no origin-verify
// secret now (the file is read again: the fleet was loaded earlier).
func (e *Engine) lackingOrigin(names []string) ([]string, error) {
	key := e.opts.Fleet.ConfigKey(fleet.OriginVerifyKey)
	var missing []string
	for _, n := range names {
		found, err := e.stackHas(n, key)
		if err != nil {
			return nil, err
		}
		if !found {
			missing = append(missing, n)
		}
	}
	return missing, nil
}

// stackHas reports whether a stack's file sets config key (without
// decrypting it: deriving a passphrase key costs a third of a second).
func (e *Engine) stackHas(stack, key string) (bool, error) {
	rel, err := e.stackFileOf(stack)
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile(filepath.Join(e.opts.Fleet.Dir, rel))
	if err != nil {
		return false, err
	}
	return fileHasConfig(data, key)
}

func fileHasConfig(data []byte, key string) (bool, error) {
	root, err := parseMapping(data)
	if err != nil || root == nil {
		return false, err
	}
	cfg := lookup(root, "config")
	return cfg != nil && cfg.Kind == yaml.MappingNode && lookup(cfg, key) != nil, nil
}

// previewSecret gives a preview's workspace the origin-verify secret when
// the stack file has none, without writing any stack file (a preview
// changes nothing): the same value an up would store (see resolveOrigin),
// written encrypted into the workspace copy only.
func (e *Engine) previewSecret(ctx context.Context, w *workspace, stack string) error {
	key := e.opts.Fleet.ConfigKey(fleet.OriginVerifyKey)
	data, err := os.ReadFile(w.stackFile)
	if err != nil {
		return err
	}
	if found, err := fileHasConfig(data, key); err != nil || found {
		return err
	}
	e.previewMu.Lock()
	if e.previewPlan == nil {
		var missing []string
		for _, n := range e.opts.Fleet.StackNames() {
			if found, err := e.stackHas(n, key); err == nil && !found {
				missing = append(missing, n)
			}
		}
		p, err := e.resolveOrigin(ctx, missing)
		if err != nil {
			e.previewMu.Unlock()
			return err
		}
		e.previewPlan = p
	}
	vals := e.previewPlan.values[stack]
	e.previewMu.Unlock()
	if vals == nil {
		return fmt.Errorf("stack %s: no origin-verify secret for the preview", stack)
	}
	values := map[string]*string{}
	for k, v := range vals {
		values[k] = &v
	}
	var fallback secretsState
	if d, err := e.DeployedOriginSecret(ctx, stack); err == nil {
		fallback = d.secrets
	}
	if err := e.setStackFileSecrets(ctx, stack, w.stackFile, values, fallback); err != nil {
		return fmt.Errorf("stack %s: %s for the preview: %w", stack, key, err)
	}
	return nil
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
