// Package plan renders fleet stacks offline: it runs the real program of
// each stack under Pulumi mocks (no pulumi CLI, no cloud, no credentials)
// and reports every resource the program declares, then audits cell
// isolation over the result.
package plan

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/isolation"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/props"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/stacks"
)

// Stack kinds.
const (
	KindCell   = "cell"
	KindRouter = "router"
)

// Account is the placeholder AWS account offline renders use for a stack
// that declares none (it runs in whatever account the caller's
// credentials reach).
const Account = "123456789012"

// renderAccount is the account a stack's offline render builds its ARNs
// in: the one it declares, else the placeholder. The shared-parts ledger
// then sees a second account as the separate part it is.
func renderAccount(declared string) string {
	if declared != "" {
		return declared
	}
	return Account
}

// PlaceholderSecret stands in for the origin-verify secret offline; it is a
// Pulumi secret, so every report shows it as "[secret]".
const PlaceholderSecret = "offline-plan-placeholder"

// Report is the result of rendering some stacks.
type Report struct {
	Stacks    []*Stack         `json:"stacks"`
	Isolation isolation.Result `json:"isolation"`
	// Warnings are what AWS will refuse soon but accepts today: a Lambda
	// runtime within RuntimeNoticeWindow of a date on its deprecation
	// path. They never fail a plan.
	Warnings []Warning `json:"warnings"`

	// at is the date the render judged AWS's dated rules at.
	at time.Time
	// edgeKept is the router's cells:edgeVersionsKept (edge storage demand).
	edgeKept int
}

// Warning is one resource AWS accepts today and will not for long.
type Warning struct {
	Stack   string `json:"stack"`
	Type    string `json:"type"`
	Name    string `json:"name"`
	Message string `json:"message"`
}

func (w Warning) String() string {
	return fmt.Sprintf("%s: %s %q: %s", w.Stack, w.Type, w.Name, w.Message)
}

// RuntimeNoticeWindow is how far ahead a plan warns of a Lambda runtime's
// deprecation, block-create or block-update date: 90 days leaves a
// quarter to move the function (Lambda itself notifies 180 days ahead,
// by mail to the account, which the operator running the plan may not
// read).
const RuntimeNoticeWindow = 90 * 24 * time.Hour

// Stack is one rendered stack.
type Stack struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Cell   string `json:"cell,omitempty"`
	Index  *int   `json:"index,omitempty"`
	CIDR   string `json:"cidr,omitempty"`
	Region string `json:"region"`
	// Account is the AWS account the stack lives in (its role's, or
	// cells:account); "" is the caller's own (the default credentials').
	Account   string         `json:"account,omitempty"`
	Resources []Resource     `json:"resources"`
	Outputs   map[string]any `json:"outputs"`

	recorded []*offline.Resource
	// invokes are the data-source calls the program made, with their
	// answers (the network paths read the managed prefix lists from them).
	invokes []offline.Invoke
	outputs resource.PropertyMap
	// cellTaskRoles (the router's) are the task roles of the cells whose
	// outputs the router render read, by cell id.
	cellTaskRoles map[string]string
}

// Resource is one resource a program declares.
type Resource struct {
	Type   string         `json:"type"`
	Name   string         `json:"name"`
	Parent string         `json:"parent"`
	Inputs map[string]any `json:"inputs"`
}

// Recorded returns the raw mock records (tests and audits).
func (s *Stack) Recorded() []*offline.Resource { return s.recorded }

// CloudResources is how many of the stack's resources the cloud holds
// (stackrun.CloudResource: not its components, providers or stack
// references) — the number status, up and the simulator count.
func (s *Stack) CloudResources() int {
	n := 0
	for _, r := range s.recorded {
		if stackrun.CloudResource(r.Type, r.Custom) {
			n++
		}
	}
	return n
}

// Counts tallies the stack's resources by type.
func (s *Stack) Counts() map[string]int {
	c := map[string]int{}
	for _, r := range s.Resources {
		c[r.Type]++
	}
	return c
}

// Options select what to render.
type Options struct {
	// Stacks limits the render to these stack names (nil: every stack).
	Stacks []string
	// Parallel bounds concurrent renders (≤ 0: 4).
	Parallel int
	// Now is the clock AWS's dated rules judge at (a Lambda runtime's
	// block dates refuse the render, its nearing dates warn); nil:
	// time.Now. Tests set it: a plan's verdict must not depend on the day
	// the test runs.
	Now func() time.Time
}

