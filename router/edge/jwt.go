package edge

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The tenant from a JWT claim (cells:tenantFrom: jwt:<claim>).
//
// The handler reads the claim from the payload of the bearer token in the
// Authorization header WITHOUT verifying the token: it needs the tenant
// only to pick a cell, and the cell authenticates the token as it would
// without the router — a forged claim gets a request to a cell that
// refuses it, never another tenant's data (cells share nothing). A request
// whose token is malformed in any way has no tenant and gets the 400 a
// request with an invalid tenant header gets; one without an Authorization
// header falls back to the Host under the tenant host domains, like one
// without the tenant header. CloudFront shows the Authorization header to
// an origin-request function because the router's behaviors forward every
// viewer header with caching disabled (AllViewer + CachingDisabled;
// CloudFront Developer Guide, "HTTP 401 status code (Unauthorized)").
// routing.js tenantFromJWT is the same rule; the golden request vectors
// and FuzzTenantFromJWT hold the two together.

// MaxAuthorizationBytes is the longest Authorization value the handler
// reads a tenant from.
const MaxAuthorizationBytes = 8192

// TenantFromJWT is the string value of claim in the payload of the bearer
// JWT in an Authorization header value ("Bearer <header>.<payload>.<signature>",
// RFC 6750 §2.1; the scheme is case-insensitive), or "" when there is
// none: another scheme, not three base64url segments (RFC 7515 §3.1, no
// padding), a payload that is not UTF-8 JSON text of an object, no such
// member, or a member that is not a string.
func TenantFromJWT(value, claim string) string {
	if len(value) < 8 || len(value) > MaxAuthorizationBytes || !strings.EqualFold(value[:6], "bearer") || value[6] != ' ' {
		return ""
	}
	token := strings.TrimLeft(value[7:], " ")
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || !base64url(parts[0]) || !base64url(parts[1]) || !base64url(parts[2]) {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || !utf8.Valid(payload) {
		return ""
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(payload, &doc); err != nil || doc == nil {
		return ""
	}
	raw, ok := doc[claim]
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func base64url(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
