package access

import "strings"

// wildcard matches s against a pattern with AWS's two wildcards, * (any
// run, also empty) and ? (one character), the way Action, Resource and the
// *Like condition operators match ("IAM JSON policy elements: Resource",
// IAM User Guide). fold compares case-insensitively (actions are).
func wildcard(pattern, s string, fold bool) bool {
	eq := func(a, b byte) bool {
		if a == b {
			return true
		}
		return fold && lower(a) == lower(b)
	}
	// Iterative glob with one backtrack point: linear in practice, no
	// recursion on long ARNs, no allocation.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || eq(pattern[p], s[i])):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// lower folds an ASCII letter (actions and their services are ASCII).
func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// actionMatches reports whether a policy's action pattern covers action.
// The service prefixes are compared first: most patterns name another
// service.
func actionMatches(pattern, action string) bool {
	if pattern == "*" {
		return true
	}
	ps, _, pok := strings.Cut(pattern, ":")
	as, _, aok := strings.Cut(action, ":")
	if pok && aok && !strings.ContainsAny(ps, "*?") && !strings.EqualFold(ps, as) {
		return false
	}
	return wildcard(pattern, action, true)
}

// resourceMatches reports whether a policy's resource pattern covers arn.
func resourceMatches(pattern, arn string) bool {
	return pattern == "*" || wildcard(pattern, arn, false)
}

// anyMatches reports whether one of patterns covers s.
func anyMatches(patterns []string, s string, match func(p, s string) bool) bool {
	for _, p := range patterns {
		if match(p, s) {
			return true
		}
	}
	return false
}

// ARN is an ARN's fields ("Amazon Resource Names", AWS General Reference).
type ARN struct {
	Partition, Service, Region, Account, Resource string
}

// ParseARN splits an ARN; ok is false when s is not one.
func ParseARN(s string) (ARN, bool) {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" {
		return ARN{}, false
	}
	return ARN{Partition: parts[1], Service: parts[2], Region: parts[3], Account: parts[4], Resource: parts[5]}, true
}
