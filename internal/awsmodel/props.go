package awsmodel

import (
	"encoding/json"
	"regexp"
	"sort"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// Helpers over resource.PropertyMap that see through secrets. AWS does not
// care whether a value was a secret; only the engine does.

func unwrap(v resource.PropertyValue) resource.PropertyValue {
	for {
		switch {
		case v.IsSecret():
			v = v.SecretValue().Element
		case v.IsOutput():
			o := v.OutputValue()
			if !o.Known {
				return resource.MakeComputed(resource.NewStringProperty(""))
			}
			v = o.Element
		default:
			return v
		}
	}
}

func get(m resource.PropertyMap, k string) (resource.PropertyValue, bool) {
	if m == nil {
		return resource.PropertyValue{}, false
	}
	v, ok := m[resource.PropertyKey(k)]
	if !ok {
		return v, false
	}
	v = unwrap(v)
	if v.IsNull() {
		return v, false
	}
	return v, true
}

// known reports whether k is present with a fully known value.
func known(m resource.PropertyMap, k string) bool {
	v, ok := get(m, k)
	return ok && !v.ContainsUnknowns()
}

func unknown(m resource.PropertyMap, k string) bool {
	v, ok := get(m, k)
	return ok && v.ContainsUnknowns()
}

func str(m resource.PropertyMap, k string) string {
	v, ok := get(m, k)
	if ok && v.IsString() {
		return v.StringValue()
	}
	return ""
}

func boolean(m resource.PropertyMap, k string) (val bool, set bool) {
	v, ok := get(m, k)
	if ok && v.IsBool() {
		return v.BoolValue(), true
	}
	return false, false
}

func number(m resource.PropertyMap, k string) (float64, bool) {
	v, ok := get(m, k)
	if ok && v.IsNumber() {
		return v.NumberValue(), true
	}
	return 0, false
}

func object(m resource.PropertyMap, k string) resource.PropertyMap {
	v, ok := get(m, k)
	if ok && v.IsObject() {
		return v.ObjectValue()
	}
	return nil
}

func array(m resource.PropertyMap, k string) []resource.PropertyValue {
	v, ok := get(m, k)
	if ok && v.IsArray() {
		return v.ArrayValue()
	}
	return nil
}

// objects returns the object elements of an array property (or the single
// object when the property is an object).
func objects(m resource.PropertyMap, k string) []resource.PropertyMap {
	v, ok := get(m, k)
	if !ok {
		return nil
	}
	if v.IsObject() {
		return []resource.PropertyMap{v.ObjectValue()}
	}
	var out []resource.PropertyMap
	for _, e := range v.ArrayValue() {
		if e = unwrap(e); e.IsObject() {
			out = append(out, e.ObjectValue())
		}
	}
	return out
}

func strings_(m resource.PropertyMap, k string) []string {
	var out []string
	for _, e := range array(m, k) {
		if e = unwrap(e); e.IsString() {
			out = append(out, e.StringValue())
		}
	}
	return out
}

func stringMap(m resource.PropertyMap, k string) map[string]string {
	obj := object(m, k)
	if obj == nil {
		return nil
	}
	out := map[string]string{}
	for kk, v := range obj {
		if v = unwrap(v); v.IsString() {
			out[string(kk)] = v.StringValue()
		}
	}
	return out
}

func pv(v any) resource.PropertyValue {
	switch t := v.(type) {
	case resource.PropertyValue:
		return t
	case resource.PropertyMap:
		return resource.NewObjectProperty(t)
	case []string:
		arr := make([]resource.PropertyValue, len(t))
		for i, s := range t {
			arr[i] = resource.NewStringProperty(s)
		}
		return resource.NewArrayProperty(arr)
	case map[string]string:
		obj := resource.PropertyMap{}
		for k, s := range t {
			obj[resource.PropertyKey(k)] = resource.NewStringProperty(s)
		}
		return resource.NewObjectProperty(obj)
	case []resource.PropertyMap:
		arr := make([]resource.PropertyValue, len(t))
		for i, o := range t {
			arr[i] = resource.NewObjectProperty(o)
		}
		return resource.NewArrayProperty(arr)
	}
	return resource.NewPropertyValue(v)
}

func sortedKeys(m resource.PropertyMap) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, string(k))
	}
	sort.Strings(out)
	return out
}

func validJSON(s string) bool {
	var v any
	return json.Unmarshal([]byte(s), &v) == nil
}

// defaultsKey is where the pulumi-aws bridge records which inputs it filled
// in itself (autonames, "Managed by Pulumi" descriptions).
const defaultsKey = resource.PropertyKey("__defaults")

// adoptedKey lists the inputs of an adopted resource (one read with no
// recorded inputs: an orphan put into the state, or an import) that were
// read back from its live state rather than asked for. Like Terraform's
// Optional+Computed attributes, such a key absent from the program's
// inputs is no change: AWS keeps the value it chose (a subnet's
// availabilityZoneId), so adopting a resource never plans its replacement.
const adoptedKey = resource.PropertyKey("__adopted")

type resourceMap = resource.PropertyMap

func regexp_(p string) *regexp.Regexp { return regexp.MustCompile(p) }
