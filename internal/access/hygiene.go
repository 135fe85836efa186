package access

import (
	"fmt"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/policy"
)

// The model's findings that are not paths: what a later change could lose
// (a data key's lifetime) and what a policy says that AWS would ignore
// (an action it does not define).

// KeyLifetime finds the customer managed keys the render declares that
// encrypt data at rest (a bucket's default encryption, a queue's, a
// secret's) and could be deleted by a later change: each must be
// protected and retained, for once a key is gone every object written
// under it is unreadable ("Deleting AWS KMS keys", KMS Developer Guide).
// With both, a program that stops declaring the key is refused by the
// engine (protect) and the key stays in AWS even once unprotected
// (retainOnDelete). Keys the fleet does not declare (AWS managed, or
// another team's) are not the fleet's to delete.
func (m *Model) KeyLifetime() []string {
	var out []string
	for _, r := range m.Resources() {
		k := m.resources[r.Key]
		if r.Key == "" || k == nil || k.Owner == "" || awsManagedService(r.Key) != "" {
			continue
		}
		if !k.Protected || !k.Retained {
			out = append(out, fmt.Sprintf("%s encrypts %s but is not protected and retained (protect: %v, retainOnDelete: %v): a change that drops it would delete the key and lose the data", k.Label, r.Label, k.Protected, k.Retained))
		}
	}
	return out
}

// UnknownActions are the actions the fleet's policies name that AWS does
// not define (awsfacts.IAMActionKnown, from AWS's service authorization
// reference): a misspelt or retired action is silently inert in IAM, so
// a grant meant to work would not. Each is named with the policy and
// statement that hold it. Actions of services the table does not carry
// are not judged.
func (m *Model) UnknownActions() []string {
	var out []string
	seen := map[*Policy]bool{}
	check := func(p *Policy) {
		if p == nil || seen[p] {
			return
		}
		seen[p] = true
		for i, s := range p.Doc.Statement {
			for _, a := range append(append(policy.Values{}, s.Action...), s.NotAction...) {
				if known, covered := awsfacts.IAMActionKnown(a); covered && !known {
					out = append(out, fmt.Sprintf("%s statement %s names %s, which AWS does not define", p.Name, s.Label(i), a))
				}
			}
		}
	}
	for _, p := range m.Principals() {
		for i := range p.Identity {
			check(&p.Identity[i])
		}
	}
	for _, r := range m.Resources() {
		check(r.Policy)
	}
	return out
}
