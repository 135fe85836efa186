package awsmodel

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
)

// CheckRequest is one Check call: the program's inputs for a resource and,
// on update, the inputs recorded last time.
type CheckRequest struct {
	Type string
	// Name is the resource's logical name (the autoname prefix).
	Name string
	Olds resource.PropertyMap
	News resource.PropertyMap
	// RandomSeed is the engine's seed for this resource; autonames derived
	// from it are stable across previews of the same update.
	RandomSeed []byte
	// Autonaming is the engine's autonaming configuration, if any.
	Autonaming *plugin.AutonamingOptions
}

// Check applies pulumi-aws's defaults and autonaming to the inputs and
// validates them as the provider would. Autonamed names are stable: when
// the old inputs hold a name the provider generated and the program still
// does not set one, the old name is kept.
func Check(req CheckRequest) (resource.PropertyMap, []plugin.CheckFailure) {
	news := req.News.Copy()
	delete(news, defaultsKey)
	spec := specs[req.Type]
	if spec == nil {
		return news, nil
	}
	var defaulted []string
	if an := spec.name; an != nil {
		key := resource.PropertyKey(an.prop)
		if _, set := news[key]; !set || news[key].IsNull() {
			name, failure := autonameFor(spec, req)
			if failure != nil {
				return news, []plugin.CheckFailure{*failure}
			}
			if name != "" {
				news[key] = resource.NewStringProperty(name)
				defaulted = append(defaulted, an.prop)
			}
		}
	}
	for k, v := range spec.defaults {
		key := resource.PropertyKey(k)
		if _, set := news[key]; !set || news[key].IsNull() {
			news[key] = pv(v)
			defaulted = append(defaulted, k)
		}
	}
	slices.Sort(defaulted)
	news[defaultsKey] = pv(append([]string{}, defaulted...))
	return news, Validate(req.Type, news)
}

func autonameFor(spec *typeSpec, req CheckRequest) (string, *plugin.CheckFailure) {
	an := spec.name
	// Keep the name generated last time.
	if req.Olds != nil && slices.Contains(strings_(req.Olds, string(defaultsKey)), an.prop) {
		if old := str(req.Olds, an.prop); old != "" {
			return old, nil
		}
	}
	if opts := req.Autonaming; opts != nil {
		switch opts.Mode {
		case plugin.AutonamingModeDisabled:
			return "", nil
		case plugin.AutonamingModeEnforce, plugin.AutonamingModePropose:
			if opts.ProposedName != "" {
				return opts.ProposedName, nil
			}
		}
	}
	randLen := an.randLen
	if randLen == 0 {
		randLen = 7
	}
	prefix := req.Name + "-"
	if an.lower {
		prefix = strings.ToLower(prefix)
	}
	maxLen := an.maxLen
	if an.fifo {
		if fifo, _ := boolean(req.News, "fifoQueue"); fifo {
			maxLen -= len(".fifo")
		}
	}
	name, err := resource.NewUniqueName(req.RandomSeed, prefix, randLen, maxLen, nil)
	if err != nil {
		return "", &plugin.CheckFailure{Property: resource.PropertyKey(an.prop), Reason: err.Error()}
	}
	if an.fifo {
		if fifo, _ := boolean(req.News, "fifoQueue"); fifo {
			name += ".fifo"
		}
	}
	return name, nil
}

// validator collects check failures for one resource's inputs.
type validator struct {
	typ      string
	in       resource.PropertyMap
	failures []plugin.CheckFailure
}

func (v *validator) fail(prop, format string, args ...any) {
	v.failures = append(v.failures, plugin.CheckFailure{Property: resource.PropertyKey(prop), Reason: fmt.Sprintf(format, args...)})
}

func (v *validator) has(k string) bool   { _, ok := get(v.in, k); return ok }
func (v *validator) known(k string) bool { return known(v.in, k) }
func (v *validator) s(k string) string   { return str(v.in, k) }

// enum checks a string property against its allowed values.
func (v *validator) enum(k string, allowed ...string) {
	if !v.known(k) {
		return
	}
	v.enumValue(k, v.s(k), allowed...)
}

