package router

import (
	"fmt"
	"unicode/utf8"

	"github.com/cellctl/cellctl/internal/diag"
)

// Tenant ids.
//
// A tenant id is 1–128 bytes of valid UTF-8. Any Unicode letter, digit,
// mark, punctuation or symbol is allowed (ids like "müller-gmbh" or "東京"
// are fine); what is refused is what makes two ids look the same or breaks
// a header or a log line: whitespace, control characters, invisible
// formatting characters (zero-width, bidi controls, BOM) and the
// replacement character U+FFFD (the sign of an id that was decoded wrong).
//
// The rule is a fixed list of code point ranges rather than Go's
// unicode.IsPrint so that the edge handler (JavaScript) applies exactly
// the same rule whatever Unicode version either runtime ships; the golden
// vectors in testdata/routing check both sides at every range boundary.
// Ids are case-sensitive; the edge lowercases only a tenant taken from the
// Host header, because host names are case-insensitive.
//
// Ids are not Unicode-normalised anywhere: an id is its bytes. A table must
// not hold two overrides that are the same text in different normalization
// forms ("café" in NFC and NFD): the loader and the edge's compile both
// refuse it (lookalike in validate.go), since clients cannot tell them apart.

// MaxTenantBytes is the longest tenant id, in UTF-8 bytes.
const MaxTenantBytes = 128

// TenantRule says what a tenant id may be, for error messages and help text.
const TenantRule = "1-128 bytes of UTF-8 without whitespace, control or invisible formatting characters"

// forbiddenRanges are the code points a tenant id must not contain
// (inclusive). Keep in sync with FORBIDDEN in edge/routing.js; the golden
// vectors fail when they drift.
var forbiddenRanges = [...][2]rune{
	{0x0000, 0x0020}, // C0 controls and space
	{0x007F, 0x00A0}, // DEL, C1 controls, no-break space
	{0x00AD, 0x00AD}, // soft hyphen (invisible)
	{0x1680, 0x1680}, // ogham space mark
	{0x180E, 0x180E}, // mongolian vowel separator
	{0x2000, 0x200F}, // spaces, zero-width space/joiners, LRM, RLM
	{0x2028, 0x202F}, // line/paragraph separators, bidi embeddings, narrow no-break space
	{0x205F, 0x206F}, // medium math space, word joiner, invisible operators, bidi isolates
	{0x3000, 0x3000}, // ideographic space
	{0xD800, 0xDFFF}, // surrogates (never valid UTF-8; lone surrogates in JS strings)
	{0xFEFF, 0xFEFF}, // byte order mark / zero-width no-break space
	{0xFFF0, 0xFFFF}, // specials, including U+FFFD replacement character
}

// ForbiddenRanges returns the inclusive code point ranges a tenant id must
// not contain (a copy).
func ForbiddenRanges() [][2]rune {
	return append([][2]rune(nil), forbiddenRanges[:]...)
}

func forbidden(r rune) bool {
	if r > 0x20 && r < 0x7F {
		return false
	}
	for _, fr := range forbiddenRanges {
		if r < fr[0] {
			return false
		}
		if r <= fr[1] {
			return true
		}
	}
	return false
}

// ValidTenant reports why tenant is not a valid tenant id, or nil.
func ValidTenant(tenant string) error {
	switch {
	case len(tenant) == 0:
		return fmt.Errorf("tenant id is empty; allowed: %s", TenantRule)
	case len(tenant) > MaxTenantBytes:
		return fmt.Errorf("tenant id %s is %d bytes long; allowed: %s", diag.Echo(tenant), len(tenant), TenantRule)
	}
	i, r, invalid := firstBadRune(tenant)
	switch {
	case i < 0:
		return nil
	case invalid:
		return fmt.Errorf("tenant id %s is not valid UTF-8 (byte %#02x at byte offset %d); allowed: %s", diag.Echo(tenant), tenant[i], i, TenantRule)
	}
	return fmt.Errorf("tenant id %s contains %s at byte %d; allowed: %s", diag.Echo(tenant), runeName(r), i, TenantRule)
}

// firstBadRune returns the byte offset and rune of the first forbidden
// character, or of the first byte that is not valid UTF-8 (invalid), or
// -1. It does not allocate.
func firstBadRune(s string) (at int, r rune, invalid bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return i, r, true
		}
		if forbidden(r) {
			return i, r, false
		}
		i += size
	}
	return -1, 0, false
}

var runeNames = map[rune]string{
	' ': "space", '\t': "tab", '\n': "newline", '\r': "carriage return", 0: "NUL", 0x7F: "DEL",
	0xA0: "no-break space", 0x200B: "zero-width space", 0x200C: "zero-width non-joiner", 0x200D: "zero-width joiner",
	0x2028: "line separator", 0x2029: "paragraph separator", 0x3000: "ideographic space",
	0xFEFF: "byte order mark", 0xFFFD: "replacement character",
}

func runeName(r rune) string {
	if n, ok := runeNames[r]; ok {
		return fmt.Sprintf("%U (%s)", r, n)
	}
	return fmt.Sprintf("%U", r)
}

const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 0x100000001b3
)

// Hash is the 64-bit FNV-1a hash of the tenant id's UTF-8 bytes: the one
// hashing truth the edge handler is checked against.
func Hash(tenant string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(tenant); i++ {
		h ^= uint64(tenant[i])
		h *= fnvPrime64
	}
	return h
}

// hashTenant hashes and validates in one pass. Plain printable ASCII ids
// (the common case) cost a few branch-free operations per byte beside the
// multiply chain; anything else is re-checked rune by rune.
func hashTenant(tenant string) (h uint64, ok bool) {
	if len(tenant) == 0 || len(tenant) > MaxTenantBytes {
		return 0, false
	}
	h, unusual := fnvScan(tenant)
	return h, unusual&0x100 == 0 || validRunes(tenant)
}

// fnvScan is the FNV-1a hash of tenant and, in bit 8 of unusual, whether
// a byte is outside '!'..'~' (then validRunes decides). Small enough to
// inline, so Table.lookup runs it without a call.
func fnvScan(tenant string) (h uint64, unusual uint32) {
	h = fnvOffset64
	// c-0x21 (mod 256) is ≥ 0x5E exactly for bytes outside '!'..'~';
	// adding 0xA2 then carries into bit 8.
	for i := 0; i < len(tenant); i++ {
		c := tenant[i]
		unusual |= uint32(c-0x21) + 0xA2
		h = (h ^ uint64(c)) * fnvPrime64
	}
	return h, unusual
}

// validRunes reports whether tenant has no forbidden character and is
// valid UTF-8.
func validRunes(tenant string) bool {
	at, _, _ := firstBadRune(tenant)
	return at < 0
}
