package awsmodel

import (
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
)

// Diff compares a resource's recorded inputs with its new (checked) inputs
// the way pulumi-aws does: changed keys, the ones among them that force a
// replacement in AWS, and whether the replacement must delete first (a
// fixed, unique name cannot exist twice).
func Diff(typ string, olds, news resource.PropertyMap, ignoreChanges []string) plugin.DiffResult {
	explicitName := userSetName(typ, news)
	olds, news = olds.Copy(), news.Copy()
	adopted := map[resource.PropertyKey]bool{}
	for _, k := range strings_(olds, string(adoptedKey)) {
		adopted[resource.PropertyKey(k)] = true
	}
	delete(olds, defaultsKey)
	delete(news, defaultsKey)
	delete(olds, adoptedKey)
	delete(news, adoptedKey)
	for _, ic := range ignoreChanges {
		path, err := resource.ParsePropertyPath(ic)
		if err != nil {
			continue
		}
		if ov, ok := path.Get(resource.NewObjectProperty(olds)); ok {
			path.Set(resource.NewObjectProperty(news), ov)
		} else {
			path.Delete(resource.NewObjectProperty(news))
		}
	}
	spec := specs[typ]
	forces := func(k string) bool {
		if spec == nil {
			return false
		}
		if spec.replaceAllExcept != nil {
			return !slices.Contains(spec.replaceAllExcept, k)
		}
		return slices.Contains(spec.replace, k)
	}

	var changed, replaces []resource.PropertyKey
	detailed := map[string]plugin.PropertyDiff{}
	keys := map[resource.PropertyKey]bool{}
	for k := range olds {
		keys[k] = true
	}
	for k := range news {
		keys[k] = true
	}
	for _, k := range sortedKeySet(keys) {
		ov, oldHas := olds[k]
		nv, newHas := news[k]
		if oldHas && ov.IsNull() {
			oldHas = false
		}
		if newHas && nv.IsNull() {
			newHas = false
		}
		if !oldHas && !newHas {
			continue
		}
		if oldHas && !newHas && adopted[k] {
			continue // read back on adoption, never asked for: AWS keeps it
		}
		if oldHas && newHas && !nv.ContainsUnknowns() && ov.DeepEquals(nv) {
			continue
		}
		changed = append(changed, k)
		replace := forces(string(k))
		if replace {
			replaces = append(replaces, k)
		}
		// Nested detail where both sides are objects or arrays.
		if oldHas && newHas && !nv.ContainsUnknowns() {
			if od := (resource.PropertyMap{k: ov}).Diff(resource.PropertyMap{k: nv}); od != nil {
				for path, d := range plugin.NewDetailedDiffFromObjectDiff(od, true) {
					if replace {
						d.Kind = d.Kind.AsReplace()
					}
					detailed[path] = d
				}
				continue
			}
		}
		kind := plugin.DiffUpdate
		switch {
		case !oldHas:
			kind = plugin.DiffAdd
		case !newHas:
			kind = plugin.DiffDelete
		}
		if replace {
			kind = kind.AsReplace()
		}
		detailed[string(k)] = plugin.PropertyDiff{Kind: kind, InputDiff: true}
	}
	res := plugin.DiffResult{Changes: plugin.DiffNone, DetailedDiff: detailed}
	if len(changed) == 0 {
		return res
	}
	res.Changes = plugin.DiffSome
	res.ChangedKeys = changed
	res.ReplaceKeys = replaces
	if len(replaces) > 0 && spec != nil {
		res.DeleteBeforeReplace = spec.deleteBeforeReplace || explicitName
	}
	return res
}

// userSetName mirrors the bridge's nameRequiresDeleteBeforeReplace: a
// replacement deletes first when the autonameable name was set by the
// program rather than generated (the __defaults list says which). Inputs
// without __defaults count as autonamed.
func userSetName(typ string, news resource.PropertyMap) bool {
	spec := specs[typ]
	if spec == nil || spec.name == nil {
		return false
	}
	defaults, ok := news[defaultsKey]
	if !ok || !defaults.IsArray() {
		return false
	}
	if _, set := get(news, spec.name.prop); !set {
		return false
	}
	return !slices.Contains(strings_(news, string(defaultsKey)), spec.name.prop)
}

func sortedKeySet(m map[resource.PropertyKey]bool) []resource.PropertyKey {
	out := make([]resource.PropertyKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b resource.PropertyKey) int { return strings.Compare(string(a), string(b)) })
	return out
}

// ReplaceKeys lists the inputs of typ whose change forces a replacement
// ("*" for types that replace on any input change but the listed ones).
func ReplaceKeys(typ string) []string {
	spec := specs[typ]
	if spec == nil {
		return nil
	}
	if spec.replaceAllExcept != nil {
		return []string{"*"}
	}
	return append([]string(nil), spec.replace...)
}
