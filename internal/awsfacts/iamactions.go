package awsfacts

import (
	"sort"
	"strings"
)

// IAMActionKnown reports whether AWS defines action ("service:Action") as
// of the iam-data release the table was generated from (IAMDataVersion). IAM
// accepts a policy naming an action that does not exist and the statement
// then silently grants or denies nothing, so a misspelt or retired action is
// a mistake nothing else would show.
//
// Service prefixes and action names compare case-insensitively, as IAM
// does. A wildcard action ("s3:Get*", "kms:*", "s3:?etObject") is known when
// it matches at least one action of its service; "*" alone is always known.
//
// serviceCovered is false when the table does not carry the action's
// service (it holds only the services cellctl's policies use): known is
// then false too, and the caller must report the action as not checked, not
// as wrong. An action that no service could define — no colon, an empty
// part, a second colon, a wildcard or other stray character in the service
// prefix (IAM takes wildcards in the action name only) — is (false, true):
// it is wrong whatever the table holds.
func IAMActionKnown(action string) (known bool, serviceCovered bool) {
	if action == "*" {
		return true, true
	}
	service, name, ok := strings.Cut(action, ":")
	if !ok || !validServicePrefix(service) || name == "" || strings.Contains(name, ":") {
		return false, true
	}
	names, ok := iamActions[strings.ToLower(service)]
	if !ok {
		return false, false
	}
	if strings.ContainsAny(name, "*?") {
		for _, n := range names {
			if globFold(name, n) {
				return true, true
			}
		}
		return false, true
	}
	i := sort.Search(len(names), func(i int) bool { return compareFold(names[i], name) >= 0 })
	return i < len(names) && compareFold(names[i], name) == 0, true
}

// validServicePrefix: AWS service prefixes are letters, digits and hyphens
// ("s3", "rds-db", "elasticloadbalancing").
func validServicePrefix(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// lowerASCII folds an ASCII upper-case letter. Action names are ASCII (the
// generator refuses any other), so folding ASCII alone is exact for them,
// and a non-ASCII byte in a query simply never matches.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// compareFold orders strings by their ASCII-lower-cased bytes: the order
// gen-actions.js sorts each service's names in, so the binary search needs
// no lower-cased copy of the table.
func compareFold(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := lowerASCII(a[i]), lowerASCII(b[i])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// globFold matches name against an IAM action pattern, ASCII
// case-insensitively: "*" is any run of characters (none included), "?" is
// one. It backtracks only to the last "*" seen, which is enough for
// patterns of this kind and keeps a match linear in practice.
func globFold(pattern, name string) bool {
	p, n := 0, 0
	star, mark := -1, 0 // the last "*" in pattern, and where name stood then
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, n
			p++
		case p < len(pattern) && (pattern[p] == '?' || lowerASCII(pattern[p]) == lowerASCII(name[n])):
			p++
			n++
		case star >= 0:
			// Let the last "*" take one more character and retry.
			mark++
			p, n = star+1, mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
