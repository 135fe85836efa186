package awsfacts

import (
	"fmt"
	"strconv"
	"strings"
)

// CacheIAMAuthDoc is where the engine versions IAM authentication needs come
// from: Amazon ElastiCache User Guide, "Authenticating with IAM",
// Limitations ("IAM authentication is available when using ElastiCache for
// Valkey 7.2 and above or Redis OSS version 7.0 and above"),
// docs.aws.amazon.com/AmazonElastiCache/latest/dg/auth-iam.html.
const CacheIAMAuthDoc = `Amazon ElastiCache User Guide, "Authenticating with IAM", Limitations: IAM authentication is available with Valkey 7.2 and above or Redis OSS 7.0 and above`

// CacheIAMAuthMinimum is the oldest engine version of engine ("valkey",
// "redis") whose caches accept IAM-authenticated users.
func CacheIAMAuthMinimum(engine string) string {
	if strings.EqualFold(engine, "valkey") {
		return "7.2"
	}
	return "7.0"
}

// CacheIAMAuthProblem says why a cache of engine at version cannot
// authenticate users with IAM, or nil. version is an ElastiCache engine
// version: "7.1", "6.2", "8", or "6.x" (pulumi-aws's way to ask for the
// latest 6 minor). An unparseable version is a problem too: a check that
// cannot read the version must not pass it.
func CacheIAMAuthProblem(engine, version string) error {
	min := CacheIAMAuthMinimum(engine)
	got, ok := majorMinor(version)
	if !ok {
		return fmt.Errorf("cache engine version %q is not a version IAM authentication can be checked against (it needs %s %s or later)", version, engineLabel(engine), min)
	}
	want, _ := majorMinor(min)
	if got[0] < want[0] || (got[0] == want[0] && got[1] < want[1]) {
		return fmt.Errorf("IAM authentication needs %s %s or later, but the cache runs %s %s (%s)", engineLabel(engine), min, engineLabel(engine), version, CacheIAMAuthDoc)
	}
	return nil
}

func engineLabel(engine string) string {
	if strings.EqualFold(engine, "valkey") {
		return "Valkey"
	}
	return "Redis OSS"
}

// majorMinor parses "7", "7.1", "7.1.0" or "6.x" ("x": minor 0, the
// lowest the pattern allows).
func majorMinor(v string) ([2]int, bool) {
	parts := strings.Split(v, ".")
	if len(parts) == 0 || len(parts) > 3 {
		return [2]int{}, false
	}
	var out [2]int
	for i := 0; i < 2 && i < len(parts); i++ {
		if i == 1 && parts[i] == "x" {
			continue
		}
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 {
			return [2]int{}, false
		}
		out[i] = n
	}
	return out, true
}
