package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// CellConfig is the full configuration a cell runs: its image and every
// other setting (engine versions, sizes, counts …), as plain JSON data. The
// executor never interprets Settings; it records them before a wave, compares
// them to decide whether a cell changes, and hands them back to the Updater
// to restore a cell exactly. The deploy command fills it from the cell
// stack's configuration as last deployed (every config key and value). It is
// saved in the rollout record, so a secret setting must be carried only as
// the ciphertext the stack's secrets provider wrote (e.g. {"value": "<ciphertext>",
// "secret": true}), never in plaintext.
type CellConfig struct {
	Image    string         `json:"image"`
	Settings map[string]any `json:"settings,omitempty"`
}

// canonical is the config's JSON with map keys sorted (encoding/json sorts
// them) and numbers normalised by a round trip, so two configs that mean the
// same compare equal however they were built (an int 2 and a float64 2 are
// the same setting once it has been through a JSON record).
func (c CellConfig) canonical() ([]byte, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(normalise(v))
}

// normalise rewrites json.Numbers to their float64 value so 2, 2.0 and 2e0
// are one number.
func normalise(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalise(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = normalise(e)
		}
		return t
	case json.Number:
		if f, err := t.Float64(); err == nil {
			return f
		}
		return t.String()
	}
	return v
}

// Equal reports whether two configurations are the same. A configuration
// that cannot be serialised equals nothing: the cell is then treated as
// changed, never silently skipped.
func (c CellConfig) Equal(o CellConfig) bool {
	a, err := c.canonical()
	if err != nil {
		return false
	}
	b, err := o.canonical()
	if err != nil {
		return false
	}
	return bytes.Equal(a, b)
}

// Clone is a deep copy (through JSON, the form the record keeps).
func (c CellConfig) Clone() CellConfig {
	raw, err := json.Marshal(c)
	if err != nil {
		return c
	}
	var out CellConfig
	if json.Unmarshal(raw, &out) != nil {
		return c
	}
	return out
}

// Change is one setting that differs between two configurations, as the
// dry run and the record show it: a dotted key and the old and new values
// rendered as JSON ("" when the key is absent on that side).
type Change struct {
	Key string `json:"key"`
	Old string `json:"old"`
	New string `json:"new"`
}

// Diff lists the settings that differ from old to new, sorted by key. The
// image is the key "image".
func Diff(old, new CellConfig) []Change {
	a := map[string]string{}
	b := map[string]string{}
	flatten("", configMap(old), a)
	flatten("", configMap(new), b)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []Change
	for k := range keys {
		if a[k] != b[k] {
			out = append(out, Change{Key: k, Old: a[k], New: b[k]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func configMap(c CellConfig) map[string]any {
	raw, err := c.canonical()
	m := map[string]any{}
	if err != nil {
		m["image"] = c.Image
		m["settings"] = fmt.Sprintf("unserialisable: %v", err)
		return m
	}
	_ = json.Unmarshal(raw, &m)
	// Settings are shown at the top level: "auroraInstances", not
	// "settings.auroraInstances".
	if s, ok := m["settings"].(map[string]any); ok {
		delete(m, "settings")
		for k, v := range s {
			if k == "image" {
				k = "settings.image"
			}
			m[k] = v
		}
	}
	return m
}

func flatten(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok && (len(m) > 0 || prefix == "") {
		for k, e := range m {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flatten(key, e, out)
		}
		return
	}
	raw, err := json.Marshal(v)
	if err != nil {
		out[prefix] = fmt.Sprint(v)
		return
	}
	out[prefix] = string(raw)
}
