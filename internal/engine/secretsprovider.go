package engine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/secrets"
	"gocloud.dev/secrets/awskms"
	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/safefile"
)

// Secrets providers. A stack's secrets (its stack file's secure: values
// and its state's secrets) are encrypted by the provider its stack file
// names, as pulumi reads it:
//
//   - passphrase (the default): `encryptionsalt: v1:…`, a key derived from
//     PULUMI_CONFIG_PASSPHRASE (or _FILE) and the salt;
//   - a key management service, named by URL (`secretsprovider:
//     awskms://alias/cells?region=us-east-1`, gcpkms://, azurekeyvault://,
//     hashivault://): `encryptedkey:` holds a random 32-byte data key
//     encrypted by the service, and values are AES-256-GCM under the data
//     key (pulumi's pkg/secrets/cloud, with gocloud.dev/secrets).
//
// The engine (the pulumi CLI child) and cellctl's own secure: writes and
// reads (the origin-verify secret: recovery, rotation, drift's digest)
// use the same provider, state and ciphertext format, so either reads
// what the other wrote. A stack file that names no provider gets the
// fleet's: --secrets-provider when given, else the one every other stack
// file of the fleet names, else the passphrase. Nothing falls back
// silently to a passphrase: a fleet whose stack files name a KMS key
// never needs one, and a stack file naming one provider is never
// re-encrypted with another.

// PassphraseProvider is the passphrase secrets provider's name.
const PassphraseProvider = "passphrase"

// secretsState is how a stack's secrets are encrypted: its provider and
// the provider's state (the salt, or the encrypted data key).
type secretsState struct {
	// Provider is PassphraseProvider or a key management service URL.
	Provider string
	// Salt is the passphrase provider's "v1:<salt>:<check>".
	Salt string
	// EncryptedKey is a service's encrypted data key (standard base64, as
	// the stack file's encryptedkey holds it).
	EncryptedKey string
}

func (s secretsState) passphrase() bool { return s.Provider == PassphraseProvider }

// empty says no provider state is recorded.
func (s secretsState) empty() bool { return s.Salt == "" && s.EncryptedKey == "" }

// providerSchemes are the key management services pulumi's cloud secrets
// manager opens (pkg/secrets/cloud registers these gocloud drivers).
var providerSchemes = []string{"awskms", "gcpkms", "azurekeyvault", "hashivault"}

// inProcessSchemes are those cellctl itself encrypts and decrypts with:
// awskms through aws-sdk-go-v2 (the simulator's KMS on --cloud sim, AWS's
// otherwise). The others run in the pulumi CLI, but cellctl cannot write
// the origin-verify secret for them and says so.
var inProcessSchemes = []string{"awskms"}

// CheckSecretsProvider checks a secrets provider as a stack file or
// --secrets-provider names it.
func CheckSecretsProvider(p string) error {
	if p == PassphraseProvider {
		return nil
	}
	if p == "default" || p == "service" {
		return fmt.Errorf("secrets provider %q is the Pulumi Cloud's, which needs the Pulumi Cloud backend; a file or s3:// backend takes passphrase or a key management service URL (%s://…)", p, strings.Join(providerSchemes, "://…, "))
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("secrets provider %q is not a URL: use passphrase or a key management service, e.g. awskms://alias/cells?region=us-east-1", p)
	}
	for _, s := range providerSchemes {
		if u.Scheme == s {
			if strings.TrimPrefix(path.Join(u.Host, u.Path), "/") == "" {
				return fmt.Errorf("secrets provider %q names no key", p)
			}
			return nil
		}
	}
	return fmt.Errorf("secrets provider %q: scheme %s:// is not one pulumi supports (allowed: passphrase, %s://…)", p, u.Scheme, strings.Join(providerSchemes, "://…, "))
}

// fileSecrets reads a stack file's provider state; a file that names none
// has an empty Provider.
func fileSecrets(root *yaml.Node) secretsState {
	get := func(k string) string {
		if n := lookup(root, k); n != nil && n.Kind == yaml.ScalarNode {
			return n.Value
		}
		return ""
	}
	s := secretsState{Provider: get("secretsprovider"), Salt: get("encryptionsalt"), EncryptedKey: get("encryptedkey")}
	if s.Provider == "" && s.Salt != "" {
		s.Provider = PassphraseProvider
	}
	return s
}

