package engine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/safefile"
)

// A stack file belongs to the operator: it is edited by hand, by git and by
// the stock pulumi CLI while cellctl runs. cellctl works on a copy in the
// stack's workspace and must never write that copy back whole — an edit
// made while a status, preview or up ran would be reverted. What it writes
// back is only the keys the run itself changed (the encryption salt pulumi
// adds when it creates a stack, the origin-verify secret cellctl sets),
// merged into the file as it is now, each one only if the operator has not
// changed that key meanwhile (compare and swap), under a lock shared by
// every cellctl process.

// keyChange is one key a run changed in its workspace copy of a stack
// file: a top-level key (Config empty) or an entry of `config:`. A nil
// Old was absent before the run; a nil New was removed by it.
type keyChange struct {
	Key    string
	Config bool
	Old    *yaml.Node
	New    *yaml.Node
}

func (c keyChange) String() string {
	if c.Config {
		return "config " + c.Key
	}
	return c.Key
}

// stackFileDelta lists the keys that differ between the stack file the run
// started from and the workspace copy after it. Formatting pulumi changed
// (it re-serialises the whole file) is not a change.
func stackFileDelta(before, after []byte) ([]keyChange, error) {
	b, err := stackFileKeys(before)
	if err != nil {
		return nil, err
	}
	a, err := stackFileKeys(after)
	if err != nil {
		return nil, err
	}
	var out []keyChange
	seen := map[string]bool{}
	add := func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		o, n := b.get(id), a.get(id)
		if sameValue(o, n) {
			return
		}
		cfg, key := splitID(id)
		out = append(out, keyChange{Key: key, Config: cfg, Old: o, New: n})
	}
	for _, id := range b.order {
		add(id)
	}
	for _, id := range a.order {
		add(id)
	}
	return out, nil
}

// keyed is a stack file's keys: top-level ones as "key", config entries as
// "config\x00key".
type keyed struct {
	order  []string
	values map[string]*yaml.Node
}

func (k *keyed) get(id string) *yaml.Node { return k.values[id] }

func splitID(id string) (bool, string) {
	if rest, ok := strings.CutPrefix(id, "config\x00"); ok {
		return true, rest
	}
	return false, id
}

func stackFileKeys(data []byte) (*keyed, error) {
	k := &keyed{values: map[string]*yaml.Node{}}
	root, err := parseMapping(data)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return k, nil
	}
	put := func(id string, v *yaml.Node) {
		k.order = append(k.order, id)
		k.values[id] = v
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		if key == "config" && val.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(val.Content); j += 2 {
				put("config\x00"+val.Content[j].Value, val.Content[j+1])
			}
			continue
		}
		put(key, val)
	}
	return k, nil
}

// readStackDoc reads a workspace stack file as a YAML document, to change
// and write back.
func readStackDoc(path string) (yaml.Node, error) {
	var doc yaml.Node
	data, err := os.ReadFile(path)
	if err != nil {
		return doc, err
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return doc, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// parseMapping returns the top-level mapping of a YAML document; nil for
// an empty document.
func parseMapping(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the document is a %s, not a mapping of keys", kindName(root.Kind))
	}
	return root, nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	}
	return "YAML node"
}

// sameValue compares two values by content, not by style or comments.
// Scalars compare as text: pulumi holds config values as strings and
// writes `cells:index: 2` back as `"2"`, which is no change.
func sameValue(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a.Kind == yaml.ScalarNode && b.Kind == yaml.ScalarNode {
		return a.Value == b.Value
	}
	var x, y any
	if a.Decode(&x) != nil || b.Decode(&y) != nil {
		return false
	}
	bx, _ := yaml.Marshal(x)
	by, _ := yaml.Marshal(y)
	return bytes.Equal(bx, by)
}

