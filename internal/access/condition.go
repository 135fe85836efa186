package access

import (
	"fmt"
	"strings"

	"github.com/cellctl/cellctl/internal/policy"
)

// knownKeys are the condition keys the evaluator can decide: the request
// fields a path carries. A key outside this list makes the statement
// undecidable — never allowed by guess. Keys compare case-insensitively
// ("IAM JSON policy elements: Condition", IAM User Guide).
var knownKeys = map[string]bool{
	"aws:securetransport":      true,
	"aws:sourcearn":            true,
	"aws:sourceaccount":        true,
	"aws:principalarn":         true,
	"aws:principalaccount":     true,
	"aws:principalservicename": true,
	"aws:viaawsservice":        true,
	"s3:prefix":                true,
	// A request through an access point carries them
	// (access.bucketForm); a direct request does not.
	"s3:dataaccesspointaccount":                             true,
	"s3:dataaccesspointarn":                                 true,
	"s3:accesspointnetworkorigin":                           true,
	"kms:viaservice":                                        true,
	"kms:calleraccount":                                     true,
	"route53:changeresourcerecordsetsnormalizedrecordnames": true,
	"route53:changeresourcerecordsetsrecordtypes":           true,
	"route53:changeresourcerecordsetsactions":               true,
	"iam:passedtoservice":                                   true,
}

// keyKnown reports whether the evaluator decides key. Every
// kms:EncryptionContext:<name> key is known: the path carries the
// encryption context the service sends.
func keyKnown(key string) bool {
	k := strings.ToLower(key)
	return knownKeys[k] || strings.HasPrefix(k, "kms:encryptioncontext:")
}

// undecidable is a condition the evaluator cannot decide.
type undecidable struct{ reason string }

func (u undecidable) Error() string { return u.reason }

// conditionsHold evaluates a statement's Condition block against the
// request context: every operator and every key must hold (AND), any
// value of a key may match (OR) ("Creating a condition with multiple keys
// or values", IAM User Guide).
func conditionsHold(c policy.Conditions, ctx lookup) (bool, error) {
	for op, keys := range c {
		for key, want := range keys {
			if !keyKnown(key) {
				return false, undecidable{fmt.Sprintf("condition key %s is not one cellctl evaluates", key)}
			}
			got, present := ctx(key)
			if present && strings.EqualFold(key, NormalizedRecordNamesKey) {
				// Route 53 normalizes the names before IAM compares them
				// (NormalizeRecordName).
				norm := make([]string, len(got))
				for i, n := range got {
					norm[i] = NormalizeRecordName(n)
				}
				got = norm
			}
			ok, err := condition(op, got, present, want)
			if err != nil {
				return false, err
			}
			if !ok {
				return false, nil
			}
		}
	}
	return true, nil
}

// lookup reads a condition key from a request's context.
type lookup func(key string) ([]string, bool)

// contextValues reads a key from the request context case-insensitively.
func contextValues(ctx map[string][]string, key string) ([]string, bool) {
	if v, ok := ctx[key]; ok {
		return v, true
	}
	for k, v := range ctx {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

// condition evaluates one operator for one key: got are the request's
// values (present reports whether the key is in the request at all).
func condition(op string, got []string, present bool, want []string) (bool, error) {
	base := op
	set := ""
	for _, q := range []string{"ForAnyValue:", "ForAllValues:"} {
		if strings.HasPrefix(base, q) {
			set, base = q, strings.TrimPrefix(base, q)
		}
	}
	ifExists := strings.HasSuffix(base, "IfExists")
	base = strings.TrimSuffix(base, "IfExists")
	if base == "Null" {
		// Null:"true" holds when the key is absent.
		for _, w := range want {
			if strings.EqualFold(w, "true") == !present {
				return true, nil
			}
		}
		return false, nil
	}
	match, negated, err := operator(base)
	if err != nil {
		return false, err
	}
	if !present {
		// A missing key: IfExists and ForAllValues hold; a negated operator
		// holds; any other does not ("...IfExists condition operators",
		// "Condition operators" / "Multivalued context keys", IAM User
		// Guide).
		return ifExists || set == "ForAllValues:" || negated, nil
	}
	matchesOne := func(v string) bool {
		for _, w := range want {
			if match(w, v) {
				return true
			}
		}
		return false
	}
	switch set {
	case "ForAllValues:":
		for _, v := range got {
			if matchesOne(v) == negated {
				return false, nil
			}
		}
		return true, nil
	default: // single-valued and ForAnyValue: any value matching
		hit := false
		for _, v := range got {
			if matchesOne(v) {
				hit = true
				break
			}
		}
		return hit != negated, nil
	}
}

// operator returns the match function of a condition operator and whether
// it is a negated one. An operator cellctl does not evaluate is
// undecidable.
func operator(op string) (func(want, got string) bool, bool, error) {
	eq := func(w, g string) bool { return w == g }
	fold := func(w, g string) bool { return strings.EqualFold(w, g) }
	like := func(w, g string) bool { return wildcard(w, g, false) }
	boolean := func(w, g string) bool { return strings.EqualFold(w, g) }
	switch op {
	case "StringEquals":
		return eq, false, nil
	case "StringNotEquals":
		return eq, true, nil
	case "StringEqualsIgnoreCase":
		return fold, false, nil
	case "StringNotEqualsIgnoreCase":
		return fold, true, nil
	case "StringLike":
		return like, false, nil
	case "StringNotLike":
		return like, true, nil
	// ArnEquals and ArnLike behave alike: both take wildcards in each of
	// the ARN's fields ("ARN condition operators", IAM User Guide).
	case "ArnEquals", "ArnLike":
		return like, false, nil
	case "ArnNotEquals", "ArnNotLike":
		return like, true, nil
	case "Bool":
		return boolean, false, nil
	}
	return nil, false, undecidable{fmt.Sprintf("condition operator %s is not one cellctl evaluates", op)}
}
