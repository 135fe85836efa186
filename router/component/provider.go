package component

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// An explicit provider starts from nothing: it does not inherit the
// stack's aws:* configuration (profile, assumeRole, defaultTags…), so an
// edge provider built from the region alone would deploy Lambda@Edge into
// whatever account the ambient credentials reach, untagged. EdgeProviderArgs
// carries every aws:* setting of the stack over, with the region forced to
// us-east-1.

// providerSecrets are the settings stored as Pulumi secrets in the
// provider's inputs.
var providerSecrets = map[string]bool{"accessKey": true, "secretKey": true, "token": true}

// nestedArgs maps the provider's object-valued input interfaces to the Args
// struct that implements them.
var nestedArgs = map[reflect.Type]reflect.Type{
	reflect.TypeOf((*aws.ProviderAssumeRolePtrInput)(nil)).Elem():                reflect.TypeOf(aws.ProviderAssumeRoleArgs{}),
	reflect.TypeOf((*aws.ProviderAssumeRoleWithWebIdentityPtrInput)(nil)).Elem(): reflect.TypeOf(aws.ProviderAssumeRoleWithWebIdentityArgs{}),
	reflect.TypeOf((*aws.ProviderDefaultTagsPtrInput)(nil)).Elem():               reflect.TypeOf(aws.ProviderDefaultTagsArgs{}),
	reflect.TypeOf((*aws.ProviderIgnoreTagsPtrInput)(nil)).Elem():                reflect.TypeOf(aws.ProviderIgnoreTagsArgs{}),
}

// EdgeProviderArgs builds the us-east-1 provider's arguments from the
// stack's aws:* configuration; get returns the raw value of "aws:<key>"
// (pulumi.Context.GetConfig: objects and lists as JSON). keys lists the
// aws:* keys to look at (the fleet loader's list of the provider's real
// settings). A value that does not fit the provider's schema is an error
// naming the key.
func EdgeProviderArgs(keys []string, get func(key string) (string, bool)) (*aws.ProviderArgs, error) {
	args, err := ProviderArgs(keys, get)
	if err != nil {
		return nil, err
	}
	args.Region = pulumi.String(EdgeRegion)
	return args, nil
}

// ProviderArgs builds an explicit provider's arguments from the stack's
// aws:* settings named in keys (the region excepted: every explicit
// provider sets its own). The cell's DNS provider takes the local
// emulator settings through it (fleet.EmulatorKeys), the edge provider
// every setting.
func ProviderArgs(keys []string, get func(key string) (string, bool)) (*aws.ProviderArgs, error) {
	args := &aws.ProviderArgs{}
	v := reflect.ValueOf(args).Elem()
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	for _, key := range sorted {
		if key == "region" {
			continue
		}
		raw, ok := get(key)
		if !ok {
			continue
		}
		field := v.FieldByName(strings.ToUpper(key[:1]) + key[1:])
		if !field.IsValid() {
			return nil, fmt.Errorf("aws:%s: not a setting of the aws provider", key)
		}
		val, err := inputFor(field.Type(), raw)
		if err != nil {
			return nil, fmt.Errorf("aws:%s: %w", key, err)
		}
		if providerSecrets[key] {
			val = reflect.ValueOf(pulumi.ToSecret(pulumi.String(raw)).(pulumi.StringOutput))
		}
		field.Set(val)
	}
	return args, nil
}

// inputFor converts a config value (a scalar, or JSON for lists and
// objects) to a value of the input interface typ.
func inputFor(typ reflect.Type, raw string) (reflect.Value, error) {
	var doc any = raw
	if trimmed := strings.TrimSpace(raw); strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
		if err := json.Unmarshal([]byte(trimmed), &doc); err != nil {
			return reflect.Value{}, fmt.Errorf("not valid JSON: %w", err)
		}
	}
	return inputFromValue(typ, doc)
}

func inputFromValue(typ reflect.Type, doc any) (reflect.Value, error) {
	switch typ {
	case reflect.TypeOf((*pulumi.StringPtrInput)(nil)).Elem(), reflect.TypeOf((*pulumi.StringInput)(nil)).Elem():
		s, ok := doc.(string)
		if !ok {
			return reflect.Value{}, fmt.Errorf("want a string, got %v", doc)
		}
		return reflect.ValueOf(pulumi.String(s)), nil
	case reflect.TypeOf((*pulumi.BoolPtrInput)(nil)).Elem():
		switch b := doc.(type) {
		case bool:
			return reflect.ValueOf(pulumi.Bool(b)), nil
		case string:
			if b == "true" || b == "false" {
				return reflect.ValueOf(pulumi.Bool(b == "true")), nil
			}
		}
		return reflect.Value{}, fmt.Errorf("want true or false, got %v", doc)
	case reflect.TypeOf((*pulumi.IntPtrInput)(nil)).Elem():
		var n int
		if _, err := fmt.Sscan(fmt.Sprint(doc), &n); err != nil {
			return reflect.Value{}, fmt.Errorf("want an integer, got %v", doc)
		}
		return reflect.ValueOf(pulumi.Int(n)), nil
	case reflect.TypeOf((*pulumi.StringArrayInput)(nil)).Elem():
		list, ok := doc.([]any)
		if !ok {
			return reflect.Value{}, fmt.Errorf("want a list of strings, got %v", doc)
		}
		out := pulumi.StringArray{}
		for _, e := range list {
			s, ok := e.(string)
			if !ok {
				return reflect.Value{}, fmt.Errorf("want a list of strings, got %v", doc)
			}
			out = append(out, pulumi.String(s))
		}
		return reflect.ValueOf(out), nil
	case reflect.TypeOf((*pulumi.StringMapInput)(nil)).Elem():
		m, ok := doc.(map[string]any)
		if !ok {
			return reflect.Value{}, fmt.Errorf("want a map of strings, got %v", doc)
		}
		out := pulumi.StringMap{}
		for k, e := range m {
			out[k] = pulumi.String(fmt.Sprint(e))
		}
		return reflect.ValueOf(out), nil
	case reflect.TypeOf((*aws.ProviderEndpointArrayInput)(nil)).Elem():
		list, ok := doc.([]any)
		if !ok {
			list = []any{doc}
		}
		out := aws.ProviderEndpointArray{}
		for _, e := range list {
			ep, err := structFromValue(reflect.TypeOf(aws.ProviderEndpointArgs{}), e)
			if err != nil {
				return reflect.Value{}, err
			}
			out = append(out, ep.Interface().(aws.ProviderEndpointArgs))
		}
		return reflect.ValueOf(out), nil
	}
	if st, ok := nestedArgs[typ]; ok {
		return structFromValue(st, doc)
	}
	return reflect.Value{}, fmt.Errorf("cellctl cannot pass settings of type %s to the edge provider", typ)
}

// structFromValue fills an Args struct from a JSON object, by the fields'
// pulumi tags.
func structFromValue(st reflect.Type, doc any) (reflect.Value, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		return reflect.Value{}, fmt.Errorf("want an object, got %v", doc)
	}
	out := reflect.New(st).Elem()
	byTag := map[string]int{}
	for i := 0; i < st.NumField(); i++ {
		byTag[st.Field(i).Tag.Get("pulumi")] = i
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i, ok := byTag[k]
		if !ok {
			return reflect.Value{}, fmt.Errorf("unknown field %q", k)
		}
		val, err := inputFromValue(st.Field(i).Type, m[k])
		if err != nil {
			return reflect.Value{}, fmt.Errorf("%s: %w", k, err)
		}
		out.Field(i).Set(val)
	}
	return out, nil
}