// mergeStackFile applies changes to the stack file as it is now (current),
// keeping everything else — the operator's keys, comments and order. A key
// is set only where the current file still has the value the run started
// from (or already has the new one); a key the operator changed meanwhile
// is theirs, and is returned as a conflict; then nothing is merged, since
// the keys of one run belong together. changed is false when nothing needs
// writing.
func mergeStackFile(current []byte, changes []keyChange) (out []byte, changed bool, conflicts []keyChange, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(current, &doc); err != nil {
		return nil, false, nil, err
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, false, nil, fmt.Errorf("the document is a %s, not a mapping of keys", kindName(root.Kind))
	}
	for _, c := range changes {
		m := root
		if c.Config {
			m = mappingValue(root, "config", c.New != nil)
			if m == nil {
				if c.Old != nil {
					// The operator removed all config; the run's removal
					// of a key is already true.
					continue
				}
				conflicts = append(conflicts, c)
				continue
			}
		}
		cur := lookup(m, c.Key)
		switch {
		case sameValue(cur, c.New):
			// Already there (another run, or the operator, did the same).
		case sameValue(cur, c.Old):
			set(m, c.Key, c.New)
			changed = true
		default:
			conflicts = append(conflicts, c)
		}
	}
	// The keys of one run belong together (a secure: value is encrypted
	// with the salt beside it): any conflict writes none of them.
	if !changed || len(conflicts) > 0 {
		return current, false, conflicts, nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, false, nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, false, nil, err
	}
	return buf.Bytes(), true, conflicts, nil
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mappingValue returns the mapping under key, creating it when asked.
// A key holding something else than a mapping is never overwritten.
func mappingValue(m *yaml.Node, key string, create bool) *yaml.Node {
	if v := lookup(m, key); v != nil {
		if v.Kind == yaml.MappingNode {
			return v
		}
		if !(v.Kind == yaml.ScalarNode && v.Tag == "!!null") || !create {
			return nil
		}
		*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		return v
	}
	if !create {
		return nil
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

// set puts key: v in the mapping (v nil removes the key).
func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		if v == nil {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
		// Keep the operator's comments on the line.
		v.LineComment, v.HeadComment, v.FootComment = m.Content[i+1].LineComment, m.Content[i+1].HeadComment, m.Content[i+1].FootComment
		m.Content[i+1] = v
		return
	}
	if v != nil {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	}
}

// ConflictError says keys a run changed could not be written back because
// the operator changed them in the stack file meanwhile.
type ConflictError struct {
	File string
	Keys []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s: kept your edit of %s made while cellctl ran; cellctl's own changes were not written "+
		"(run the command again to apply them to the file as it is now)", e.File, strings.Join(e.Keys, ", "))
}

// writeBackStackFile merges the keys a run changed (from before to after,
// the workspace copy) into the stack file at path, under lockPath. It
// never rewrites a key the operator changed, and never writes when
// nothing changed.
func writeBackStackFile(path, lockPath string, before, after []byte) error {
	if bytes.Equal(before, after) {
		return nil
	}
	changes, err := stackFileDelta(before, after)
	if err != nil {
		return fmt.Errorf("%s: reading what this run changed: %w", path, err)
	}
	if len(changes) == 0 {
		return nil
	}
	for attempt := 0; ; attempt++ {
		err := mergeInto(path, lockPath, changes)
		if !errors.Is(err, errRetry) || attempt == 4 {
			return err
		}
	}
}

func mergeInto(path, lockPath string, changes []keyChange) error {
	unlock, err := lockFile(lockPath)
	if err != nil {
		return err
	}
	defer unlock()
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	current, err := safefile.Read(path, maxStackFile)
	if err != nil {
		return err
	}
	merged, changed, conflicts, err := mergeStackFile(current, changes)
	if err != nil {
		var keys []string
		for _, c := range changes {
			keys = append(keys, c.String())
		}
		return fmt.Errorf("%s: cannot merge this run's change of %s into the file as it is now (%v); fix the file and run again",
			path, strings.Join(keys, ", "), err)
	}
	if changed {
		// Compare and swap: an editor that saved since the read above
		// (editors take no lock) wins, and the merge is done again.
		err := safefile.WriteChecked(path, merged, info.Mode().Perm(), func() error {
			if again, err := safefile.Read(path, maxStackFile); err != nil || !bytes.Equal(again, current) {
				return errRetry
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(conflicts) > 0 {
		ce := &ConflictError{File: path}
		for _, c := range conflicts {
			ce.Keys = append(ce.Keys, c.String())
		}
		return ce
	}
	return nil
}

var errRetry = errors.New("the stack file changed while it was merged")
