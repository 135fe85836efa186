package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/safefile"
)

// The cloud is stored as plain JSON so people can read it. Pulumi values
// that JSON cannot hold are wrapped in one-key objects:
//
//	{"$secret": "v1:<base64 nonce+AES-256-GCM ciphertext>"}
//	{"$asset": {"hash": …, "text"|"path"|"uri": …}}
//	{"$archive": {"hash": …, "assets"|"path"|"uri": …}}
//	{"$ref": {"urn": …, "id": …}}            (resource references)
//
// Secrets are encrypted with the key in <dir>/secret.key (created 0600 on
// first use), never written in plaintext. Encryption rather than hashing
// because Read must hand the engine the secret back (as a secret): a
// hashed value would show up as drift on every refresh.

const (
	tagSecret  = "$secret"
	tagAsset   = "$asset"
	tagArchive = "$archive"
	tagRef     = "$ref"
)

type codec struct{ aead cipher.AEAD }

// secretKeyFile holds the AES key of secret values in the sim dir.
const secretKeyFile = "secret.key"

func loadCodec(dir string) (*codec, error) {
	path := filepath.Join(dir, secretKeyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return nil, err
		}
		enc := []byte(hex.EncodeToString(raw) + "\n")
		// Created, never replaced: when processes race the loser reads
		// the winner's key.
		lerr := safefile.Create(path, enc, 0o600)
		switch {
		case lerr == nil:
			key = enc
		case errors.Is(lerr, os.ErrExist):
			key, err = os.ReadFile(path)
		default:
			return nil, lerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the simulator's secret key: %w", err)
	}
	raw, err := hex.DecodeString(string(trimSpace(key)))
	if err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("%s: not a 32-byte hex key", path)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &codec{aead: aead}, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

func (c *codec) seal(plain []byte) string {
	nonce := make([]byte, c.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	return "v1:" + base64.StdEncoding.EncodeToString(c.aead.Seal(nonce, nonce, plain, nil))
}

func (c *codec) open(s string) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("the simulated cloud has no %s", secretKeyFile)
	}
	if len(s) < 3 || s[:3] != "v1:" {
		return nil, fmt.Errorf("unknown secret encoding")
	}
	raw, err := base64.StdEncoding.DecodeString(s[3:])
	if err != nil || len(raw) < c.aead.NonceSize() {
		return nil, fmt.Errorf("corrupt secret")
	}
	n := c.aead.NonceSize()
	return c.aead.Open(nil, raw[:n], raw[n:], nil)
}

// encodeMap turns a property map into JSON-ready values.
func (c *codec) encodeMap(m resource.PropertyMap) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		e, err := c.encode(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[string(k)] = e
	}
	return out, nil
}

func (c *codec) encode(v resource.PropertyValue) (any, error) {
	switch {
	case v.IsNull():
		return nil, nil
	case v.IsBool():
		return v.BoolValue(), nil
	case v.IsNumber():
		return v.NumberValue(), nil
	case v.IsString():
		return v.StringValue(), nil
	case v.IsArray():
		arr := make([]any, len(v.ArrayValue()))
		for i, e := range v.ArrayValue() {
			x, err := c.encode(e)
			if err != nil {
				return nil, err
			}
			arr[i] = x
		}
		return arr, nil
	case v.IsObject():
		return c.encodeMap(v.ObjectValue())
	case v.IsSecret():
		inner, err := c.encode(v.SecretValue().Element)
		if err != nil {
			return nil, err
		}
		plain, err := json.Marshal(inner)
		if err != nil {
			return nil, err
		}
		return map[string]any{tagSecret: c.seal(plain)}, nil
	case v.IsAsset():
		a := v.AssetValue()
		return map[string]any{tagAsset: map[string]any{"hash": a.Hash, "text": a.Text, "path": a.Path, "uri": a.URI}}, nil
	case v.IsArchive():
		a := v.ArchiveValue()
		body := map[string]any{"hash": a.Hash, "path": a.Path, "uri": a.URI}
		if a.Assets != nil {
			assets := map[string]any{}
			for name, x := range a.Assets {
				switch t := x.(type) {
				case *resource.Asset:
					e, _ := c.encode(resource.NewAssetProperty(t))
					assets[name] = e
				case *resource.Archive:
					e, _ := c.encode(resource.NewArchiveProperty(t))
					assets[name] = e
				}
			}
			body["assets"] = assets
		}
		return map[string]any{tagArchive: body}, nil
	case v.IsResourceReference():
		r := v.ResourceReferenceValue()
		id := ""
		if r.ID.IsString() {
			id = r.ID.StringValue()
		}
		return map[string]any{tagRef: map[string]any{"urn": string(r.URN), "id": id, "packageVersion": r.PackageVersion}}, nil
	case v.IsOutput():
		o := v.OutputValue()
		if !o.Known {
			return nil, fmt.Errorf("unknown values cannot be stored")
		}
		if o.Secret {
			return c.encode(resource.MakeSecret(o.Element))
		}
		return c.encode(o.Element)
	case v.IsComputed():
		return nil, fmt.Errorf("unknown values cannot be stored")
	}
	return nil, fmt.Errorf("cannot store a %s", v.TypeString())
}