func (v *validator) enumValue(path, val string, allowed ...string) {
	if val == "" || slices.Contains(allowed, val) {
		return
	}
	v.fail(path, "expected %s to be one of [%s], got %s", path, strings.Join(allowed, " "), val)
}

// intRange checks a number property's bounds.
func (v *validator) intRange(k string, lo, hi float64) {
	if !v.known(k) {
		return
	}
	n, ok := number(v.in, k)
	if ok && (n < lo || n > hi) {
		v.fail(k, "expected %s to be in the range (%g - %g), got %g", k, lo, hi, n)
	}
}

// name checks a name property's length and character set.
func (v *validator) name(k string, maxLen int, pattern *regexp.Regexp, what string) {
	if !v.known(k) {
		return
	}
	s := v.s(k)
	if len(s) > maxLen {
		v.fail(k, "%q cannot be longer than %d characters, got %d: %q", k, maxLen, len(s), s)
	}
	if pattern != nil && !pattern.MatchString(s) {
		v.fail(k, "invalid value for %s (%s), got %q", k, what, s)
	}
}

// jsonDoc checks that a property holds valid JSON.
func (v *validator) jsonDoc(k string) {
	if !v.known(k) {
		return
	}
	if s := v.s(k); s != "" && !validJSON(s) {
		v.fail(k, "%q contains an invalid JSON: %s", k, truncate(s, 60))
	}
}

// cidr checks an IPv4 network CIDR and its prefix length bounds.
func (v *validator) cidr(k string, minBits, maxBits int) {
	if !v.known(k) {
		return
	}
	s := v.s(k)
	if reason := checkCIDR(s, minBits, maxBits); reason != "" {
		v.fail(k, "%q %s", k, reason)
	}
}

func checkCIDR(s string, minBits, maxBits int) string {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() {
		return fmt.Sprintf("must contain a valid IPv4 CIDR, got error parsing: invalid CIDR address: %s", s)
	}
	if p.Masked() != p {
		return fmt.Sprintf("must contain a valid network CIDR, got %q (the network address is %s)", s, p.Masked())
	}
	if minBits > 0 && (p.Bits() < minBits || p.Bits() > maxBits) {
		return fmt.Sprintf("must have a netmask between /%d and /%d, got %q", minBits, maxBits, s)
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Validate returns the failures the provider would report for inputs of
// typ: missing required properties, wrongly typed values, bad CIDRs, names
// too long or malformed, values outside an enum or range. Unknown values
// (in previews) are never rejected.
func Validate(typ string, inputs resource.PropertyMap) []plugin.CheckFailure {
	spec := specs[typ]
	if spec == nil {
		return nil
	}
	v := &validator{typ: typ, in: inputs}
	for _, r := range spec.required {
		val, ok := inputs[resource.PropertyKey(r)]
		if !ok || val.IsNull() {
			v.fail(r, "Missing required property '%s'", r)
		}
	}
	if schema, ok := SchemaOf(typ); ok {
		for _, k := range sortedKeys(inputs) {
			kind, isInput := schema.Inputs[k]
			val := unwrap(inputs[resource.PropertyKey(k)])
			if !isInput || val.IsNull() || val.ContainsUnknowns() {
				continue
			}
			if !kindMatches(kind, val) {
				v.fail(k, "%s: expected %s, got %s", k, kind, val.TypeString())
			}
		}
	}
	if spec.validate != nil && len(v.failures) == 0 {
		spec.validate(v)
	}
	return v.failures
}

func kindMatches(kind Kind, v resource.PropertyValue) bool {
	switch kind {
	case KindString:
		// The bridge accepts numbers and bools for strings and converts them.
		return v.IsString() || v.IsNumber() || v.IsBool()
	case KindBool:
		return v.IsBool() || (v.IsString() && (v.StringValue() == "true" || v.StringValue() == "false"))
	case KindNumber:
		return v.IsNumber() || v.IsString()
	case KindArray:
		return v.IsArray()
	case KindObject:
		return v.IsObject()
	case KindArchive:
		return v.IsArchive() || v.IsAsset()
	case KindAsset:
		return v.IsAsset() || v.IsArchive()
	}
	return true
}

var (
	reAlnumHyphen = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$`)
	reIAMName     = regexp.MustCompile(`^[\w+=,.@-]+$`)
	reLowerID     = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
)
