package drift

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Kind is one of the three checks; findings carry the kind of the check
// that found them, and --fail-on selects kinds.
type Kind string

const (
	KindSkew   Kind = "skew"
	KindBehind Kind = "behind"
	KindCloud  Kind = "cloud"
)

// Kinds is every check, in report order.
var Kinds = []Kind{KindSkew, KindBehind, KindCloud}

// ParseKinds reads a comma-separated list of checks ("skew,cloud").
func ParseKinds(s string) ([]Kind, error) {
	var out []Kind
	for _, part := range strings.Split(s, ",") {
		k := Kind(strings.TrimSpace(part))
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("unknown check %q (allowed: skew, behind, cloud)", part)
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// Finding statuses.
const (
	// skew
	StatusOutlier   = "outlier"   // a must_equal key differs from the baseline
	StatusDuplicate = "duplicate" // a must_unique key is shared
	// behind
	StatusChanged     = "changed"      // deployed value ≠ repo value (behind), live ≠ state (cloud)
	StatusNotDeployed = "not_deployed" // declared in the repo, never deployed
	// StatusAhead: a rolled-back release left the cell's schema past the
	// schema of the release it runs (Old, the release's → New, what it
	// is), and the old image is not proven to run on it. Not behind: the
	// other cells must not be migrated to it, nor this one down.
	StatusAhead = "ahead"
	// StatusMissingState: the routing table sends tenants to the cell but
	// the backend holds no state for it — its resources are likely live.
	StatusMissingState = "missing_state"
	// cloud
	StatusDeleted    = "deleted"     // gone from the cloud
	StatusNotChecked = "not_checked" // could not be read: unknown, never clean
	// any check
	StatusUnreadable = "unreadable" // the signal itself could not be read
)

// Finding is one thing the operator must look at.
type Finding struct {
	Kind   Kind   `json:"kind"`
	Cell   string `json:"cell"`
	Status string `json:"status"`
	// Key and Class: skew and behind findings.
	Key   string `json:"key,omitempty"`
	Class Class  `json:"class,omitempty"`
	// Resource: cloud findings (URN, type, logical name).
	URN      string `json:"urn,omitempty"`
	Type     string `json:"type,omitempty"`
	Resource string `json:"resource,omitempty"`
	Property string `json:"property,omitempty"`
	// Old → New: baseline → cell (skew), deployed → repo (behind),
	// Pulumi state → live cloud (cloud). Secrets are "[secret]".
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// Detail says more in words (the reason for an exception, why a
	// resource was not checked).
	Detail string `json:"detail,omitempty"`
	// Next is what to do about it.
	Next string `json:"next"`
}

// What names the subject of the finding: a key, or resource.property.
func (f Finding) What() string {
	switch {
	case f.Key != "":
		return f.Key
	case f.Property != "":
		return f.Resource + " " + f.Property
	default:
		return f.Resource
	}
}

// CellSummary counts one cell's findings.
type CellSummary struct {
	Cell       string `json:"cell"`
	Skew       int    `json:"skew"`
	Behind     int    `json:"behind"`
	Cloud      int    `json:"cloud"`
	NotChecked int    `json:"notChecked"`
	// Excepted skew and Ignored cloud changes are counted, not findings.
	Excepted int `json:"excepted"`
	Ignored  int `json:"ignored"`
	// Deployed and Repo are the cell's image as deployed and in the repo
	// (--behind; "" when unknown).
	Deployed string `json:"deployedImage,omitempty"`
	Repo     string `json:"repoImage,omitempty"`
}

// Total is the cell's number of findings.
func (c CellSummary) Total() int { return c.Skew + c.Behind + c.Cloud }

// Report is one drift audit.
type Report struct {
	Checks []Kind `json:"checks"`
	FailOn []Kind `json:"failOn"`
	// Cells are the audited cells, worst first.
	Cells []CellSummary `json:"cells"`
	// Findings in the order of Cells, then check, then subject.
	Findings []Finding `json:"findings"`
	// Excepted are skew outliers the policy allows, with its reason.
	Excepted []Finding `json:"excepted"`
	// Skew is the cells × keys view (--skew): every key where some cell
	// differs.
	Skew []SkewRow `json:"skew,omitempty"`
	// Notes for the operator that are not findings.
	Notes []string `json:"notes,omitempty"`
}

// Failing counts the findings of the kinds in FailOn.
func (r *Report) Failing() int {
	n := 0
	for _, f := range r.Findings {
		if slices.Contains(r.FailOn, f.Kind) {
			n++
		}
	}
	return n
}

// Has reports whether the report ran check k.
func (r *Report) Has(k Kind) bool { return slices.Contains(r.Checks, k) }

// Build joins the checks' results into a report: cells worst first
// (most findings, then most cloud findings, then id), findings grouped
// by cell in that order.
func Build(checks, failOn []Kind, cells []string, parts ...Part) *Report {
	r := &Report{Checks: checks, FailOn: failOn, Findings: []Finding{}, Excepted: []Finding{}}
	sum := map[string]*CellSummary{}
	for _, c := range cells {
		sum[c] = &CellSummary{Cell: c}
	}
	get := func(c string) *CellSummary {
		if s, ok := sum[c]; ok {
			return s
		}
		s := &CellSummary{Cell: c}
		sum[c] = s
		return s
	}
	for _, p := range parts {
		r.Findings = append(r.Findings, p.Findings...)
		r.Excepted = append(r.Excepted, p.Excepted...)
		r.Notes = append(r.Notes, p.Notes...)
		if p.Skew != nil {
			r.Skew = p.Skew
		}
		for _, f := range p.Findings {
			s := get(f.Cell)
			switch {
			case f.Kind == KindSkew:
				s.Skew++
			case f.Kind == KindBehind:
				s.Behind++
			case f.Status == StatusNotChecked:
				s.Cloud++
				s.NotChecked++
			default:
				s.Cloud++
			}
		}
		for _, f := range p.Excepted {
			get(f.Cell).Excepted++
		}
		for c, n := range p.Ignored {
			get(c).Ignored += n
		}
		for c, img := range p.Images {
			s := get(c)
			s.Deployed, s.Repo = img[0], img[1]
		}
	}
	for _, s := range sum {
		r.Cells = append(r.Cells, *s)
	}
	sort.Slice(r.Cells, func(i, j int) bool {
		a, b := r.Cells[i], r.Cells[j]
		if a.Total() != b.Total() {
			return a.Total() > b.Total()
		}
		if a.Cloud != b.Cloud {
			return a.Cloud > b.Cloud
		}
		return a.Cell < b.Cell
	})
	rank := map[string]int{}
	for i, c := range r.Cells {
		rank[c.Cell] = i
	}
	kindRank := func(k Kind) int { return slices.Index(Kinds, k) }
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if rank[a.Cell] != rank[b.Cell] {
			return rank[a.Cell] < rank[b.Cell]
		}
		if a.Kind != b.Kind {
			return kindRank(a.Kind) < kindRank(b.Kind)
		}
		return a.What() < b.What()
	})
	return r
}

// Part is what one check contributes to a report.
type Part struct {
	Findings []Finding
	Excepted []Finding
	Skew     []SkewRow
	Notes    []string
	// Ignored counts cloud changes the policy ignores, per cell.
	Ignored map[string]int
	// Images holds each cell's [deployed, repo] image (behind).
	Images map[string][2]string
	// NoState lists the cells the check found without state (cloud).
	NoState []string
}
