package isolation

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/safefile"
)

// SharedFile is the declaration of the fleet's deliberate shared parts,
// inside the stack directory beside drift.yaml (the other fleet policy).
const SharedFile = "shared.yaml"

// MaxSharedBytes caps shared.yaml: a short, deliberate list.
const MaxSharedBytes = 1 << 20

// Declaration is one deliberate shared part of stacks/shared.yaml.
type Declaration struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	// Plane, when set, overrides the ledger's classification of the part
	// (for a kind cellctl does not classify, or a use it cannot see).
	Plane Plane  `json:"plane,omitempty"`
	Why   string `json:"why,omitempty"`
	Line  int    `json:"line"`
}

// Key identifies the declared part, as Part.Key does.
func (d Declaration) Key() string { return d.Kind + " " + d.ID }

// Declarations is stacks/shared.yaml.
type Declarations struct {
	File    string
	Missing bool // the fleet has no shared.yaml: nothing is declared
	Entries []Declaration
}

// LoadDeclarations reads <stackDir>/shared.yaml of the fleet at dir. A
// fleet without one declares nothing: every shared part is a finding,
// and the report prints the entries to start the file with.
func LoadDeclarations(dir, stackDir string) (*Declarations, error) {
	file := filepath.ToSlash(filepath.Join(stackDir, SharedFile))
	data, err := safefile.Read(filepath.Join(dir, file), MaxSharedBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &Declarations{File: file, Missing: true}, nil
	}
	if err != nil {
		return nil, &diag.Error{File: file, Msg: fmt.Sprintf("cannot read the shared-parts declaration: %v", err)}
	}
	return ParseDeclarations(file, data)
}

// DeclaredARNs are the ARNs of a stack's rendered resources the
// declaration lists (router: the router stack's). A resource is named the
// way the ledger names it when a cell depends on it: by its ARN's part
// (arnPartOf: a bucket by its name, anything else by its ARN) and, for
// the router's key and request path, also by its logical name (the
// ledger lists those by name). The access paths exempt these
// from the cross-account forbidden paths.
func (d *Declarations) DeclaredARNs(resources []*offline.Resource, router bool) []string {
	if len(d.Entries) == 0 {
		return nil
	}
	declared := map[string]bool{}
	for _, e := range d.Entries {
		declared[e.Key()] = true
	}
	var out []string
	for _, r := range resources {
		v, ok := r.Outputs["arn"]
		if !r.Custom || !ok || !v.IsString() {
			continue
		}
		m := arnPattern.FindStringSubmatch(v.StringValue())
		if m == nil {
			continue
		}
		a := arnPartOf(m)
		keys := []string{a.kind + " " + a.id}
		if router {
			// By name: the router's key (builder.anyKey) and its request
			// path (builder.routerStack), as the ledger lists them.
			if a.kind == KindKMSKey {
				keys = append(keys, KindKMSKey+" "+r.Name)
			}
			if kind, ok := routerRequestPath[r.Type]; ok {
				keys = append(keys, kind+" "+r.Name)
			}
		}
		for _, k := range keys {
			if declared[k] {
				out = append(out, v.StringValue())
				break
			}
		}
	}
	return out
}

