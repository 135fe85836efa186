package edge

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cellctl/cellctl/router"
)

// goldenClaim is the claim the golden "jwt" package reads the tenant from.
const goldenClaim = "tid"

// jwtOf is an unsigned-looking JWT with payload claims (the edge never
// checks the signature: the cell does).
func jwtOf(claims map[string]any) string {
	payload, err := json.Marshal(claims)
	if err != nil {
		panic(err)
	}
	return jwtRaw(string(payload))
}

// jwtRaw is a JWT whose payload is exactly payload.
func jwtRaw(payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc.EncodeToString([]byte(payload)) + ".c2lnbmF0dXJl"
}

type jwtCase struct{ name, value string }

// jwtCases are Authorization values every edge must read alike: good
// tokens, and tokens malformed in each way the rule names.
func jwtCases() []jwtCase {
	good := jwtOf(map[string]any{goldenClaim: "acme"})
	parts := strings.Split(good, ".")
	h, p, sig := parts[0], parts[1], parts[2]
	enc := base64.RawURLEncoding.EncodeToString
	return []jwtCase{
		{"bearer", "Bearer " + good},
		{"scheme in lower case", "bearer " + good},
		{"scheme in upper case", "BEARER " + good},
		{"several spaces", "Bearer    " + good},
		{"a tab", "Bearer\t" + good},
		{"no space", "Bearer" + good},
		{"trailing space", "Bearer " + good + " "},
		{"Basic", "Basic dXNlcjpwYXNzd29yZA=="},
		{"scheme only", "Bearer "},
		{"bare token", good},
		{"empty signature", "Bearer " + h + "." + p + "."},
		{"two segments", "Bearer " + h + "." + p},
		{"four segments", "Bearer " + good + ".x"},
		{"empty header", "Bearer ." + p + "." + sig},
		{"empty payload", "Bearer " + h + ".." + sig},
		{"padding", "Bearer " + h + "." + p + "==." + sig},
		{"standard base64 alphabet", "Bearer " + h + "." + strings.NewReplacer("-", "+", "_", "/").Replace(enc([]byte(`{"tid":"acme","x":"??>>"}`))) + "." + sig},
		{"url alphabet", "Bearer " + jwtRaw(`{"tid":"acme","x":"??>>"}`)},
		{"payload of 4n+1 characters", "Bearer " + h + "." + p + "A." + sig},
		{"not JSON", "Bearer " + jwtRaw(`tid=acme`)},
		{"a JSON array", "Bearer " + jwtRaw(`["acme"]`)},
		{"JSON null", "Bearer " + jwtRaw(`null`)},
		{"a JSON string", "Bearer " + jwtRaw(`"acme"`)},
		{"trailing garbage", "Bearer " + jwtRaw(`{"tid":"acme"}x`)},
		{"whitespace around", "Bearer " + jwtRaw(" \n{\t\"tid\" : \"acme\" }\r\n")},
		{"BOM", "Bearer " + jwtRaw("\ufeff{\"tid\":\"acme\"}")},
		{"claim missing", "Bearer " + jwtOf(map[string]any{"sub": "acme"})},
		{"claim is a number", "Bearer " + jwtRaw(`{"tid":42}`)},
		{"claim is null", "Bearer " + jwtRaw(`{"tid":null}`)},
		{"claim is an object", "Bearer " + jwtRaw(`{"tid":{"id":"acme"}}`)},
		{"claim is empty", "Bearer " + jwtRaw(`{"tid":""}`)},
		{"claim is not a tenant id", "Bearer " + jwtRaw(`{"tid":"a b"}`)},
		{"claim in unicode", "Bearer " + jwtRaw(`{"tid":"müller-gmbh"}`)},
		{"claim with escapes", "Bearer " + jwtRaw(`{"tid":"\u0061cme"}`)},
		{"claim with a lone surrogate", "Bearer " + jwtRaw(`{"tid":"acme\ud800"}`)},
		{"claim with a pair of surrogates", "Bearer " + jwtRaw(`{"tid":"\ud83d\ude00"}`)},
		{"claim name case", "Bearer " + jwtRaw(`{"TID":"acme"}`)},
		{"duplicate claim, last wins", "Bearer " + jwtRaw(`{"tid":"acme","tid":"globex"}`)},
		{"duplicate claim, last not a string", "Bearer " + jwtRaw(`{"tid":"acme","tid":7}`)},
		{"prototype keys", "Bearer " + jwtRaw(`{"__proto__":{"tid":"globex"},"constructor":"x"}`)},
		{"claim __proto__ is not tid", "Bearer " + jwtRaw(`{"__proto__":"acme"}`)},
		{"nested deep", "Bearer " + jwtRaw(`{"a":`+strings.Repeat("[", 500)+strings.Repeat("]", 500)+`,"tid":"hooli"}`)},
		{"invalid UTF-8", "Bearer " + h + "." + enc([]byte("{\"tid\":\"acme\xff\"}")) + "." + sig},
		{"overlong", "Bearer " + jwtRaw(`{"tid":"acme","pad":"`+strings.Repeat("x", MaxAuthorizationBytes)+`"}`)},
		{"a 128-byte tenant", "Bearer " + jwtOf(map[string]any{goldenClaim: strings.Repeat("p", 128)})},
		{"a 129-byte tenant", "Bearer " + jwtOf(map[string]any{goldenClaim: strings.Repeat("p", 129)})},
		{"non-ASCII in the token", "Bearer " + good + "é"},
		{"empty value", ""},
	}
}