// writeFileSecrets records a provider state in a stack file's root.
func writeFileSecrets(root *yaml.Node, s secretsState) {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	if s.passphrase() {
		set(root, "encryptionsalt", str(s.Salt))
		return
	}
	set(root, "secretsprovider", str(s.Provider))
	set(root, "encryptedkey", str(s.EncryptedKey))
}

// stateSecrets is a deployment's secrets_providers as a provider state.
func stateSecrets(sp *stateSecretsProvider) (secretsState, error) {
	if sp == nil {
		return secretsState{}, nil
	}
	switch sp.Type {
	case "passphrase":
		var st struct {
			Salt string `json:"salt"`
		}
		if err := json.Unmarshal(sp.State, &st); err != nil {
			return secretsState{}, fmt.Errorf("its passphrase secrets state: %w", err)
		}
		return secretsState{Provider: PassphraseProvider, Salt: st.Salt}, nil
	case "cloud":
		var st struct {
			URL          string `json:"url"`
			EncryptedKey []byte `json:"encryptedkey"`
		}
		if err := json.Unmarshal(sp.State, &st); err != nil {
			return secretsState{}, fmt.Errorf("its cloud secrets state: %w", err)
		}
		return secretsState{Provider: st.URL, EncryptedKey: base64.StdEncoding.EncodeToString(st.EncryptedKey)}, nil
	}
	return secretsState{}, fmt.Errorf("its state is encrypted by the %q secrets provider; cellctl reads passphrase and key management service (cloud) state", sp.Type)
}

// stateSecretsProvider is a deployment's secrets_providers.
type stateSecretsProvider struct {
	Type  string          `json:"type"`
	State json.RawMessage `json:"state"`
}

// defaultProvider is the provider a stack file that names none gets (see
// the package comment): --secrets-provider, else the one every other
// stack file names, else the passphrase.
func (e *Engine) defaultProvider() (string, error) {
	if e.opts.SecretsProvider != "" {
		return e.opts.SecretsProvider, nil
	}
	named := map[string][]string{}
	for _, n := range e.opts.Fleet.StackNames() {
		s, err := e.stackFileSecretsOf(n)
		if err != nil {
			return "", err
		}
		if s.Provider != "" {
			rel, _ := e.stackFileOf(n)
			named[s.Provider] = append(named[s.Provider], rel)
		}
	}
	switch len(named) {
	case 0:
		return PassphraseProvider, nil
	case 1:
		for p := range named {
			return p, nil
		}
	}
	var parts []string
	for p, files := range named {
		sort.Strings(files)
		parts = append(parts, fmt.Sprintf("%s (%s)", p, strings.Join(files, ", ")))
	}
	sort.Strings(parts)
	return "", fmt.Errorf("the fleet's stack files name different secrets providers: %s; a new stack gets one only when told: rerun with --secrets-provider", strings.Join(parts, "; "))
}

// stackFileSecretsOf reads the provider state of a stack's file in the
// repository.
func (e *Engine) stackFileSecretsOf(stack string) (secretsState, error) {
	rel, err := e.stackFileOf(stack)
	if err != nil {
		return secretsState{}, err
	}
	data, err := safefile.Read(filepath.Join(e.opts.Fleet.Dir, rel), fleet.MaxConfigFileBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return secretsState{}, nil
		}
		return secretsState{}, err
	}
	root, err := parseMapping(data)
	if err != nil || root == nil {
		return secretsState{}, err
	}
	s := fileSecrets(root)
	if s.Provider != "" {
		if err := CheckSecretsProvider(s.Provider); err != nil {
			return secretsState{}, fmt.Errorf("%s: secretsprovider: %w", rel, err)
		}
	}
	return s, nil
}