// Render runs the program of each selected stack under mocks. Cells render
// in parallel; the router renders last because it reads the cells' outputs.
func Render(ctx context.Context, f *fleet.Fleet, opts Options) (*Report, error) {
	names := opts.Stacks
	if len(names) == 0 {
		names = f.StackNames()
	}
	for _, n := range names {
		if (n != fleet.RouterStack || f.Router == nil) && f.Cell(n) == nil {
			return nil, fmt.Errorf("unknown stack %q (stacks of this fleet: %v)", n, f.StackNames())
		}
	}
	// The fleet's stack order (fleet.Phases): the cells, then the router,
	// which reads their outputs.
	var cells []*fleet.Cell
	wantRouter := false
	for _, phase := range fleet.Phases(names) {
		for _, n := range phase {
			if n == fleet.RouterStack {
				wantRouter = true
			} else {
				cells = append(cells, f.Cell(n))
			}
		}
	}
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = 4
	}
	program := stacks.Program(f)
	at := time.Now().UTC()
	if opts.Now != nil {
		at = opts.Now().UTC()
	}
	rendered := make([]*Stack, len(cells))
	var mu multierrorCollector
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i, c := range cells {
		g.Go(func() error {
			if gctx.Err() != nil {
				return gctx.Err()
			}
			s, err := renderCell(f, c, program, at)
			if err != nil {
				mu.add(fmt.Errorf("%s: %w", c.ID, err))
				return nil
			}
			rendered[i] = s
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := mu.err(); err != nil {
		return nil, err
	}
	report := &Report{Stacks: rendered, at: at}
	if f.Router != nil {
		report.edgeKept = f.Router.EdgeVersionsKept
	}
	if wantRouter {
		s, err := renderRouter(f, program, rendered, at)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fleet.RouterStack, err)
		}
		report.Stacks = append(report.Stacks, s)
	}
	report.Isolation = Isolation(report.Stacks, f)
	report.Warnings = runtimeWarnings(report.Stacks, at)
	return report, nil
}

// runtimeWarnings warns of every Lambda function whose runtime has a
// deprecation-path date within RuntimeNoticeWindow of at (a blocked one
// already failed the render: the mocks refuse it as Lambda does).
func runtimeWarnings(rendered []*Stack, at time.Time) []Warning {
	out := []Warning{}
	for _, s := range rendered {
		for _, r := range s.recorded {
			if r.Type != awsmodel.FunctionType {
				continue
			}
			v, ok := r.Inputs["runtime"]
			if !ok || !v.IsString() {
				continue
			}
			rt, ok := awsmodel.LookupLambdaRuntime(v.StringValue())
			if !ok {
				continue
			}
			if msg := rt.Notice(at, RuntimeNoticeWindow); msg != "" {
				out = append(out, Warning{Stack: s.Name, Type: r.Type, Name: r.Name, Message: msg})
			}
		}
	}
	return out
}

// Isolation audits the rendered cells of a report.
func Isolation(rendered []*Stack, f *fleet.Fleet) isolation.Result {
	var cells []isolation.Cell
	for _, s := range rendered {
		if s == nil || s.Kind != KindCell {
			continue
		}
		c := isolation.Cell{ID: s.Cell, CIDR: s.CIDR, Resources: s.recorded}
		if fc := f.Cell(s.Cell); fc != nil {
			c.FleetBucket = fc.FleetBucket
		}
		cells = append(cells, c)
	}
	res := isolation.Check(cells)
	if vs := crossAccountGrants(rendered, f); len(vs) > 0 {
		res.Violations = append(res.Violations, vs...)
		res.OK = false
	}
	return res
}