func TestTenantFromJWT(t *testing.T) {
	want := map[string]string{
		"bearer": "acme", "scheme in lower case": "acme", "scheme in upper case": "acme", "several spaces": "acme",
		"empty signature": "acme", "url alphabet": "acme", "whitespace around": "acme", "claim in unicode": "müller-gmbh",
		"claim with escapes": "acme", "claim with a pair of surrogates": "😀", "duplicate claim, last wins": "globex",
		"nested deep": "hooli", "a 128-byte tenant": strings.Repeat("p", 128), "a 129-byte tenant": strings.Repeat("p", 129),
		"claim is not a tenant id": "a b", "claim with a lone surrogate": "acme\ufffd",
	}
	for _, c := range jwtCases() {
		if got := TenantFromJWT(c.value, goldenClaim); got != want[c.name] {
			t.Errorf("%s: %q, want %q", c.name, got, want[c.name])
		}
	}
}

// FuzzTenantFromJWT: any Authorization value is read without a panic; a
// tenant is read only from a bearer token of three base64url segments
// whose payload is UTF-8 JSON holding the claim as a string.
func FuzzTenantFromJWT(f *testing.F) {
	for _, c := range jwtCases() {
		f.Add(c.value)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got := TenantFromJWT(value, goldenClaim)
		if got == "" {
			return
		}
		if !strings.EqualFold(value[:7], "bearer ") {
			t.Fatalf("%q: a tenant from a value that is not a bearer token", value)
		}
		parts := strings.Split(strings.TrimLeft(value[7:], " "), ".")
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if len(parts) != 3 || err != nil || !utf8.Valid(payload) {
			t.Fatalf("%q: a tenant from a malformed token", value)
		}
		var doc map[string]any
		if json.Unmarshal(payload, &doc) != nil || doc[goldenClaim] != got {
			t.Fatalf("%q: tenant %q is not the payload's %s claim", value, got, goldenClaim)
		}
	})
}

// JWTVector is one entry of golden_jwt.json: an Authorization value and
// the tenant an edge reads from it ("" for none, which includes a claim
// that is not a valid tenant id).
type JWTVector struct {
	Authorization string `json:"authorization"`
	Tenant        string `json:"tenant"`
}

// TestGoldenJWTCorpus writes the JWT corpus jwt.test.js reads: every case
// above and deterministic mutations of each (characters replaced, dropped
// or doubled, segments cut or repeated, payload bytes re-encoded), with
// the tenant Go reads, so the edge's reader is held to Go's on thousands
// of malformed tokens.
func TestGoldenJWTCorpus(t *testing.T) {
	var out []JWTVector
	seen := map[string]bool{}
	add := func(v string) {
		if seen[v] || !utf8.ValidString(v) {
			return
		}
		seen[v] = true
		tenant := TenantFromJWT(v, goldenClaim)
		if router.ValidTenant(tenant) != nil {
			tenant = ""
		}
		out = append(out, JWTVector{Authorization: v, Tenant: tenant})
	}
	seed := uint64(24)
	next := func(n int) int {
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return int((z ^ z>>31) % uint64(n))
	}
	alphabet := []string{"A", "z", "0", "-", "_", ".", "=", "+", "/", " ", "\t", "é", "{", "\"", "%", "~"}
	for _, c := range jwtCases() {
		add(c.value)
		if len(c.value) > 2*MaxAuthorizationBytes/3 {
			continue
		}
		for i := 0; i < 40 && len(c.value) > 0; i++ {
			v, at := c.value, next(len(c.value))
			switch next(6) {
			case 0:
				v = v[:at] + alphabet[next(len(alphabet))] + v[at+1:]
			case 1:
				v = v[:at] + v[at+1:]
			case 2:
				v = v[:at] + v[at:at+1] + v[at:]
			case 3:
				v = v[:at]
			case 4:
				v = v[:at] + "." + v[at:]
			case 5:
				if parts := strings.Split(v, "."); len(parts) == 3 {
					v = parts[0] + "." + parts[1] + "." + parts[1] + "." + parts[2]
				}
			}
			add(v)
		}
	}
	read := 0
	for _, v := range out {
		if v.Tenant != "" {
			read++
		}
	}
	if len(out) < 1000 || read < 100 {
		t.Fatalf("corpus of %d tokens, %d with a tenant", len(out), read)
	}
	checkGolden(t, "golden_jwt.json", marshalLines(out))
}
