// Package props turns Pulumi property values into plain JSON-friendly Go
// values for reports, masking every secret so that no cellctl output can
// leak one.
package props

import (
	"sort"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// Masks written in place of values cellctl must not or cannot show.
const (
	Secret  = "[secret]"
	Unknown = "[unknown]"
)

// Plain converts a property map; secrets become "[secret]".
func Plain(m resource.PropertyMap) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[string(k)] = Value(v)
	}
	return out
}

// Value converts one property value.
func Value(v resource.PropertyValue) any {
	switch {
	case v.IsSecret():
		return Secret
	case v.IsComputed(), v.IsOutput() && !v.OutputValue().Known:
		return Unknown
	case v.IsOutput():
		if v.OutputValue().Secret {
			return Secret
		}
		return Value(v.OutputValue().Element)
	case v.IsNull():
		return nil
	case v.IsBool():
		return v.BoolValue()
	case v.IsNumber():
		return v.NumberValue()
	case v.IsString():
		return v.StringValue()
	case v.IsArray():
		arr := v.ArrayValue()
		out := make([]any, len(arr))
		for i, e := range arr {
			out[i] = Value(e)
		}
		return out
	case v.IsObject():
		return Plain(v.ObjectValue())
	case v.IsAsset():
		a := v.AssetValue()
		return map[string]any{"asset": a.Hash}
	case v.IsArchive():
		a := v.ArchiveValue()
		names := make([]string, 0, len(a.Assets))
		for n := range a.Assets {
			names = append(names, n)
		}
		sort.Strings(names)
		return map[string]any{"archive": a.Hash, "files": names}
	case v.IsResourceReference():
		return string(v.ResourceReferenceValue().URN)
	}
	return nil
}

// Strings calls fn for every string reachable in v that is not a secret,
// with the property path leading to it.
func Strings(path string, v resource.PropertyValue, fn func(path, s string)) {
	switch {
	case v.IsSecret():
		return
	case v.IsString():
		fn(path, v.StringValue())
	case v.IsOutput():
		if o := v.OutputValue(); o.Known && !o.Secret {
			Strings(path, o.Element, fn)
		}
	case v.IsArray():
		for i, e := range v.ArrayValue() {
			Strings(path+"["+itoa(i)+"]", e, fn)
		}
	case v.IsObject():
		obj := v.ObjectValue()
		for _, k := range obj.StableKeys() {
			p := string(k)
			if path != "" {
				p = path + "." + p
			}
			Strings(p, obj[k], fn)
		}
	case v.IsResourceReference():
		fn(path, string(v.ResourceReferenceValue().URN))
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// StringList reads a plain list of strings (a stack output or a decoded
// JSON value: []any of strings, or []string); ok is false for anything
// else but nil, which is the empty list.
func StringList(v any) (list []string, ok bool) {
	switch l := v.(type) {
	case nil:
		return nil, true
	case []string:
		return l, true
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}
