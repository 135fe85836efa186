// Package isolation audits rendered cell programs for the property that
// makes a cell a cell: it shares nothing with any other cell. A resource of
// one cell must not reference — by dependency or by input value — another
// cell's resources, ids, ARNs or names; cell networks must not overlap; and
// a cell's access to the shared fleet bucket must stay inside its own
// prefix.
package isolation

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/props"
)

// Cell is one rendered cell.
type Cell struct {
	ID          string
	CIDR        string // the VPC range the fleet assigned
	FleetBucket string
	Resources   []*offline.Resource
}

// Violation is one breach of isolation.
type Violation struct {
	Cell     string `json:"cell"`
	Resource string `json:"resource,omitempty"` // logical name
	Type     string `json:"type,omitempty"`
	Property string `json:"property,omitempty"`
	Other    string `json:"other,omitempty"` // the other cell involved
	Rule     string `json:"rule"`
	Message  string `json:"message"`
}

func (v Violation) String() string {
	where := v.Cell
	if v.Resource != "" {
		where += "/" + v.Resource
	}
	if v.Property != "" {
		where += "." + v.Property
	}
	return where + ": " + v.Message
}

// Rules checked.
const (
	RuleCIDROverlap     = "cidr-overlap"
	RuleCrossReference  = "cross-reference"
	RuleCrossDependency = "cross-dependency"
	RuleSharedPrefix    = "storage-prefix"
)

// Result is the audit's verdict.
type Result struct {
	OK         bool        `json:"ok"`
	Violations []Violation `json:"violations"`
}

// identityOutputs are output properties that identify a resource physically.
var identityOutputs = []string{"arn", "name", "url", "dnsName", "endpoint", "readerEndpoint",
	"primaryEndpointAddress", "readerEndpointAddress", "qualifiedArn", "bucket", "clusterIdentifier", "userId"}

// Check audits the cells against each other.
func Check(cells []Cell) Result {
	var vs []Violation
	vs = append(vs, overlaps(cells)...)

	owner := map[string]string{} // identifying token -> cell id
	for _, c := range cells {
		for _, r := range c.Resources {
			for _, t := range tokens(r) {
				if prev, ok := owner[t]; ok && prev != c.ID {
					// The same physical identity in two cells is itself a breach
					// (two cells would fight over one resource).
					vs = append(vs, Violation{Cell: c.ID, Resource: r.Name, Type: r.Type, Other: prev, Rule: RuleCrossReference,
						Message: fmt.Sprintf("has the same identity %q as a resource of %s", t, prev)})
					continue
				}
				owner[t] = c.ID
			}
		}
	}
	ids := make(map[string]bool, len(cells))
	for _, c := range cells {
		ids[c.ID] = true
	}
	for _, c := range cells {
		vs = append(vs, references(c, ids, owner)...)
		vs = append(vs, prefixes(c)...)
	}
	sort.SliceStable(vs, func(i, j int) bool {
		if vs[i].Cell != vs[j].Cell {
			return vs[i].Cell < vs[j].Cell
		}
		return vs[i].Resource < vs[j].Resource
	})
	if vs == nil {
		vs = []Violation{}
	}
	return Result{OK: len(vs) == 0, Violations: vs}
}

func tokens(r *offline.Resource) []string {
	t := []string{r.URN}
	if r.ID != "" {
		t = append(t, r.ID)
	}
	if !r.Custom {
		return t
	}
	for _, k := range identityOutputs {
		if v, ok := r.Outputs[resource.PropertyKey(k)]; ok && v.IsString() && len(v.StringValue()) >= 8 {
			t = append(t, v.StringValue())
		}
	}
	return t
}

// overlaps checks the assigned CIDRs and every VPC the programs declare.
func overlaps(cells []Cell) []Violation {
	type net struct {
		cell, resource string
		prefix         netip.Prefix
	}
	var nets []net
	var vs []Violation
	for _, c := range cells {
		declared := false
		for _, r := range c.Resources {
			if r.Type != "aws:ec2/vpc:Vpc" {
				continue
			}
			if v, ok := r.Inputs["cidrBlock"]; ok && v.IsString() {
				declared = true
				p, err := netip.ParsePrefix(v.StringValue())
				if err != nil {
					vs = append(vs, Violation{Cell: c.ID, Resource: r.Name, Type: r.Type, Property: "cidrBlock", Rule: RuleCIDROverlap,
						Message: fmt.Sprintf("unparsable CIDR %q", v.StringValue())})
					continue
				}
				nets = append(nets, net{c.ID, r.Name, p.Masked()})
			}
		}
		if !declared && c.CIDR != "" {
			if p, err := netip.ParsePrefix(c.CIDR); err == nil {
				nets = append(nets, net{c.ID, "", p.Masked()})
			}
		}
	}
	for i := range nets {
		for j := i + 1; j < len(nets); j++ {
			a, b := nets[i], nets[j]
			if a.cell == b.cell || !a.prefix.Overlaps(b.prefix) {
				continue
			}
			vs = append(vs, Violation{Cell: b.cell, Resource: b.resource, Type: "aws:ec2/vpc:Vpc", Property: "cidrBlock", Other: a.cell, Rule: RuleCIDROverlap,
				Message: fmt.Sprintf("VPC %s overlaps %s of %s: cells must never share address space (give each cell its own index)", b.prefix, a.prefix, a.cell)})
		}
	}
	return vs
}

