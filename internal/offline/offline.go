// Package offline renders a Pulumi program without an engine or a cloud:
// it runs the program under pulumi.WithMocks (Pulumi's test harness, used
// here as a renderer) and
// records every resource it registers and every invoke it makes, so `plan`,
// the isolation audit and the program tests can inspect exactly what the
// program would ask AWS for.
package offline

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/internals"
)

// Resource is one registered resource as the program declared it.
type Resource struct {
	URN      string
	Type     string
	Name     string
	Parent   string // URN of the parent; the stack's URN for top-level resources
	Provider string // provider reference, empty for the default provider
	Custom   bool   // false for component resources
	ID       string
	Inputs   resource.PropertyMap
	Outputs  resource.PropertyMap
	// DependsOn lists every URN this resource depends on, explicitly or
	// through an input value.
	DependsOn []string
	// Protect is the resource's protect option.
	Protect bool
	// IgnoreChanges lists the properties the engine must not diff.
	IgnoreChanges []string
	// RetainOnDelete is the resource's retainOnDelete option.
	RetainOnDelete bool
}

// Invoke is one data-source call the program made, and the model's
// answer: a program names what it looked up (a managed prefix list, a
// policy) by the ids in the result, so an audit of the render needs both.
type Invoke struct {
	Token    string
	Args     resource.PropertyMap
	Provider string
	// Result is the answer (nil when the model refused the call).
	Result resource.PropertyMap
}

// Model answers for AWS under mocks: the id and output state of a new
// resource, and the result of an invoke. internal/awsmodel implements the
// realistic one; tests may supply their own.
type Model interface {
	NewResource(typ, name string, inputs resource.PropertyMap, provider string) (id string, outputs resource.PropertyMap, err error)
	Invoke(token string, args resource.PropertyMap, provider string) (resource.PropertyMap, error)
}

// Recorder implements pulumi.MockResourceMonitor, delegating answers to a
// Model and keeping a record of the program's requests.
type Recorder struct {
	Project string
	Stack   string
	Model   Model

	mu        sync.Mutex
	resources []*Resource
	invokes   []Invoke
}

// NewResource implements pulumi.MockResourceMonitor.
func (r *Recorder) NewResource(args pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	var id string
	var outs resource.PropertyMap
	if args.Custom || args.TypeToken == "pulumi:pulumi:StackReference" {
		var err error
		id, outs, err = r.Model.NewResource(args.TypeToken, args.Name, args.Inputs, args.Provider)
		if err != nil {
			return "", nil, fmt.Errorf("%s %q: %w", args.TypeToken, args.Name, err)
		}
	}
	if outs == nil {
		outs = resource.PropertyMap{}
	}
	res := &Resource{
		Type:     args.TypeToken,
		Name:     args.Name,
		Provider: args.Provider,
		Custom:   args.Custom,
		ID:       id,
		Inputs:   args.Inputs,
		Outputs:  outs,
	}
	if rpc := args.RegisterRPC; rpc != nil {
		res.Parent = rpc.GetParent()
		res.Protect = rpc.GetProtect()
		res.IgnoreChanges = rpc.GetIgnoreChanges()
		res.RetainOnDelete = rpc.GetRetainOnDelete()
		deps := map[string]bool{}
		for _, d := range rpc.GetDependencies() {
			deps[d] = true
		}
		for _, pd := range rpc.GetPropertyDependencies() {
			for _, d := range pd.GetUrns() {
				deps[d] = true
			}
		}
		for d := range deps {
			res.DependsOn = append(res.DependsOn, d)
		}
		sort.Strings(res.DependsOn)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res.URN = r.urnLocked(res.Parent, res.Type, res.Name)
	r.resources = append(r.resources, res)
	return id, outs, nil
}

// Call implements pulumi.MockResourceMonitor.
func (r *Recorder) Call(args pulumi.MockCallArgs) (resource.PropertyMap, error) {
	out, err := r.Model.Invoke(args.Token, args.Args, args.Provider)
	inv := Invoke{Token: args.Token, Args: args.Args, Provider: args.Provider}
	if err == nil {
		inv.Result = out
	}
	r.mu.Lock()
	r.invokes = append(r.invokes, inv)
	r.mu.Unlock()
	return out, err
}

// urnLocked builds the URN the engine would give the resource (the mock
// monitor builds the same one, but does not hand it to NewResource).
func (r *Recorder) urnLocked(parent, typ, name string) string {
	parentType := tokens.Type("")
	if pu := resource.URN(parent); pu != "" && pu.QualifiedType() != resource.RootStackType {
		parentType = pu.QualifiedType()
	}
	urn := resource.NewURN(tokens.QName(r.Stack), tokens.PackageName(r.Project), parentType, tokens.Type(typ), name)
	return string(urn)
}

// Resources returns every recorded resource in registration order.
func (r *Recorder) Resources() []*Resource {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Resource(nil), r.resources...)
}

// Invokes returns every recorded invoke in call order.
func (r *Recorder) Invokes() []Invoke {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Invoke(nil), r.invokes...)
}

// ByType returns the recorded resources of one type token.
func (r *Recorder) ByType(typ string) []*Resource {
	var out []*Resource
	for _, res := range r.Resources() {
		if res.Type == typ {
			out = append(out, res)
		}
	}
	return out
}

// ByName returns the recorded resource with that logical name, or nil.
func (r *Recorder) ByName(name string) *Resource {
	for _, res := range r.Resources() {
		if res.Name == name {
			return res
		}
	}
	return nil
}

// Options configures one offline run.
type Options struct {
	Project string
	Stack   string
	// Config is the stack's configuration as the engine would hand it to the
	// program ("project:key" -> value); SecretKeys marks which are secrets.
	Config     map[string]string
	SecretKeys []string
}

// Run executes fn under mocks and returns what it registered. The stack
// outputs the program exported are returned too.
func Run(opts Options, model Model, fn pulumi.RunFunc) (*Recorder, map[string]pulumi.Output, error) {
	rec := &Recorder{Project: opts.Project, Stack: opts.Stack, Model: model}
	var exports map[string]pulumi.Output
	wrapped := func(ctx *pulumi.Context) error {
		if err := fn(ctx); err != nil {
			return err
		}
		exports = exportsOf(ctx)
		return nil
	}
	err := pulumi.RunErr(wrapped,
		pulumi.WithMocks(opts.Project, opts.Stack, rec),
		func(info *pulumi.RunInfo) {
			info.Config = opts.Config
			info.ConfigSecretKeys = opts.SecretKeys
		})
	return rec, exports, err
}

func exportsOf(ctx *pulumi.Context) map[string]pulumi.Output {
	out := map[string]pulumi.Output{}
	for k, v := range ctx.GetCurrentExportMap() {
		out[k] = pulumi.ToOutput(v)
	}
	return out
}

// Value is a resolved stack output.
type Value struct {
	Value  any
	Secret bool
	Known  bool
}

// Await resolves an output of a finished mock run.
func Await(o pulumi.Output) (Value, error) {
	r, err := internals.UnsafeAwaitOutput(context.Background(), o)
	if err != nil {
		return Value{}, err
	}
	return Value{Value: r.Value, Secret: r.Secret, Known: r.Known}, nil
}

// AwaitAll resolves every exported output.
func AwaitAll(exports map[string]pulumi.Output) (map[string]Value, error) {
	out := make(map[string]Value, len(exports))
	for k, o := range exports {
		v, err := Await(o)
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}
