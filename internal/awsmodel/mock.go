package awsmodel

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// MockTime is the clock of the mocks, so timestamps in plans are stable.
var MockTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// StackReferenceType is the token of a stack reference.
const StackReferenceType = "pulumi:pulumi:StackReference"

// Mock answers for AWS under pulumi mocks (internal/mocks.Model). It is
// deterministic: ids and autonames derive from type and logical name, so
// `cellctl plan` prints the same output every time. It remembers the
// resources it created (for lookups such as a NAT gateway's subnet) and
// the explicit aws providers registered, so a resource created through a
// us-east-1 provider gets us-east-1 ARNs.
type Mock struct {
	env Env

	mu        sync.Mutex
	providers map[string]Env
	stacks    map[string]resource.PropertyMap
	live      map[string]mockResource
	// created lists the ids of the resources this mock created, in order
	// (List: live has each one under its id and its ARN).
	created  []string
	counters map[string]int
	// deployed names resources ("type::name") a test renders as updates
	// of a resource already deployed with the same inputs (Deployed).
	deployed map[string]bool
	// at is the date the dated rules judge at (JudgeAt); zero: MockTime.
	at time.Time
}

// JudgeAt sets the date the mock's dated rules (a Lambda runtime's block
// dates) judge at — the plan's clock — while every timestamp it reports
// stays MockTime, so a plan prints the same output every day.
func (m *Mock) JudgeAt(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at = t
}

// Deployed makes the mock judge the next renders of the resource typ
// named name as updates of a deployment with the same inputs, so a test
// can render what a later up sends (e.g. a primary distribution with its
// continuous deployment policy attached, which a create refuses).
func (m *Mock) Deployed(typ, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.deployed == nil {
		m.deployed = map[string]bool{}
	}
	m.deployed[typ+"::"+name] = true
}

type mockResource struct {
	typ     string
	outputs resource.PropertyMap
}

// NewMock returns a deterministic model for env (defaults: partition aws,
// account 123456789012, region us-east-1).
func NewMock(env Env) *Mock {
	return &Mock{
		env:       env.normalized(),
		providers: map[string]Env{},
		stacks:    map[string]resource.PropertyMap{},
		live:      map[string]mockResource{},
		counters:  map[string]int{},
	}
}

// SetStackOutputs registers the outputs a StackReference to stackName
// reads (e.g. a cell's albDnsName for the router program). Secret values
// are reported in secretOutputNames.
func (m *Mock) SetStackOutputs(stackName string, outputs resource.PropertyMap) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stacks[stackName] = outputs.Copy()
}

// NewResource implements mocks.Model.
func (m *Mock) NewResource(typ, name string, inputs resource.PropertyMap, provider string) (string, resource.PropertyMap, error) {
	seed := DeterministicSeed(typ, name)
	switch {
	case typ == ProviderType:
		env, err := ProviderEnv(inputs, m.env)
		if err != nil {
			return "", nil, err
		}
		id := newRand(seed).UUID("provider")
		m.mu.Lock()
		m.providers[id] = env
		m.providers["name:"+name] = env
		m.mu.Unlock()
		return id, inputs.Copy(), nil
	case typ == StackReferenceType:
		return m.stackReference(name, inputs)
	case strings.HasPrefix(typ, "pulumi:providers:"):
		return newRand(seed).UUID("provider"), inputs.Copy(), nil
	}
	env := m.envFor(provider)
	checked, failures := Check(CheckRequest{Type: typ, Name: name, News: inputs, RandomSeed: seed})
	if len(failures) > 0 {
		var msgs []string
		for _, f := range failures {
			msgs = append(msgs, fmt.Sprintf("%s: %s", f.Property, f.Reason))
		}
		return "", nil, fmt.Errorf("%s %q has a problem: %s", typ, name, strings.Join(msgs, "; "))
	}
	var old resource.PropertyMap
	m.mu.Lock()
	if m.deployed[typ+"::"+name] {
		old = checked.Copy()
	}
	at := m.at
	m.mu.Unlock()
	id, outs, err := Outputs(Request{Type: typ, Name: name, Inputs: checked, Env: env, Seed: seed, Cloud: m, Now: MockTime, At: at, Old: old})
	if err != nil {
		return "", nil, err
	}
	m.mu.Lock()
	rec := mockResource{typ: typ, outputs: outs}
	if _, again := m.live[id]; !again {
		m.created = append(m.created, id)
	}
	m.live[id] = rec
	if arn := str(outs, "arn"); arn != "" {
		m.live[arn] = rec
	}
	if typ == tRecord {
		m.live[RecordLookupKey(str(outs, "fqdn"), str(outs, "type"))] = rec
	}
	m.mu.Unlock()
	return id, outs, nil
}

func (m *Mock) stackReference(name string, inputs resource.PropertyMap) (string, resource.PropertyMap, error) {
	stack := str(inputs, "name")
	if stack == "" {
		stack = name
	}
	m.mu.Lock()
	outs, ok := m.stacks[stack]
	if !ok {
		// "org/project/cell-a" finds outputs registered as "cell-a".
		parts := strings.Split(stack, "/")
		outs, ok = m.stacks[parts[len(parts)-1]]
	}
	m.mu.Unlock()
	if !ok {
		outs = resource.PropertyMap{}
	}
	var secrets []string
	for k, v := range outs {
		if v.ContainsSecrets() {
			secrets = append(secrets, string(k))
		}
	}
	sort.Strings(secrets)
	return stack, resource.PropertyMap{
		"name":              pv(stack),
		"outputs":           resource.NewObjectProperty(outs.Copy()),
		"secretOutputNames": pv(nonNil(secrets)),
	}, nil
}

// envFor resolves the provider reference ("<urn>::<id>") to the env of the
// explicit provider it names, or the default env.
func (m *Mock) envFor(provider string) Env {
	if provider == "" {
		return m.env
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i := strings.LastIndex(provider, "::")
	if i >= 0 {
		if env, ok := m.providers[provider[i+2:]]; ok {
			return env
		}
		// The URN's last segment is the provider's logical name.
		urn := provider[:i]
		if j := strings.LastIndex(urn, "::"); j >= 0 {
			if env, ok := m.providers["name:"+urn[j+2:]]; ok {
				return env
			}
		}
	}
	return m.env
}

// Invoke implements mocks.Model.
func (m *Mock) Invoke(token string, args resource.PropertyMap, provider string) (resource.PropertyMap, error) {
	return Invoke(token, args, m.envFor(provider))
}

// Lookup implements Cloud over the resources this mock created.
func (m *Mock) Lookup(ref string) (string, resource.PropertyMap, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.live[ref]
	return r.typ, r.outputs, ok
}

// List implements Lister over the resources this mock created.
func (m *Mock) List(typ string) []Listed {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Listed
	for _, id := range m.created {
		if r := m.live[id]; r.typ == typ {
			out = append(out, Listed{ID: id, Outputs: r.outputs})
		}
	}
	return out
}

// Next implements Cloud.
func (m *Mock) Next(counter string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counters[counter]++
	return m.counters[counter]
}