// Kinds lists the part kinds the ledger derives and classifies. A
// declaration may also name the kind of an ARN the ledger does not
// classify (its service, such as "sns-topic" or "dynamodb").
func Kinds() []string {
	ks := make([]string, 0, len(classification))
	for k := range classification {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var declFields = []string{"kind", "id", "plane", "why"}

// ParseDeclarations parses shared.yaml. Every problem is reported at
// once, each as file:line: field: what is wrong and what is allowed.
func ParseDeclarations(file string, data []byte) (*Declarations, error) {
	var errs diag.List
	root, err := diag.ParseYAML(file, data)
	if err != nil {
		return nil, err
	}
	d := &Declarations{File: file}
	for _, pair := range diag.Pairs(file, "", root, &errs) {
		if pair.Key.Value != "shared" {
			errs.Add(file, pair.Key.Line, pair.Key.Value, "unknown key (allowed: shared)")
			continue
		}
		d.Entries = parseShared(file, pair.Value, &errs)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return d, nil
}

// kindShape is a part kind as written: lowercase words joined by hyphens.
func kindShape(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func parseShared(file string, n *yaml.Node, errs *diag.List) []Declaration {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		errs.Add(file, n.Line, "shared", "must be a list of {kind, id, why}, got %s", diag.KindName(n))
		return nil
	}
	var out []Declaration
	first := map[string]int{}
	for i, item := range n.Content {
		field := fmt.Sprintf("shared[%d]", i)
		vals, lines := diag.StringFields(file, field, item, declFields, errs)
		if item.Kind != yaml.MappingNode {
			continue // Pairs said so
		}
		line := func(k string) int {
			if l, ok := lines[k]; ok {
				return l
			}
			return item.Line
		}
		ok := true
		kind := vals["kind"]
		switch {
		case kind == "":
			errs.Add(file, line("kind"), field+".kind", "missing: the kind of part (%s, or an ARN's kind such as sns-topic)", strings.Join(Kinds(), ", "))
			ok = false
		case !kindShape(kind):
			errs.Add(file, line("kind"), field+".kind", "%s is not a part kind: lowercase words joined by hyphens (%s, or an ARN's kind such as sns-topic)", diag.Echo(kind), strings.Join(Kinds(), ", "))
			ok = false
		}
		if vals["id"] == "" {
			errs.Add(file, line("id"), field+".id", "missing: the part's id as `cellctl plan` shows it (a bucket name, a zone id, an ARN, a router resource name)")
			ok = false
		}
		plane := Plane(vals["plane"])
		if _, set := lines["plane"]; set && plane != RequestPath && plane != ControlPlane {
			errs.Add(file, line("plane"), field+".plane", "%s is not a plane (allowed: %s, %s)", diag.Echo(vals["plane"]), RequestPath, ControlPlane)
			ok = false
		}
		if !ok {
			continue
		}
		d := Declaration{Kind: kind, ID: vals["id"], Plane: plane, Why: vals["why"], Line: item.Line}
		if prev, dup := first[d.Key()]; dup {
			errs.Add(file, item.Line, field, "%s %s is declared twice (first on line %d)", kind, d.ID, prev)
			continue
		}
		first[d.Key()] = item.Line
		out = append(out, d)
	}
	return out
}

// Ledger is the shared-parts ledger judged against the declaration.
type Ledger struct {
	// File is the declaration (stacks/shared.yaml).
	File string `json:"file"`
	// Missing: the fleet has no declaration file, so nothing is declared.
	Missing bool `json:"missing,omitempty"`
	// Cells counts the fleet's cells, the denominator of "how many fail".
	Cells int    `json:"cells"`
	Parts []Part `json:"parts"`
	// Undeclared are the parts shared.yaml does not list: findings.
	Undeclared []Part `json:"undeclared"`
	// Stale are declarations no rendered part matches: notes (a part the
	// fleet no longer shares), not failures.
	Stale []Declaration `json:"stale"`
	OK    bool          `json:"ok"`
}

// Judge marks each part declared or not. A declaration's plane replaces
// the derived one (its why, when given, is shown beside the part).
func Judge(parts []Part, decl *Declarations, cells int) *Ledger {
	l := &Ledger{File: decl.File, Missing: decl.Missing, Cells: cells, Parts: []Part{}, Undeclared: []Part{}, Stale: []Declaration{}}
	byKey := map[string]*Declaration{}
	for i := range decl.Entries {
		byKey[decl.Entries[i].Key()] = &decl.Entries[i]
	}
	used := map[string]bool{}
	for _, p := range parts {
		if d := byKey[p.Key()]; d != nil {
			used[p.Key()] = true
			dc := *d
			p.Declared = &dc
			if d.Plane != "" && d.Plane != p.Plane {
				p.Plane, p.Why = d.Plane, "declared in "+decl.File+": "+orWhat(d.Why, "(no reason given)")
			}
		} else {
			l.Undeclared = append(l.Undeclared, p)
		}
		l.Parts = append(l.Parts, p)
	}
	for _, d := range decl.Entries {
		if !used[d.Key()] {
			l.Stale = append(l.Stale, d)
		}
	}
	l.OK = len(l.Undeclared) == 0
	return l
}

// Entry is the shared.yaml entry that declares a part, ready to paste.
func (p Part) Entry() string {
	return fmt.Sprintf("  - kind: %s\n    id: %s\n    why: \"…\"  # %s, %s of tenants", p.Kind, yamlScalar(p.ID), p.Plane, percent(p.TenantShare))
}

// StaleNote says what to do about a declaration nothing matches.
func (l *Ledger) StaleNote(d Declaration) string {
	return fmt.Sprintf("%s:%d: %s %s is declared but no longer shared by two or more cells; remove the entry", l.File, d.Line, d.Kind, d.ID)
}

// Error summarises the findings for the exit-code error.
func (l *Ledger) Error() error {
	if l.OK {
		return nil
	}
	return fmt.Errorf("shared parts: %d not declared in %s (%s)", len(l.Undeclared), l.File, l.Undeclared[0].Key()+more(len(l.Undeclared)-1))
}

func more(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

func percent(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

// Percent formats a tenant share.
func Percent(f float64) string { return percent(f) }

func yamlScalar(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return strings.TrimSuffix(string(out), "\n")
}

func orWhat(s, what string) string {
	if s == "" {
		return what
	}
	return s
}

// MaxStackFileBytes caps a stack file read for its secrets provider (the
// fleet loader's cap for configuration files).
const MaxStackFileBytes = 1 << 20

// StackSecretsProvider reads the secretsprovider: a stack file names ("":
// none, so each run's --secrets-provider). A stack file the fleet loader
// accepted parses; one that cannot be read names none.
func StackSecretsProvider(dir, file string) string {
	data, err := safefile.Read(filepath.Join(dir, file), MaxStackFileBytes)
	if err != nil {
		return ""
	}
	root, err := diag.ParseYAML(file, data)
	if err != nil || root.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k, v := root.Content[i], root.Content[i+1]; k.Value == "secretsprovider" && v.Kind == yaml.ScalarNode {
			return redactURL(strings.TrimSpace(v.Value))
		}
	}
	return ""
}

// redactURL drops a provider URL's query (passphrase providers take none,
// but a hashivault:// or awskms:// URL may carry options that are nobody's
// business in a report) and any user information.
func redactURL(u string) string {
	u, _, _ = strings.Cut(u, "?")
	if scheme, rest, ok := strings.Cut(u, "://"); ok {
		if at := strings.LastIndex(rest, "@"); at >= 0 && at < strings.IndexAny(rest+"/", "/") {
			rest = rest[at+1:]
		}
		return scheme + "://" + rest
	}
	return u
}
