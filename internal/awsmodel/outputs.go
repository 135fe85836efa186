package awsmodel

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// Request asks for the state AWS reports for a resource.
type Request struct {
	Type string
	// Name is the logical name.
	Name string
	// Inputs are the checked inputs (see Check).
	Inputs resource.PropertyMap
	// Env is the environment of the provider the resource is created with.
	Env Env
	// Seed drives every random-looking value: the same seed gives the same
	// ids, so updates recompute with the seed used at create.
	Seed []byte
	// Old holds the previous outputs on update, nil on create.
	Old resource.PropertyMap
	// Cloud answers lookups of other live resources; may be nil.
	Cloud Cloud
	// Now is the wall clock for timestamps; zero means time.Now.
	Now time.Time
	// At is the date the dated rules judge at (a Lambda runtime's block
	// dates); zero means Now. The mocks keep Now fixed so plans print the
	// same timestamps every time, and judge at the plan's clock.
	At time.Time
}

// Outputs computes the id and outputs AWS and pulumi-aws report after a
// create (Old nil) or an update. Outputs are the inputs (secrets kept as
// secrets) plus the computed properties under their pulumi-aws output
// names. An error is an *APIError where AWS itself would refuse.
func Outputs(req Request) (string, resource.PropertyMap, error) {
	env := req.Env.normalized()
	now := req.Now
	if now.IsZero() {
		now = time.Now().UTC()
	}
	out := req.Inputs.Copy()
	delete(out, defaultsKey)
	delete(out, adoptedKey)
	spec := specs[req.Type]
	r := newRand(req.Seed)
	if spec == nil {
		return genericID(req.Type, req.Name, r), out, nil
	}
	op := OpCreate
	if req.Old != nil {
		op = OpUpdate
	}
	at := req.At
	if at.IsZero() {
		at = now
	}
	if err := checkRules(ruleInput{typ: req.Type, name: req.Name, in: req.Inputs, env: env, cloud: req.Cloud, op: op, old: req.Old, at: at}); err != nil {
		return "", nil, err
	}
	c := &calc{spec: spec, env: env, typ: req.Type, name: req.Name, in: req.Inputs, out: out,
		old: req.Old, r: r, cloud: req.Cloud, now: now, update: req.Old != nil}
	if spec.compute != nil {
		if err := spec.compute(c); err != nil {
			return "", nil, err
		}
	}
	for k, v := range spec.outDefaults {
		c.def(k, v)
	}
	schema, hasSchema := SchemaOf(req.Type)
	if hasSchema {
		if _, ok := schema.Outputs["tagsAll"]; ok {
			c.set("tagsAll", mergeTags(env.DefaultTags, stringMap(req.Inputs, "tags")))
		}
	}
	if req.Old != nil {
		// Computed values keep what AWS first reported (and what anyone
		// changed out of band) unless they change on every update.
		for k, v := range req.Old {
			ks := string(k)
			if !hasSchema || !schema.ComputedOnly(ks) || slices.Contains(spec.recompute, ks) || ks == "tagsAll" {
				continue
			}
			out[k] = v
		}
	}
	if c.id == "" {
		c.id = genericID(req.Type, req.Name, r)
	}
	return c.id, out, nil
}

func genericID(typ, name string, r Rand) string {
	return name + "-" + r.Hex("generic-id", 7)
}

func mergeTags(defaults, tags map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range tags {
		out[k] = v
	}
	return out
}

// PreviewOutputs is what the provider answers for a create (old nil) or an
// update during a preview: the inputs, with every output AWS computes
// marked unknown. On update the old outputs stay known, except those that
// change on every update (a Lambda version, a CloudFront etag).
func PreviewOutputs(typ string, inputs, old resource.PropertyMap, env Env) resource.PropertyMap {
	env = env.normalized()
	out := resource.PropertyMap{}
	for k, v := range old {
		out[k] = v
	}
	for k, v := range inputs {
		if k != defaultsKey && k != adoptedKey {
			out[k] = v
		}
	}
	schema, ok := SchemaOf(typ)
	if !ok {
		return out
	}
	computed := resource.MakeComputed(resource.NewStringProperty(""))
	if _, hasTags := schema.Outputs["tagsAll"]; hasTags {
		if tags, set := inputs["tags"]; set && tags.ContainsUnknowns() {
			out["tagsAll"] = computed
		} else {
			out["tagsAll"] = pv(mergeTags(env.DefaultTags, stringMap(inputs, "tags")))
		}
	}
	if old != nil {
		if spec := specs[typ]; spec != nil {
			for _, k := range spec.recompute {
				out[resource.PropertyKey(k)] = computed
			}
		}
		return out
	}
	for k := range schema.Outputs {
		key := resource.PropertyKey(k)
		if v, set := out[key]; !set || v.IsNull() {
			out[key] = computed
		}
	}
	return out
}