// providerOf is the provider of a stack: its file's, else the fleet's
// default. A --secrets-provider that disagrees with the file is refused:
// changing a stack's provider re-encrypts its state (`pulumi stack
// change-secrets-provider`), never a side effect of a run.
func (e *Engine) providerOf(stack string) (string, error) {
	s, err := e.stackFileSecretsOf(stack)
	if err != nil {
		return "", err
	}
	if s.Provider != "" {
		if p := e.opts.SecretsProvider; p != "" && p != s.Provider {
			rel, _ := e.stackFileOf(stack)
			return "", fmt.Errorf("%s names secrets provider %s, not --secrets-provider %s; nothing was changed. To move the stack to another provider run `pulumi stack change-secrets-provider --stack %s %s` (it re-encrypts the state and the file), then commit the file",
				rel, s.Provider, p, stack, p)
		}
		return s.Provider, nil
	}
	return e.defaultProvider()
}

// needsPassphrase says whether any stack of the fleet uses the passphrase
// provider (New requires a passphrase only then).
func (e *Engine) needsPassphrase() (bool, error) {
	for _, n := range e.opts.Fleet.StackNames() {
		p, err := e.providerOf(n)
		if err != nil {
			return false, err
		}
		if p == PassphraseProvider {
			return true, nil
		}
	}
	return false, nil
}

// cloudCrypter returns the crypter of a key management service state:
// the data key, decrypted by the service, as an AES-256-GCM key.
func (e *Engine) cloudCrypter(ctx context.Context, s secretsState) (config.Crypter, error) {
	cacheKey := s.Provider + "\x00" + s.EncryptedKey
	e.crypterMu.Lock()
	c, ok := e.crypters[cacheKey]
	e.crypterMu.Unlock()
	if ok {
		return c, nil
	}
	blob, err := base64.StdEncoding.DecodeString(s.EncryptedKey)
	if err != nil {
		return nil, fmt.Errorf("encryptedkey is not base64: %w", err)
	}
	keeper, err := e.openKeeper(ctx, s.Provider)
	if err != nil {
		return nil, err
	}
	defer keeper.Close()
	dataKey, err := keeper.Decrypt(ctx, blob)
	if err != nil {
		return nil, fmt.Errorf("the secrets provider %s cannot decrypt this stack's data key: %w", s.Provider, err)
	}
	c = config.NewSymmetricCrypter(dataKey)
	e.crypterMu.Lock()
	if e.crypters == nil {
		e.crypters = map[string]config.Crypter{}
	}
	e.crypters[cacheKey] = c
	e.crypterMu.Unlock()
	return c, nil
}

// crypterOf is the crypter of a provider state.
func (e *Engine) crypterOf(ctx context.Context, s secretsState) (config.Crypter, error) {
	if s.passphrase() {
		if e.passphrase == "" {
			return nil, errors.New("this stack's secrets use the passphrase provider: set PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE)")
		}
		return e.crypter(s.Salt)
	}
	return e.cloudCrypter(ctx, s)
}

// newSecretsState makes a fresh provider state: a passphrase salt (the
// fleet's, fleetSalt, when a stack file has one), or a
// random 32-byte data key encrypted by the service (as pulumi's cloud
// secrets manager makes one).
func (e *Engine) newSecretsState(ctx context.Context, provider string) (secretsState, error) {
	if provider == PassphraseProvider {
		if e.passphrase == "" {
			return secretsState{}, errors.New("the passphrase secrets provider needs PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE)")
		}
		if salt := e.fleetSalt(""); salt != "" {
			return secretsState{Provider: provider, Salt: salt}, nil
		}
		salt, err := e.newSalt()
		return secretsState{Provider: provider, Salt: salt}, err
	}
	keeper, err := e.openKeeper(ctx, provider)
	if err != nil {
		return secretsState{}, err
	}
	defer keeper.Close()
	dataKey := make([]byte, 32)
	if _, err := rand.Read(dataKey); err != nil {
		return secretsState{}, err
	}
	blob, err := keeper.Encrypt(ctx, dataKey)
	if err != nil {
		return secretsState{}, fmt.Errorf("the secrets provider %s cannot encrypt a new data key: %w", provider, err)
	}
	return secretsState{Provider: provider, EncryptedKey: base64.StdEncoding.EncodeToString(blob)}, nil
}

