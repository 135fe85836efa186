package router

import (
	"hash/fnv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHashKnownVectors(t *testing.T) {
	// Published FNV-1a 64-bit test vectors (Fowler/Noll/Vo reference suite).
	vectors := []struct {
		in   string
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"b", 0xaf63df4c8601f1a5},
		{"c", 0xaf63de4c8601eff2},
		{"foo", 0xdcb27518fed9d577},
		{"foob", 0xdd120e790c2512af},
		{"fooba", 0xcac165afa2fef40a},
		{"foobar", 0x85944171f73967e8},
		{"chongo was here!\n", 0x46810940eff5f915},
	}
	for _, v := range vectors {
		if got := Hash(v.in); got != v.want {
			t.Errorf("Hash(%q) = %#x, want %#x", v.in, got, v.want)
		}
		ref := fnv.New64a()
		ref.Write([]byte(v.in))
		if got := ref.Sum64(); got != v.want {
			t.Errorf("hash/fnv disagrees on %q: %#x, want %#x", v.in, got, v.want)
		}
	}
}

func TestValidTenant(t *testing.T) {
	good := []string{
		"a", "acme", "ACME-corp_01", "müller-gmbh", "東京", "😀", "a.b:c/d@e", `q"uote\`, "__proto__",
		strings.Repeat("x", 128), strings.Repeat("€", 42) + "ab", // 126 + 2 bytes
	}
	for _, s := range good {
		if err := ValidTenant(s); err != nil {
			t.Errorf("ValidTenant(%q) = %v, want ok", s, err)
		}
	}
	bad := map[string]string{
		"":                            "tenant id is empty",
		strings.Repeat("x", 129):      "is 129 bytes long",
		strings.Repeat("€", 43):       "is 129 bytes long",
		"a b":                         "contains U+0020 (space) at byte 1",
		"a\tb":                        "contains U+0009 (tab) at byte 1",
		"a\x00":                       "contains U+0000 (NUL) at byte 1",
		"a\x7f":                       "contains U+007F (DEL) at byte 1",
		"a\u00a0":                     "contains U+00A0 (no-break space) at byte 1",
		"a\u200bb":                    "contains U+200B (zero-width space) at byte 1",
		"\ufeffa":                     "contains U+FEFF (byte order mark) at byte 0",
		"a\ufffd":                     "contains U+FFFD (replacement character) at byte 1",
		"a\u2028":                     "contains U+2028 (line separator) at byte 1",
		"\u3000":                      "contains U+3000 (ideographic space) at byte 0",
		"ab\xff":                      "not valid UTF-8 (byte 0xff at byte offset 2)",
		"\xed\xa0\x80":                "not valid UTF-8 (byte 0xed at byte offset 0)", // an encoded surrogate
		"\xc0\xaf":                    "not valid UTF-8 (byte 0xc0 at byte offset 0)", // overlong "/"
		"caf\u00e9\u0301\u202e" + "x": "contains U+202E at byte 7",
	}
	for s, want := range bad {
		err := ValidTenant(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidTenant(%q) = %v, want an error containing %q", s, err, want)
		}
	}
}

// refValid is the tenant rule written the slow, obvious way.
func refValid(s string) bool {
	if len(s) < 1 || len(s) > MaxTenantBytes || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		for _, fr := range forbiddenRanges {
			if r >= fr[0] && r <= fr[1] {
				return false
			}
		}
	}
	return true
}

func FuzzTenant(f *testing.F) {
	for _, s := range []string{"", "a", "acme", "a b", "東京", "\xff", "\u200b", strings.Repeat("é", 64),
		"cafe\u0301", "\u212aelvin", "acme\xfe", strings.Repeat("t", 131<<10), strings.Repeat("\xff", 4096)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Whatever the id, the message stays a line, not a copy of it.
		if err := ValidTenant(s); err != nil && len(err.Error()) > 600 {
			t.Fatalf("%d-byte message for a %d-byte id", len(err.Error()), len(s))
		}
		h, ok := hashTenant(s)
		if ok != refValid(s) {
			t.Fatalf("hashTenant(%q) valid=%v, reference says %v", s, ok, !ok)
		}
		if ok != (ValidTenant(s) == nil) {
			t.Fatalf("hashTenant(%q) valid=%v but ValidTenant says %v", s, ok, ValidTenant(s))
		}
		if ok {
			ref := fnv.New64a()
			ref.Write([]byte(s))
			if h != ref.Sum64() {
				t.Fatalf("hash of %q = %#x, want %#x", s, h, ref.Sum64())
			}
		}
	})
}
