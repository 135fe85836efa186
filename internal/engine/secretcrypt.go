package engine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"gopkg.in/yaml.v3"
)

// Secrets are encrypted and decrypted here, in cellctl's own process, with
// the stack's secrets provider (secretsprovider.go: the same AES-256-GCM
// key pulumi derives from the passphrase and the stack's salt, or the data
// key the stack's KMS key decrypts), never by running
// `pulumi config set --secret -- <value>` or `pulumi config get`: the first
// puts the value in the child's argv (/proc/<pid>/cmdline, readable by any
// local user), the second in its stdout. The ciphertext written is the one
// pulumi itself would write, so the stock CLI reads it (`pulumi config get
// cells:originVerifySecret -s cell-a`).

// secretSig is the key pulumi marks a secret value with in a deployment
// (resource.SecretSig in the SDK's apitype).
const secretSig = "4dabf18193072939515e22adb298388d"

// crypter returns the passphrase crypter of a salt state
// ("v1:<base64 salt>:v1:<nonce>:<encrypted 'pulumi'>", as in the stack
// file's encryptionsalt and the checkpoint's secrets_providers.state.salt),
// checking the passphrase against it. Key derivation is slow (PBKDF2, a
// million rounds of SHA-256: about a quarter of a CPU-second), so within
// this process the key is kept, in memory only, by salt: states that
// share the salt (the fleet's stack files since fleetSalt, each with its
// own check value) derive it once; each check is still verified.
func (e *Engine) crypter(state string) (config.Crypter, error) {
	parts := strings.SplitN(state, ":", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return nil, errors.New("the encryption salt is not a pulumi passphrase salt (v1:…)")
	}
	salt, err := base64.StdEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("the encryption salt is malformed: %w", err)
	}
	cacheKey := PassphraseProvider + "\x00" + parts[1]
	e.crypterMu.Lock()
	defer e.crypterMu.Unlock()
	c, ok := e.crypters[cacheKey]
	if !ok {
		c = config.NewSymmetricCrypterFromPassphrase(e.passphrase, salt)
	}
	check, err := c.DecryptValue(context.Background(), parts[2])
	if err != nil || check != "pulumi" {
		return nil, errors.New("incorrect passphrase: PULUMI_CONFIG_PASSPHRASE does not decrypt this stack's secrets")
	}
	if e.crypters == nil {
		e.crypters = map[string]config.Crypter{}
	}
	e.crypters[cacheKey] = c
	return c, nil
}

// fleetSalt is the passphrase salt state a new stack of the fleet shares:
// that of the first other stack file, in the fleet's order, on the
// passphrase provider with a salt this passphrase opens; "" when none
// has one. One salt for the fleet's stack files is one key derivation
// per process for all of them — a command that reads every stack's
// secret (the gates' digests after a rotation, drift --skew) derived one
// per stack, about a quarter of a CPU-second each. The salt is no secret
// (it sits in every stack file beside the ciphertext); the passphrase is
// the fleet's already, so one key reads exactly what the per-stack keys
// did; and a fleet's few hundred AES-256-GCM values under one key with
// random nonces stay far below the limit of encryptions per key. pulumi
// keeps a salt its stack file already has when it creates the stack.
func (e *Engine) fleetSalt(except string) string {
	for _, n := range e.opts.Fleet.StackNames() {
		if n == except {
			continue
		}
		s, err := e.stackFileSecretsOf(n)
		if err != nil || !s.passphrase() || s.Salt == "" {
			continue
		}
		if _, err := e.crypter(s.Salt); err == nil {
			return s.Salt
		}
	}
	return ""
}