func references(c Cell, ids map[string]bool, owner map[string]string) []Violation {
	var vs []Violation
	for _, r := range c.Resources {
		if r.Parent != "" {
			if o, ok := owner[r.Parent]; ok && o != c.ID {
				vs = append(vs, Violation{Cell: c.ID, Resource: r.Name, Type: r.Type, Other: o, Rule: RuleCrossDependency,
					Message: fmt.Sprintf("is parented to a resource of %s", o)})
			}
		}
		for _, d := range r.DependsOn {
			if o, ok := owner[d]; ok && o != c.ID {
				vs = append(vs, Violation{Cell: c.ID, Resource: r.Name, Type: r.Type, Other: o, Rule: RuleCrossDependency,
					Message: fmt.Sprintf("depends on %s of %s", d, o)})
			}
		}
		reported := map[string]bool{}
		for _, k := range r.Inputs.StableKeys() {
			props.Strings(string(k), r.Inputs[k], func(path, s string) {
				for _, other := range mentions(s, c.ID, ids, owner) {
					key := path + "\x00" + other.cell
					if reported[key] {
						continue
					}
					reported[key] = true
					vs = append(vs, Violation{Cell: c.ID, Resource: r.Name, Type: r.Type, Property: path, Other: other.cell, Rule: RuleCrossReference,
						Message: fmt.Sprintf("references %s of %s (%q)", other.what, other.cell, other.token)})
				}
			})
		}
	}
	return vs
}

type mention struct{ cell, what, token string }

// mentions finds, in one input string of cell self, the identities of other
// cells: their ids, ARNs, URNs and physical names. Identities are matched
// as whole tokens — the string itself, or a piece of it between quotes,
// commas, brackets, spaces, '=' — and, inside such a piece, between ':'
// and '/' (the id inside an ARN). Matching whole tokens keeps the audit
// linear in the size of the fleet.
func mentions(s, self string, ids map[string]bool, owner map[string]string) []mention {
	var out []mention
	for _, id := range cellIDs(s, ids) {
		if id != self {
			out = append(out, mention{id, "the cell id", id})
		}
	}
	seen := map[string]bool{}
	check := func(tok string) {
		if len(tok) < 8 || seen[tok] {
			return
		}
		seen[tok] = true
		if o, ok := owner[tok]; ok && o != self {
			out = append(out, mention{o, "a resource", tok})
		}
	}
	check(s)
	for _, piece := range strings.FieldsFunc(s, isOuterDelim) {
		check(piece)
		for _, sub := range strings.FieldsFunc(piece, isInnerDelim) {
			check(sub)
		}
	}
	return out
}

func isOuterDelim(r rune) bool {
	switch r {
	case '"', '\'', ',', '[', ']', '{', '}', '(', ')', ' ', '\t', '\n', '\r', '=', ';':
		return true
	}
	return false
}

func isInnerDelim(r rune) bool { return r == ':' || r == '/' }

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// cellIDs lists the cell ids s mentions. At each position the longest id
// wins, so "cell-a-1-vpc" mentions cell-a-1 and not cell-a, and an id glued
// to letters or digits ("cell-bb") is not a mention of cell-b. Candidates
// start at a run of letters, digits and hyphens or after one of its
// hyphens, and end before a hyphen or at the run's end.
func cellIDs(s string, ids map[string]bool) []string {
	var found []string
	seen := map[string]bool{}
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) && s[i] != '-' {
			i++
			continue
		}
		j := i
		for j < len(s) && (isWordByte(s[j]) || s[j] == '-') {
			j++
		}
		run := s[i:j]
		for start := 0; start < len(run); {
			best := ""
			if start == 0 || run[start-1] == '-' {
				for end := len(run); end > start; end-- {
					if (end == len(run) || run[end] == '-') && ids[run[start:end]] {
						best = run[start:end]
						break
					}
				}
			}
			if best != "" {
				if !seen[best] {
					seen[best] = true
					found = append(found, best)
				}
				start += len(best)
				continue
			}
			start++
		}
		i = j
	}
	return found
}

// prefixes checks every IAM policy of the cell: object access in the fleet
// bucket must stay under cells/<id>/, and listing must be conditioned on it.
func prefixes(c Cell) []Violation {
	if c.FleetBucket == "" {
		return nil
	}
	var vs []Violation
	own := "cells/" + c.ID + "/"
	bucketARNPart := ":s3:::" + c.FleetBucket
	for _, r := range c.Resources {
		if !strings.HasPrefix(r.Type, "aws:iam/") {
			continue
		}
		for _, key := range []resource.PropertyKey{"policy", "inlinePolicies"} {
			v, ok := r.Inputs[key]
			if !ok {
				continue
			}
			props.Strings(string(key), v, func(path, doc string) {
				for _, res := range policyResources(doc) {
					i := strings.Index(res, bucketARNPart)
					if i < 0 {
						continue
					}
					rest := res[i+len(bucketARNPart):]
					if rest == "" || strings.HasPrefix(rest, "/"+own) {
						continue // the bucket itself (ListBucket) or the cell's own prefix
					}
					vs = append(vs, Violation{Cell: c.ID, Resource: r.Name, Type: r.Type, Property: path, Rule: RuleSharedPrefix,
						Message: fmt.Sprintf("grants access to %s, outside the cell's own prefix %s", res, own)})
				}
			})
		}
	}
	return vs
}

// policyResources extracts every Resource entry of an IAM policy document.
func policyResources(doc string) []string {
	var out []string
	for _, st := range statements(doc) {
		if st.effect() == "Allow" {
			out = append(out, st.resources()...)
		}
	}
	return out
}
