package diag

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParseYAML parses a whole YAML document keeping line positions. An empty
// file yields an empty mapping, not an error, so callers report the missing
// fields themselves.
func ParseYAML(file string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: file, Line: yamlErrLine(err), Msg: "malformed YAML: " + yamlErrMsg(err)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Line: 1}, nil
	}
	root := doc.Content[0]
	return root, nil
}

// yaml.v3 errors look like "yaml: line 3: mapping values are not allowed".
func yamlErrLine(err error) int {
	var line int
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i:], "line %d", &line)
	}
	return line
}

func yamlErrMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(msg, "line ") {
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
	}
	return msg
}

// KindName names a node kind the way YAML users say it.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!int":
			return "an integer (" + echoRaw(n.Value) + ")"
		case "!!float":
			return "a number (" + echoRaw(n.Value) + ")"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		}
		return "the string " + Echo(n.Value)
	}
	return "nothing"
}

// echoRaw is Echo without the quotes, for numbers as written.
func echoRaw(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	return Echo(s)
}

// Pair is one key/value entry of a YAML mapping.
type Pair struct {
	Key   *yaml.Node
	Value *yaml.Node
}

// Pairs returns the entries of a mapping node in file order, reporting
// duplicate keys (yaml.v3 accepts them silently for nodes).
func Pairs(file, field string, n *yaml.Node, errs *List) []Pair {
	if n.Kind != yaml.MappingNode {
		errs.Add(file, n.Line, field, "must be a mapping, got %s", KindName(n))
		return nil
	}
	seen := map[string]int{}
	var out []Pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			errs.Add(file, k.Line, join(field, k.Value), "duplicate key (first set on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, Pair{Key: k, Value: v})
	}
	return out
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// Join builds a dotted field path.
func Join(parent, key string) string { return join(parent, key) }

// StringFields reads a mapping (a list item of a YAML file) whose fields
// are strings: each allowed field once, trimmed, with the line of its
// key; an unknown field or a value that is not a string is reported.
func StringFields(file, field string, n *yaml.Node, allowed []string, errs *List) (map[string]string, map[string]int) {
	vals, lines := map[string]string{}, map[string]int{}
	for _, f := range Pairs(file, field, n, errs) {
		name := Join(field, f.Key.Value)
		if !slices.Contains(allowed, f.Key.Value) {
			errs.Add(file, f.Key.Line, name, "unknown key (allowed: %s)", strings.Join(allowed, ", "))
			continue
		}
		lines[f.Key.Value] = f.Key.Line
		if f.Value.Kind != yaml.ScalarNode || f.Value.ShortTag() == "!!null" {
			errs.Add(file, f.Value.Line, name, "must be a string, got %s", KindName(f.Value))
			continue
		}
		vals[f.Key.Value] = strings.TrimSpace(f.Value.Value)
	}
	return vals, lines
}
