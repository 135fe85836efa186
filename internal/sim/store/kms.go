package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/awsmodel"
)

// The simulator's KMS keys: symmetric encryption keys per region, with
// aliases, states and a deny switch, and the ciphertexts they seal; the
// AWS KMS API over them is served with the other AWS APIs.
//
// Kept in kms.json beside the rest of the cloud; each key's material is
// sealed with the cloud's secret.key, so the file alone decrypts nothing.
// A ciphertext blob is the simulator's own format ("csk1", the key id,
// the nonce, then AES-256-GCM with the canonical encryption context as
// additional data): like a real KMS ciphertext it names its key, and only
// this cloud's key decrypts it.

const (
	kmsFile  = "kms.json"
	kmsMagic = "csk1"
)

type KMSState struct {
	Format int                      `json:"format"`
	Keys   map[string]*KMSKeyRecord `json:"keys,omitempty"` // key ARN → key
	// Aliases maps an alias ARN to the key ARN it names.
	Aliases map[string]string `json:"aliases,omitempty"`
}

type KMSKeyRecord struct {
	ID          string    `json:"id"`
	ARN         string    `json:"arn"`
	Region      string    `json:"region"`
	Account     string    `json:"account"`
	Description string    `json:"description,omitempty"`
	State       string    `json:"state"`
	Denied      bool      `json:"denied,omitempty"`
	Material    string    `json:"material"` // sealed with secret.key
	Created     time.Time `json:"created"`
}

