package drift

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/safefile"
)

// PolicyFile is the drift policy's name inside the stack directory.
const PolicyFile = "drift.yaml"

// MaxPolicyBytes caps drift.yaml: a policy is a page of exceptions.
const MaxPolicyBytes = 1 << 20

// Policy is stacks/drift.yaml: the deliberate exceptions to the skew
// rules and the cloud properties a refresh may find changed without it
// being drift.
type Policy struct {
	File       string
	Exceptions []Exception
	Ignore     []Ignore
}

// Exception lets one cell differ from the baseline in one must_equal key.
type Exception struct {
	Cell   string `json:"cell"`
	Key    string `json:"key"`
	Reason string `json:"reason"`
	Line   int    `json:"line"`
}

// Ignore is a cloud property that something other than Pulumi owns (ECS
// desiredCount under autoscaling): a refresh finding it changed is not
// drift. Property is a path; it also covers everything below it
// ("tags" ignores "tags.owner").
type Ignore struct {
	Type     string `json:"type"`
	Property string `json:"property"`
	Reason   string `json:"reason"`
	Line     int    `json:"line"`
}

// Excepted returns the exception for (cell, key), or nil.
func (p *Policy) Excepted(cell, key string) *Exception {
	if p == nil {
		return nil
	}
	for i := range p.Exceptions {
		if p.Exceptions[i].Cell == cell && p.Exceptions[i].Key == key {
			return &p.Exceptions[i]
		}
	}
	return nil
}

// Ignored returns the ignore rule covering property of a resource type,
// or nil.
func (p *Policy) Ignored(typ, property string) *Ignore {
	if p == nil {
		return nil
	}
	for i := range p.Ignore {
		ig := &p.Ignore[i]
		if ig.Type != typ {
			continue
		}
		if property == ig.Property || strings.HasPrefix(property, ig.Property+".") || strings.HasPrefix(property, ig.Property+"[") {
			return ig
		}
	}
	return nil
}

// LoadPolicy reads the fleet's drift policy. A fleet without drift.yaml
// has no exceptions and ignores nothing.
func LoadPolicy(f *fleet.Fleet) (*Policy, error) {
	file := filepath.ToSlash(filepath.Join(f.StackDir, PolicyFile))
	data, err := safefile.Read(filepath.Join(f.Dir, file), MaxPolicyBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &Policy{File: file}, nil
	}
	if err != nil {
		return nil, &diag.Error{File: file, Msg: fmt.Sprintf("cannot read the drift policy: %v", err)}
	}
	return ParsePolicy(file, data, f.Project, f.CellIDs())
}

// typePattern is a Pulumi resource type token: package:module:Type.
var typePattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*:[a-zA-Z0-9_./-]+:[A-Za-z][A-Za-z0-9]*$`)

// propertyPattern is a property path: names joined by dots, optional
// [index] or ["key"] steps.
var propertyPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_-]*|\[[0-9]+\]|\["[^"]+"\])*$`)