// crossAccountGrants audits every rendered stack's resource and trust
// policies: the only grants to another account are the fleet bucket's
// (and its key's) to the cells that live in another account than the
// router, each at its own prefix.
func crossAccountGrants(rendered []*Stack, f *fleet.Fleet) []isolation.Violation {
	var audited []isolation.GrantStack
	roles := map[string]string{}
	for _, s := range rendered {
		if s == nil {
			continue
		}
		audited = append(audited, isolation.GrantStack{Name: s.Name, Account: renderAccount(s.Account), Resources: s.recorded})
		if s.Kind == KindCell {
			if arn, ok := s.Outputs["taskRoleArn"].(string); ok {
				roles[s.Cell] = arn
			}
		}
		for id, arn := range s.cellTaskRoles {
			roles[id] = arn
		}
	}
	var declared []isolation.DeclaredGrant
	for _, c := range f.Cells {
		if arn := roles[c.ID]; arn != "" && stacks.CrossAccount(f, c) {
			declared = append(declared, isolation.DeclaredGrant{Cell: c.ID, TaskRoleArn: arn, Prefix: cellmodule.StoragePrefix(c.ID)})
		}
	}
	return isolation.CrossAccountGrants(audited, declared)
}

func mockOptions(f *fleet.Fleet, stack string) offline.Options {
	key := f.ConfigKey(fleet.OriginVerifyKey)
	return offline.Options{
		Project:    f.Project,
		Stack:      stack,
		Config:     map[string]string{key: PlaceholderSecret},
		SecretKeys: []string{key},
	}
}

func renderCell(f *fleet.Fleet, c *fleet.Cell, program pulumi.RunFunc, at time.Time) (*Stack, error) {
	account := c.Access().Account
	model := awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: renderAccount(account), Region: c.Region})
	model.JudgeAt(at)
	s, err := run(mockOptions(f, c.ID), model, program)
	if err != nil {
		return nil, err
	}
	index := c.Index
	s.Kind, s.Cell, s.Index, s.CIDR, s.Region, s.Account = KindCell, c.ID, &index, c.CIDR(), c.Region, account
	return s, nil
}

func renderRouter(f *fleet.Fleet, program pulumi.RunFunc, cells []*Stack, at time.Time) (*Stack, error) {
	model := awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: renderAccount(f.Router.Access().Account), Region: f.Router.Region})
	model.JudgeAt(at)
	// Cells not rendered in this run still have outputs in a real backend;
	// render them quietly so the router sees every cell.
	have := map[string]*Stack{}
	roles := map[string]string{}
	for _, s := range cells {
		have[s.Name] = s
	}
	for _, c := range f.Cells {
		s := have[c.ID]
		if s == nil {
			var err error
			if s, err = renderCell(f, c, program, at); err != nil {
				return nil, fmt.Errorf("rendering %s for its outputs: %w", c.ID, err)
			}
		}
		model.SetStackOutputs(c.ID, s.outputs)
		if arn, ok := s.Outputs["taskRoleArn"].(string); ok {
			roles[c.ID] = arn
		}
	}
	s, err := run(mockOptions(f, fleet.RouterStack), model, program)
	if err != nil {
		return nil, err
	}
	s.cellTaskRoles = roles
	s.Kind, s.Region, s.Account = KindRouter, f.Router.Region, f.Router.Access().Account
	return s, nil
}

func run(opts offline.Options, model offline.Model, program pulumi.RunFunc) (*Stack, error) {
	rec, exports, err := offline.Run(opts, model, program)
	if err != nil {
		return nil, err
	}
	values, err := offline.AwaitAll(exports)
	if err != nil {
		return nil, err
	}
	s := &Stack{Name: opts.Stack, recorded: rec.Resources(), invokes: rec.Invokes(), outputs: resource.PropertyMap{}, Outputs: map[string]any{}}
	names := map[string]string{} // URN -> logical name
	for _, r := range s.recorded {
		names[r.URN] = r.Name
	}
	for _, r := range s.recorded {
		parent := names[r.Parent]
		s.Resources = append(s.Resources, Resource{Type: r.Type, Name: r.Name, Parent: parent, Inputs: props.Plain(r.Inputs)})
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := values[k]
		pv := resource.NewPropertyValue(v.Value)
		if v.Secret {
			pv = resource.MakeSecret(pv)
		}
		s.outputs[resource.PropertyKey(k)] = pv
		s.Outputs[k] = props.Value(pv)
	}
	return s, nil
}

type multierrorCollector struct {
	mu   sync.Mutex
	errs *multierror.Error
}

func (m *multierrorCollector) add(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errs = multierror.Append(m.errs, err)
}

func (m *multierrorCollector) err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.errs.ErrorOrNil()
}