// InputsFromState rebuilds a resource's inputs from its live state, as the
// provider's Read does for a refresh: every input recorded last time takes
// its live value, so a change made outside Pulumi shows as a diff of
// inputs. Extra lists top-level properties changed out of band that were
// not inputs before; they become inputs too. With no old inputs (an
// import), every input property present in the state is taken.
func InputsFromState(typ string, oldInputs, state resource.PropertyMap, extra []string) resource.PropertyMap {
	schema, hasSchema := SchemaOf(typ)
	if oldInputs == nil {
		in := resource.PropertyMap{}
		var read []string
		for k, v := range state {
			if hasSchema {
				if _, isInput := schema.Inputs[string(k)]; !isInput {
					continue
				}
			}
			if v.IsNull() {
				continue
			}
			in[k] = v
			read = append(read, string(k))
		}
		sort.Strings(read)
		in[defaultsKey] = pv([]string{})
		in[adoptedKey] = pv(read)
		return in
	}
	in := oldInputs.Copy()
	take := func(k resource.PropertyKey) {
		live, ok := state[k]
		if !ok {
			return
		}
		cur := in[k]
		if live.IsAsset() || live.IsArchive() || cur.IsAsset() || cur.IsArchive() {
			return // code archives are not read back from AWS
		}
		if cur.IsSecret() && !live.IsSecret() {
			live = resource.MakeSecret(live)
		}
		in[k] = live
	}
	for k := range oldInputs {
		if k == defaultsKey || strings.HasPrefix(string(k), "__") {
			continue
		}
		take(k)
	}
	for _, k := range extra {
		key := resource.PropertyKey(k)
		if _, already := in[key]; already {
			continue
		}
		if hasSchema {
			if _, isInput := schema.Inputs[k]; !isInput {
				continue
			}
		}
		take(key)
	}
	if fix := readBack[typ]; fix != nil {
		fix(oldInputs, in)
	}
	return in
}

// readBack corrects inputs rebuilt from live state where pulumi-aws does
// not read a value back from AWS as it is, so a refresh of an unchanged
// resource shows no diff.
var readBack = map[string]func(old, in resource.PropertyMap){
	// ElastiCache never returns passwords (the provider keeps the
	// configured ones) and reports a computed passwordCount the program
	// never sets: without this, every refresh "updates" every user.
	tCacheUser: func(old, in resource.PropertyMap) {
		live := object(in, "authenticationMode")
		if live == nil {
			return
		}
		mode := live.Copy()
		oldMode := object(old, "authenticationMode")
		if _, set := oldMode["passwordCount"]; !set {
			delete(mode, "passwordCount")
		}
		if pw, ok := oldMode["passwords"]; ok {
			mode["passwords"] = pw
		}
		v := resource.NewObjectProperty(mode)
		if in["authenticationMode"].IsSecret() {
			v = resource.MakeSecret(v)
		}
		in["authenticationMode"] = v
	},
	// A major-only engine version ("16") stays as configured while AWS
	// patches minors (the provider's compareActualEngineVersion): AWS's own
	// patching is not drift.
	tCluster: func(old, in resource.PropertyMap) {
		configured, live := str(old, "engineVersion"), str(in, "engineVersion")
		if configured != "" && live != configured && strings.HasPrefix(live, configured+".") {
			in["engineVersion"] = resource.NewStringProperty(configured)
		}
	},
}

// DeleteCheck returns the error AWS gives when it refuses to delete the
// resource in its current state (deletion protection, a final snapshot
// identifier required…), or nil.
func DeleteCheck(typ, name string, outputs resource.PropertyMap) error {
	spec := specs[typ]
	if spec == nil || spec.deleteCheck == nil {
		return nil
	}
	if err := spec.deleteCheck(outputs); err != nil {
		if ae, ok := err.(*APIError); ok && ae.Resource == "" {
			ae.Resource = name
		}
		return err
	}
	return nil
}

func fmtIP(b []byte) string { return fmt.Sprintf("%d.%d.%d.%d", b[0], b[1], b[2], b[3]) }