// ParsePolicy parses drift.yaml. Every problem is reported at once, each
// with file:line: field: what is wrong and what is allowed.
func ParsePolicy(file string, data []byte, project string, cells []string) (*Policy, error) {
	var errs diag.List
	root, err := diag.ParseYAML(file, data)
	if err != nil {
		return nil, err
	}
	p := &Policy{File: file}
	for _, pair := range diag.Pairs(file, "", root, &errs) {
		switch pair.Key.Value {
		case "exceptions":
			p.Exceptions = parseExceptions(file, pair.Value, project, cells, &errs)
		case "cloud":
			for _, c := range diag.Pairs(file, "cloud", pair.Value, &errs) {
				switch c.Key.Value {
				case "ignore":
					p.Ignore = parseIgnores(file, c.Value, &errs)
				default:
					errs.Add(file, c.Key.Line, "cloud."+c.Key.Value, "unknown key (allowed: ignore)")
				}
			}
		default:
			errs.Add(file, pair.Key.Line, pair.Key.Value, "unknown key (allowed: exceptions, cloud)")
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

func parseExceptions(file string, n *yaml.Node, project string, cells []string, errs *diag.List) []Exception {
	if n.Kind != yaml.SequenceNode {
		errs.Add(file, n.Line, "exceptions", "must be a list of {cell, key, reason}, got %s", diag.KindName(n))
		return nil
	}
	var out []Exception
	first := map[[2]string]int{}
	for i, item := range n.Content {
		field := fmt.Sprintf("exceptions[%d]", i)
		v, lines := diag.StringFields(file, field, item, []string{"cell", "key", "reason"}, errs)
		line := func(k string) int {
			if l, ok := lines[k]; ok {
				return l
			}
			return item.Line
		}
		ok := true
		cell, key := v["cell"], bareKey(project, v["key"])
		switch _, set := lines["cell"]; {
		case !set:
			errs.Add(file, item.Line, field+".cell", "missing: the cell that may differ (cells of this fleet: %s)", strings.Join(cells, ", "))
			ok = false
		case cell != "" && !slices.Contains(cells, cell):
			errs.Add(file, line("cell"), field+".cell", "unknown cell %s (cells of this fleet: %s)", diag.Echo(cell), strings.Join(cells, ", "))
			ok = false
		}
		switch _, set := lines["key"]; {
		case !set:
			errs.Add(file, item.Line, field+".key", "missing: the must_equal key the cell may differ in, such as taskCpu")
			ok = false
		case key != "":
			kc, known := ClassOf(project, key)
			switch {
			case !known || kc.Derived:
				if near := nearKey(key); near != "" {
					errs.Add(file, line("key"), field+".key", "unknown key %s: did you mean %s?", diag.Echo(v["key"]), near)
				} else {
					errs.Add(file, line("key"), field+".key", "unknown key %s (keys: %s)", diag.Echo(v["key"]), strings.Join(KeyNames(), ", "))
				}
				ok = false
			case kc.Class == MustUnique:
				errs.Add(file, line("key"), field+".key", "%s is must_unique: no exception lets two cells share it", key)
				ok = false
			case kc.Class == MayVary:
				errs.Add(file, line("key"), field+".key", "%s is may_vary: cells may differ in it without an exception; remove this entry", key)
				ok = false
			}
		}
		if v["reason"] == "" {
			errs.Add(file, line("reason"), field+".reason", "missing: say why %s may differ in %s (the reason is shown in every drift report)", orWhat(cell, "the cell"), orWhat(key, "this key"))
			ok = false
		}
		if !ok {
			continue
		}
		id := [2]string{cell, key}
		if prev, dup := first[id]; dup {
			errs.Add(file, item.Line, field, "duplicate exception for %s %s (first on line %d)", cell, key, prev)
			continue
		}
		first[id] = item.Line
		out = append(out, Exception{Cell: cell, Key: key, Reason: v["reason"], Line: item.Line})
	}
	return out
}

func parseIgnores(file string, n *yaml.Node, errs *diag.List) []Ignore {
	if n.Kind != yaml.SequenceNode {
		errs.Add(file, n.Line, "cloud.ignore", "must be a list of {type, property, reason}, got %s", diag.KindName(n))
		return nil
	}
	var out []Ignore
	first := map[[2]string]int{}
	for i, item := range n.Content {
		field := fmt.Sprintf("cloud.ignore[%d]", i)
		v, lines := diag.StringFields(file, field, item, []string{"type", "property", "reason"}, errs)
		line := func(k string) int {
			if l, ok := lines[k]; ok {
				return l
			}
			return item.Line
		}
		ok := true
		if t := v["type"]; t == "" {
			errs.Add(file, line("type"), field+".type", "missing: a Pulumi resource type such as \"aws:ecs/service:Service\"")
			ok = false
		} else if !typePattern.MatchString(t) {
			errs.Add(file, line("type"), field+".type", "%s is not a Pulumi resource type (package:module:Type, such as \"aws:ecs/service:Service\")", diag.Echo(t))
			ok = false
		}
		if pr := v["property"]; pr == "" {
			errs.Add(file, line("property"), field+".property", "missing: a property path such as desiredCount or tags.owner")
			ok = false
		} else if !propertyPattern.MatchString(pr) {
			errs.Add(file, line("property"), field+".property", "%s is not a property path (names joined by dots, such as tags.owner)", diag.Echo(pr))
			ok = false
		}
		if v["reason"] == "" {
			errs.Add(file, line("reason"), field+".reason", "missing: say who owns this property instead of Pulumi (such as \"autoscaling sets it\")")
			ok = false
		}
		if !ok {
			continue
		}
		id := [2]string{v["type"], v["property"]}
		if prev, dup := first[id]; dup {
			errs.Add(file, item.Line, field, "duplicate ignore rule for %s %s (first on line %d)", id[0], id[1], prev)
			continue
		}
		first[id] = item.Line
		out = append(out, Ignore{Type: v["type"], Property: v["property"], Reason: v["reason"], Line: item.Line})
	}
	return out
}

// nearKey finds the key a misspelt one meant when only the case differs.
func nearKey(key string) string {
	for _, k := range KeyNames() {
		if strings.EqualFold(k, key) {
			return k
		}
	}
	return ""
}

func orWhat(s, what string) string {
	if s == "" {
		return what
	}
	return s
}
