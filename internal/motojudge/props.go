package motojudge

import (
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// props reads a resource's pulumi-aws inputs (camelCase property names),
// secrets unwrapped, falling back to the rendered outputs for what the
// provider computes before it calls AWS (an autonamed name).
type props struct {
	in, out resource.PropertyMap
}

func unwrap(v resource.PropertyValue) resource.PropertyValue {
	for v.IsSecret() || v.IsOutput() {
		if v.IsSecret() {
			v = v.SecretValue().Element
		} else {
			v = v.OutputValue().Element
		}
	}
	return v
}

func (p props) get(k string) (resource.PropertyValue, bool) {
	for _, m := range []resource.PropertyMap{p.in, p.out} {
		if m == nil {
			continue
		}
		if v, ok := m[resource.PropertyKey(k)]; ok {
			v = unwrap(v)
			if !v.IsNull() && !v.IsComputed() {
				return v, true
			}
		}
	}
	return resource.PropertyValue{}, false
}

// inOnly reads an input only (no fallback to outputs: the property is not
// sent unless the program set it).
func (p props) inOnly() props { return props{in: p.in} }

func (p props) has(k string) bool { _, ok := p.get(k); return ok }

func (p props) s(k string) string {
	if v, ok := p.get(k); ok && v.IsString() {
		return v.StringValue()
	}
	return ""
}

// sp is a string input as the SDK wants it: nil when unset.
func (p props) sp(k string) *string {
	if s := p.s(k); s != "" {
		return aws.String(s)
	}
	return nil
}

func (p props) n(k string) (int32, bool) {
	v, ok := p.get(k)
	if !ok {
		return 0, false
	}
	switch {
	case v.IsNumber():
		return int32(v.NumberValue()), true
	case v.IsString():
		var n int32
		for _, c := range v.StringValue() {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int32(c-'0')
		}
		return n, true
	}
	return 0, false
}

func (p props) np(k string) *int32 {
	if n, ok := p.n(k); ok {
		return aws.Int32(n)
	}
	return nil
}

func (p props) b(k string) bool {
	v, ok := p.get(k)
	return ok && v.IsBool() && v.BoolValue()
}

func (p props) bp(k string) *bool {
	if v, ok := p.get(k); ok && v.IsBool() {
		return aws.Bool(v.BoolValue())
	}
	return nil
}

func (p props) list(k string) []string {
	v, ok := p.get(k)
	if !ok || !v.IsArray() {
		return nil
	}
	var out []string
	for _, e := range v.ArrayValue() {
		if e = unwrap(e); e.IsString() {
			out = append(out, e.StringValue())
		}
	}
	return out
}

func (p props) obj(k string) (props, bool) {
	v, ok := p.get(k)
	if !ok || !v.IsObject() {
		return props{}, false
	}
	return props{in: v.ObjectValue()}, true
}

func (p props) objs(k string) []props {
	v, ok := p.get(k)
	if !ok || !v.IsArray() {
		return nil
	}
	var out []props
	for _, e := range v.ArrayValue() {
		if e = unwrap(e); e.IsObject() {
			out = append(out, props{in: e.ObjectValue()})
		}
	}
	return out
}

// tags are the resource's own tags (the provider's default tags are not
// part of the rendered inputs), in a stable order.
func (p props) tags() [][2]string {
	v, ok := props{in: p.in}.get("tags")
	if !ok || !v.IsObject() {
		return nil
	}
	var out [][2]string
	for k, e := range v.ObjectValue() {
		if e = unwrap(e); e.IsString() {
			out = append(out, [2]string{string(k), e.StringValue()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// substitute replaces every reference to a rendered resource (the mock's
// id or ARN) by moto's id or ARN for the same resource: exact values, and
// ARNs inside strings (policy documents).
func substitute(v resource.PropertyValue, ids map[string]string, arns []string) resource.PropertyValue {
	switch {
	case v.IsSecret():
		return resource.MakeSecret(substitute(v.SecretValue().Element, ids, arns))
	case v.IsString():
		s := v.StringValue()
		if to, ok := ids[s]; ok {
			return resource.NewStringProperty(to)
		}
		if strings.Contains(s, "arn:") {
			for _, a := range arns {
				if strings.Contains(s, a) {
					s = strings.ReplaceAll(s, a, ids[a])
				}
			}
		}
		return resource.NewStringProperty(s)
	case v.IsArray():
		var out []resource.PropertyValue
		for _, e := range v.ArrayValue() {
			out = append(out, substitute(e, ids, arns))
		}
		return resource.NewArrayProperty(out)
	case v.IsObject():
		return resource.NewObjectProperty(substituteMap(v.ObjectValue(), ids, arns))
	}
	return v
}

func substituteMap(m resource.PropertyMap, ids map[string]string, arns []string) resource.PropertyMap {
	out := resource.PropertyMap{}
	for k, v := range m {
		out[k] = substitute(v, ids, arns)
	}
	return out
}