// openKeeper opens a key management service's keeper in this process.
// awskms runs through aws-sdk-go-v2 with the URL's parameters (region,
// profile, role…, as gocloud reads them) against AWS, or the simulator's
// KMS endpoint and fake credentials on --cloud sim: the same client code
// either way.
func (e *Engine) openKeeper(ctx context.Context, provider string) (*secrets.Keeper, error) {
	if os.Getenv("PULUMI_CLOUD_SECRET_OVERRIDE") != "" {
		return nil, errors.New("PULUMI_CLOUD_SECRET_OVERRIDE is set: pulumi would use another secrets provider than the stack files name, and cellctl would not; unset it")
	}
	u, err := url.Parse(provider)
	if err != nil {
		return nil, fmt.Errorf("secrets provider %q: %w", provider, err)
	}
	supported := false
	for _, s := range inProcessSchemes {
		supported = supported || u.Scheme == s
	}
	if !supported {
		return nil, fmt.Errorf("secrets provider %s: cellctl encrypts the fleet's origin-verify secret in its own process (never on a child's command line) and does that with passphrase and awskms:// only; the pulumi CLI opens %s:// keys, cellctl cannot yet. Use awskms:// or passphrase for this fleet", provider, u.Scheme)
	}
	q := u.Query()
	opts := &awskms.KeeperOptions{}
	for k, vs := range q {
		if strings.HasPrefix(k, "context_") {
			if opts.EncryptionContext == nil {
				opts.EncryptionContext = map[string]string{}
			}
			opts.EncryptionContext[strings.TrimPrefix(k, "context_")] = vs[0]
			q.Del(k)
		}
	}
	q.Del("awssdk")
	access, err := e.cloud.AWS(ctx)
	if err != nil {
		return nil, err
	}
	if !access.DefaultChain() {
		// The simulator answers every call: no profile, role or endpoint
		// of the URL applies, only its region.
		for k := range q {
			if k != "region" {
				q.Del(k)
			}
		}
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("secrets provider %s: %w", provider, err)
	}
	if cfg.Region == "" {
		return nil, fmt.Errorf("secrets provider %s names no region and none is configured: add ?region=<the key's region> to the URL (in the stack files and --secrets-provider alike)", provider)
	}
	var kmsOpts []func(*kms.Options)
	if !access.DefaultChain() {
		cfg.Credentials = credentials.NewStaticCredentialsProvider(access.AccessKeyID, access.SecretAccessKey, access.SessionToken)
		endpoint := access.Endpoint
		kmsOpts = append(kmsOpts, func(o *kms.Options) { o.BaseEndpoint = &endpoint })
	}
	keyID := strings.TrimPrefix(path.Join(u.Host, u.Path), "/")
	return awskms.OpenKeeper(kms.NewFromConfig(cfg, kmsOpts...), keyID, opts), nil
}

// providerEnv is what the pulumi CLI child needs to open a stack's
// provider: the passphrase, or on --cloud sim the simulator's KMS endpoint
// (AWS_ENDPOINT_URL_KMS, which aws-sdk-go-v2 in the CLI honours) and its
// fake credentials. On AWS the child inherits the default chain.
func (e *Engine) providerEnv(ctx context.Context, provider string) (map[string]string, error) {
	if provider == PassphraseProvider {
		if e.passphrase == "" {
			return nil, errors.New("the passphrase secrets provider needs PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE)")
		}
		return map[string]string{"PULUMI_CONFIG_PASSPHRASE": e.passphrase}, nil
	}
	env := map[string]string{}
	if !strings.HasPrefix(provider, "awskms://") {
		return env, nil
	}
	access, err := e.cloud.AWS(ctx)
	if err != nil {
		return nil, err
	}
	if access.DefaultChain() {
		return env, nil
	}
	env["AWS_ENDPOINT_URL_KMS"] = access.Endpoint
	env["AWS_ACCESS_KEY_ID"] = access.AccessKeyID
	env["AWS_SECRET_ACCESS_KEY"] = access.SecretAccessKey
	env["AWS_SESSION_TOKEN"] = access.SessionToken
	if u, err := url.Parse(provider); err == nil && u.Query().Get("region") == "" {
		if r := os.Getenv("AWS_REGION"); r == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
			return nil, fmt.Errorf("secrets provider %s names no region: add ?region=<the key's region>", provider)
		}
	}
	return env, nil
}