// shareFleetSalt gives the workspace copy of a stack file (path) the
// fleet's salt (fleetSalt) before the stack is created, when the file
// names no provider state and the backend does not hold the stack yet:
// `pulumi stack init` keeps it instead of making its own. A stack the
// backend holds, or one on a backend whose stacks cannot be told, keeps
// what it has (its state is encrypted with its own salt).
func (e *Engine) shareFleetSalt(ctx context.Context, stack, path string) error {
	bl, ok, err := e.blobs(ctx)
	if err != nil || !ok {
		return err
	}
	for _, k := range []string{e.stackKey(stack), e.stackKey(stack) + ".gz"} {
		if held, err := bl.exists(ctx, k); err != nil || held {
			return err
		}
	}
	doc, err := readStackDoc(path)
	if err != nil {
		return err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode || !fileSecrets(doc.Content[0]).empty() {
		return nil // an empty file: pulumi writes its own; a file with state keeps it
	}
	salt := e.fleetSalt(stack)
	if salt == "" {
		return nil
	}
	writeFileSecrets(doc.Content[0], secretsState{Provider: PassphraseProvider, Salt: salt})
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// newSalt makes a passphrase salt state the way pulumi's passphrase
// secrets manager does: 8 random bytes and "pulumi" encrypted with the key.
func (e *Engine) newSalt() (string, error) {
	salt := make([]byte, 8)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	check, err := config.NewSymmetricCrypterFromPassphrase(e.passphrase, salt).EncryptValue(context.Background(), "pulumi")
	if err != nil {
		return "", err
	}
	return "v1:" + base64.StdEncoding.EncodeToString(salt) + ":" + check, nil
}

// stackFileSecret decrypts config key from a stack file's contents; found
// is false when the file has no such key.
func (e *Engine) stackFileSecret(data []byte, key string) (value string, found bool, err error) {
	root, err := parseMapping(data)
	if err != nil || root == nil {
		return "", false, err
	}
	cfg := lookup(root, "config")
	if cfg == nil || cfg.Kind != yaml.MappingNode {
		return "", false, nil
	}
	v := lookup(cfg, key)
	if v == nil {
		return "", false, nil
	}
	secure := ""
	if v.Kind == yaml.MappingNode {
		if s := lookup(v, "secure"); s != nil && s.Kind == yaml.ScalarNode {
			secure = s.Value
		}
	}
	if secure == "" {
		return "", true, fmt.Errorf("config %s is not a secret (secure: …)", key)
	}
	st := fileSecrets(root)
	if st.empty() {
		return "", true, fmt.Errorf("config %s is encrypted but the file names no secrets provider state (encryptionsalt, or secretsprovider and encryptedkey)", key)
	}
	if !st.passphrase() {
		if err := CheckSecretsProvider(st.Provider); err != nil {
			return "", true, fmt.Errorf("secretsprovider: %w", err)
		}
	}
	c, err := e.crypterOf(context.Background(), st)
	if err != nil {
		return "", true, err
	}
	plain, err := c.DecryptValue(context.Background(), secure)
	if err != nil {
		return "", true, fmt.Errorf("config %s cannot be decrypted: %w", key, err)
	}
	return plain, true, nil
}

// setStackFileSecrets writes config keys as secrets into the stack file at
// path (a workspace copy of stack's file), encrypted with the file's
// provider state; a nil value removes the key. A file without one gets
// fallback's (the deployed state's: state and file share one provider and
// key), else a new state of the stack's provider (providerOf).
func (e *Engine) setStackFileSecrets(ctx context.Context, stack, path string, values map[string]*string, fallback secretsState) error {
	doc, err := readStackDoc(path)
	if err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: the document is a %s, not a mapping of keys", path, kindName(root.Kind))
	}
	st := fileSecrets(root)
	if st.empty() {
		switch {
		case !fallback.empty() && (st.Provider == "" || st.Provider == fallback.Provider):
			// Deployed: the file takes the state's provider and key.
			st = fallback
		default:
			provider := st.Provider
			if provider == "" {
				if provider, err = e.providerOf(stack); err != nil {
					return err
				}
			}
			if st, err = e.newSecretsState(ctx, provider); err != nil {
				return err
			}
		}
		writeFileSecrets(root, st)
	}
	c, err := e.crypterOf(ctx, st)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	cfg := mappingValue(root, "config", true)
	if cfg == nil {
		return fmt.Errorf("%s: config is not a mapping", path)
	}
	for key, v := range values {
		if v == nil {
			set(cfg, key, nil)
			continue
		}
		ct, err := c.EncryptValue(context.Background(), *v)
		if err != nil {
			return err
		}
		set(cfg, key, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "secure"},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: ct},
		}})
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// deployment is the part of a stack's deployed state the origin-verify
// secret is read from.
type deployment struct {
	SecretsProviders *stateSecretsProvider `json:"secrets_providers"`
	Resources        []struct {
		URN     string         `json:"urn"`
		ID      string         `json:"id"`
		Type    string         `json:"type"`
		Inputs  map[string]any `json:"inputs"`
		Outputs map[string]any `json:"outputs"`
	} `json:"resources"`
}

// decryptStateValue returns the plain string of a deployment value: a
// secret envelope is decrypted with the state's crypter (its ciphertext
// holds the value's JSON).
func decryptStateValue(c config.Crypter, v any) (string, error) {
	switch t := v.(type) {
	case string:
		return t, nil
	case map[string]any:
		if t[secretSig] == nil {
			break
		}
		ct, _ := t["ciphertext"].(string)
		if ct == "" {
			return "", errors.New("a secret in the state has no ciphertext")
		}
		if c == nil {
			return "", errors.New("the state holds secrets but names no secrets provider")
		}
		plain, err := c.DecryptValue(context.Background(), ct)
		if err != nil {
			return "", fmt.Errorf("decrypting a secret of the state: %w", err)
		}
		var s string
		if err := json.Unmarshal([]byte(plain), &s); err != nil {
			return "", errors.New("a secret of the state is not a string")
		}
		return s, nil
	}
	return "", fmt.Errorf("unexpected value %T in the state", v)
}