func (c *codec) decodeMap(m map[string]any) (resource.PropertyMap, error) {
	if m == nil {
		return nil, nil
	}
	out := make(resource.PropertyMap, len(m))
	for k, v := range m {
		d, err := c.decode(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[resource.PropertyKey(k)] = d
	}
	return out, nil
}

func (c *codec) decode(v any) (resource.PropertyValue, error) {
	switch t := v.(type) {
	case nil:
		return resource.NewNullProperty(), nil
	case bool:
		return resource.NewBoolProperty(t), nil
	case float64:
		return resource.NewNumberProperty(t), nil
	case json.Number:
		f, _ := t.Float64()
		return resource.NewNumberProperty(f), nil
	case int:
		return resource.NewNumberProperty(float64(t)), nil
	case string:
		return resource.NewStringProperty(t), nil
	case []any:
		arr := make([]resource.PropertyValue, len(t))
		for i, e := range t {
			d, err := c.decode(e)
			if err != nil {
				return resource.PropertyValue{}, err
			}
			arr[i] = d
		}
		return resource.NewArrayProperty(arr), nil
	case map[string]any:
		if len(t) == 1 {
			if s, ok := t[tagSecret].(string); ok {
				plain, err := c.open(s)
				if err != nil {
					return resource.PropertyValue{}, fmt.Errorf("decrypting a secret (was secret.key replaced?): %w", err)
				}
				var inner any
				if err := json.Unmarshal(plain, &inner); err != nil {
					return resource.PropertyValue{}, err
				}
				d, err := c.decode(inner)
				if err != nil {
					return resource.PropertyValue{}, err
				}
				return resource.MakeSecret(d), nil
			}
			if a, ok := t[tagAsset].(map[string]any); ok {
				return resource.NewAssetProperty(&resource.Asset{
					Sig: resource.AssetSig, Hash: Str(a["hash"]), Text: Str(a["text"]), Path: Str(a["path"]), URI: Str(a["uri"]),
				}), nil
			}
			if a, ok := t[tagArchive].(map[string]any); ok {
				arch := &resource.Archive{Sig: resource.ArchiveSig, Hash: Str(a["hash"]), Path: Str(a["path"]), URI: Str(a["uri"])}
				if assets, ok := a["assets"].(map[string]any); ok {
					arch.Assets = map[string]any{}
					for name, x := range assets {
						d, err := c.decode(x)
						if err != nil {
							return resource.PropertyValue{}, err
						}
						switch {
						case d.IsAsset():
							arch.Assets[name] = d.AssetValue()
						case d.IsArchive():
							arch.Assets[name] = d.ArchiveValue()
						}
					}
				}
				return resource.NewArchiveProperty(arch), nil
			}
			if r, ok := t[tagRef].(map[string]any); ok {
				return resource.MakeCustomResourceReference(resource.URN(Str(r["urn"])), resource.ID(Str(r["id"])), Str(r["packageVersion"])), nil
			}
		}
		obj := make(resource.PropertyMap, len(t))
		for k, e := range t {
			d, err := c.decode(e)
			if err != nil {
				return resource.PropertyValue{}, err
			}
			obj[resource.PropertyKey(k)] = d
		}
		return resource.NewObjectProperty(obj), nil
	}
	return resource.PropertyValue{}, fmt.Errorf("unexpected stored value %T", v)
}

func Str(v any) string {
	s, _ := v.(string)
	return s
}

// redact renders stored values for people: secrets become "[secret]",
// archives their file names and hash.
func redact(v any) any {
	switch t := v.(type) {
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = redact(e)
		}
		return out
	case map[string]any:
		if len(t) == 1 {
			if _, ok := t[tagSecret]; ok {
				return "[secret]"
			}
			if a, ok := t[tagArchive].(map[string]any); ok {
				var names []string
				if assets, ok := a["assets"].(map[string]any); ok {
					for n := range assets {
						names = append(names, n)
					}
				}
				sort.Strings(names)
				return map[string]any{"archive": names, "hash": a["hash"]}
			}
			if a, ok := t[tagAsset].(map[string]any); ok {
				return map[string]any{"asset": a["hash"]}
			}
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = redact(e)
		}
		return out
	}
	return v
}

func Plain(v resource.PropertyValue) any {
	for v.IsSecret() {
		v = v.SecretValue().Element
	}
	return v.Mappable()
}

func StrMap(v any) map[string]string {
	out := map[string]string{}
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			if s, ok := x.(string); ok {
				out[k] = s
			}
		}
	}
	return out
}

func Num(v any) float64 { f, _ := v.(float64); return f }