// KMSKey is a simulated KMS key as `cellctl sim kms list` shows it.
type KMSKey struct {
	ID      string   `json:"id"`
	ARN     string   `json:"arn"`
	Region  string   `json:"region"`
	State   string   `json:"state"`
	Denied  bool     `json:"denied,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
}

func (s *Store) loadKMS() (*KMSState, error) {
	k := &KMSState{}
	if err := ReadJSON(filepath.Join(s.dir, kmsFile), k); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if k.Format > FormatV1 {
		return nil, fmt.Errorf("%s was written by a newer cellctl (format %d)", filepath.Join(s.dir, kmsFile), k.Format)
	}
	if k.Keys == nil {
		k.Keys = map[string]*KMSKeyRecord{}
	}
	if k.Aliases == nil {
		k.Aliases = map[string]string{}
	}
	return k, nil
}

func (s *Store) saveKMS(k *KMSState) error {
	k.Format = FormatV1
	return WriteJSON(filepath.Join(s.dir, kmsFile), k)
}

// WithKMS runs fn under the exclusive lock on the account's keys and
// saves them when fn succeeds and change is set.
func (c *Cloud) WithKMS(change bool, fn func(st *State, k *KMSState) error) error {
	run := c.s.view
	if change {
		run = c.s.update
	}
	return run(func(st *State, _ *Control) error {
		k, err := c.s.loadKMS()
		if err != nil {
			return err
		}
		if err := fn(st, k); err != nil {
			return err
		}
		if change {
			return c.s.saveKMS(k)
		}
		return nil
	})
}

func (st *State) AccountID() string {
	if st.Account != "" {
		return st.Account
	}
	return awsmodel.DefaultEnv().Account
}

// Resolve finds the key a KeyId names in region.
func (k *KMSState) Resolve(ref, region, account string) (*KMSKeyRecord, error) {
	r, err := awsmodel.ParseKMSKeyRef(ref, region, account)
	if err != nil {
		return nil, err
	}
	if r.Alias != "" {
		aliasARN := awsmodel.KMSAliasARN(r.Region, r.Account, r.Alias)
		arn, ok := k.Aliases[aliasARN]
		if !ok {
			return nil, &awsmodel.KMSError{Code: awsmodel.KMSNotFound, Message: fmt.Sprintf("Alias %s is not found.", aliasARN)}
		}
		return k.Keys[arn], nil
	}
	arn := awsmodel.KMSKeyARN(r.Region, r.Account, r.KeyID)
	key, ok := k.Keys[arn]
	if !ok {
		return nil, &awsmodel.KMSError{Code: awsmodel.KMSNotFound, Message: fmt.Sprintf("Key '%s' does not exist", arn)}
	}
	return key, nil
}

func (k *KMSState) public(key *KMSKeyRecord) KMSKey {
	out := KMSKey{ID: key.ID, ARN: key.ARN, Region: key.Region, State: key.State, Denied: key.Denied}
	for a, target := range k.Aliases {
		if target == key.ARN {
			out.Aliases = append(out.Aliases, a[strings.Index(a, ":alias/")+1:])
		}
	}
	sort.Strings(out.Aliases)
	return out
}

// CreateKMSKey creates a symmetric encryption key in region, with an alias
// ("alias/cells"; "" for none).
func (c *Cloud) CreateKMSKey(region, alias, description string) (KMSKey, error) {
	if region == "" {
		region = awsmodel.DefaultEnv().Region
	}
	if alias != "" && !strings.HasPrefix(alias, "alias/") {
		alias = "alias/" + alias
	}
	if alias != "" {
		if err := awsmodel.CheckKMSAliasName(alias); err != nil {
			return KMSKey{}, err
		}
	}
	var out KMSKey
	err := c.WithKMS(true, func(st *State, k *KMSState) error {
		account := st.AccountID()
		aliasARN := ""
		if alias != "" {
			aliasARN = awsmodel.KMSAliasARN(region, account, alias)
			if _, taken := k.Aliases[aliasARN]; taken {
				return &awsmodel.KMSError{Code: "AlreadyExistsException", Message: fmt.Sprintf("An alias with the name %s already exists", aliasARN)}
			}
		}
		material := make([]byte, 32)
		if _, err := rand.Read(material); err != nil {
			return err
		}
		id, err := newUUID()
		if err != nil {
			return err
		}
		key := &KMSKeyRecord{ID: id, ARN: awsmodel.KMSKeyARN(region, account, id), Region: region, Account: account, Description: description,
			State: awsmodel.KMSKeyEnabled, Material: c.s.codec.seal(material), Created: c.now()}
		k.Keys[key.ARN] = key
		if aliasARN != "" {
			k.Aliases[aliasARN] = key.ARN
		}
		out = k.public(key)
		return nil
	})
	return out, err
}

// SetKMSKey changes a key's state: "enable", "disable", "schedule-deletion"
// (PendingDeletion), "deny" (the key policy stops allowing the callers:
// AccessDeniedException) or "allow".
func (c *Cloud) SetKMSKey(region, ref, action string) (KMSKey, error) {
	if region == "" {
		region = awsmodel.DefaultEnv().Region
	}
	var out KMSKey
	err := c.WithKMS(true, func(st *State, k *KMSState) error {
		key, err := k.Resolve(ref, region, st.AccountID())
		if err != nil {
			return err
		}
		switch action {
		case "enable":
			key.State = awsmodel.KMSKeyEnabled
		case "disable":
			key.State = awsmodel.KMSKeyDisabled
		case "schedule-deletion":
			key.State = awsmodel.KMSKeyPendingDeletion
		case "deny":
			key.Denied = true
		case "allow":
			key.Denied = false
		default:
			return fmt.Errorf("unknown key action %q (allowed: enable, disable, schedule-deletion, deny, allow)", action)
		}
		out = k.public(key)
		return nil
	})
	return out, err
}

// KMSKeys lists the account's keys.
func (c *Cloud) KMSKeys() ([]KMSKey, error) {
	var out []KMSKey
	err := c.WithKMS(false, func(_ *State, k *KMSState) error {
		for _, key := range k.Keys {
			out = append(out, k.public(key))
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ARN < out[j].ARN })
	return out, err
}

// ---- crypto -----------------------------------------------------------------

// KMSAAD is the encryption context as additional data: sorted pairs, so
// the same context in any order decrypts, a different one does not.
func KMSAAD(ctx map[string]string) []byte {
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%d:%s=%d:%s;", len(k), k, len(ctx[k]), ctx[k])
	}
	return []byte(b.String())
}

func (c *Cloud) KMSKeyAEAD(key *KMSKeyRecord) (cipher.AEAD, error) {
	material, err := c.s.codec.open(key.Material)
	if err != nil {
		return nil, fmt.Errorf("the simulated KMS key %s cannot be read: %w", key.ARN, err)
	}
	block, err := aes.NewCipher(material)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (c *Cloud) KMSEncrypt(key *KMSKeyRecord, plain []byte, ctx map[string]string) ([]byte, error) {
	aead, err := c.KMSKeyAEAD(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	head := append([]byte(kmsMagic), byte(len(key.ARN)))
	head = append(head, key.ARN...)
	head = append(head, nonce...)
	return aead.Seal(head, nonce, plain, KMSAAD(ctx)), nil
}

// BlobKey is the key ARN a ciphertext blob names, and the rest.
func BlobKey(blob []byte) (arn string, rest []byte, ok bool) {
	if len(blob) < len(kmsMagic)+1 || string(blob[:len(kmsMagic)]) != kmsMagic {
		return "", nil, false
	}
	n := int(blob[len(kmsMagic)])
	rest = blob[len(kmsMagic)+1:]
	if len(rest) < n {
		return "", nil, false
	}
	return string(rest[:n]), rest[n:], true
}

// newUUID is a random (version 4) UUID, the form of a KMS key id.
func newUUID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
}
