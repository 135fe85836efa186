package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/outcome"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/isolation"
	"github.com/cellctl/cellctl/internal/netpath"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/props"
	"github.com/cellctl/cellctl/router/component"
	"github.com/cellctl/cellctl/stacks"
)

// AccessModel reads a whole render (every cell and the router) into the
// access model: every role, policy, key, bucket, queue, secret, database
// and cache user, with each cell's bucket prefix.
func (r *Report) AccessModel(f *fleet.Fleet) (*access.Model, error) {
	if !r.Whole(f) {
		return nil, fmt.Errorf("the access paths need the whole fleet rendered (every cell and the router)")
	}
	m, err := access.Build(r.rendered())
	if err != nil {
		return nil, err
	}
	m.AddDBUsers(cellmodule.DatabaseAppUser, cellmodule.DatabaseMigratorUser)
	for _, c := range f.Cells {
		if err := m.AddPrefix(cellmodule.BucketLabel, c.ID, cellmodule.StoragePrefix(c.ID)); err != nil {
			return nil, err
		}
	}
	// A cell in another account reaches its prefix through its access
	// point (the router gives one to each such cell it routes or
	// drained); the forbidden paths go through those too.
	for _, c := range f.Cells {
		if label := cellmodule.AccessPointLabel(c.ID); m.ResourceByLabel(label) != nil {
			if err := m.SetAccessPointOwner(label, c.ID); err != nil {
				return nil, err
			}
		}
	}
	// A cell's DNS role is not in the render: its policy is the one the
	// cell's stack exports for it, so the model judges what is deployed.
	for _, c := range f.Cells {
		if arn := c.DNSRole().RoleARN; arn != "" {
			doc := ""
			if s := r.stack(c.ID); s != nil {
				doc, _ = s.Outputs[cellmodule.DNSRecordPolicyOutput].(string)
			}
			if err := m.AddDNSRole(c.ID, arn, doc); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// stack is the rendered stack of that name (nil: none).
func (r *Report) stack(name string) *Stack {
	for _, s := range r.Stacks {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// EdgePaths are the router's edge paths (component.EdgePaths) over the
// render: the cells the router's render routes to (its origins output)
// at the DNS names their renders export (dnsName), as the edge function
// is built from them.
func (r *Report) EdgePaths() []access.EdgePath {
	rs := r.stack(fleet.RouterStack)
	if rs == nil {
		return nil
	}
	cells, _ := props.StringList(rs.Outputs["origins"])
	origins := make([]access.CellOrigin, 0, len(cells))
	for _, id := range cells {
		o := access.CellOrigin{Cell: id}
		if s := r.stack(id); s != nil {
			o.DNSName, _ = s.Outputs["dnsName"].(string)
		}
		origins = append(origins, o)
	}
	return component.EdgePaths(fleet.RouterStack, origins)
}

// RequiredPaths are the paths the fleet's programs declare: each cell's
// (the cell template's) and the router's (its component's).
//
// A cell the routing table does not name yet (`cell add` deploys it before
// it routes it) serves no tenant, and the router grants a cell in another
// account its prefix only once it routes it: until then its paths to the
// fleet bucket are not required — and still must not reach another
// cell's prefix (the forbidden paths cover every cell).
func RequiredPaths(f *fleet.Fleet) []access.Path {
	var out []access.Path
	for _, c := range f.Cells {
		paths := cellmodule.RequiredPaths(c.ID, renderAccount(c.Access().Account), c.RunsMigrations(), c.Image)
		if f.Router != nil && stacks.CrossAccount(f, c) {
			paths = cellmodule.ThroughAccessPoint(c.ID, paths)
		}
		if f.Routing != nil {
			if _, routed := f.Routing.Cell(c.ID); !routed {
				paths = slices.DeleteFunc(paths, func(p access.Path) bool {
					return p.Resource == cellmodule.BucketLabel || p.Resource == cellmodule.AccessPointLabel(c.ID)
				})
			}
		}
		out = append(out, paths...)
		if c.DNSRole().RoleARN != "" {
			out = append(out, cellmodule.DNSPaths(c.ID, c.HostedZoneID, c.DNSName())...)
		}
	}
	if f.Router != nil {
		out = append(out, component.RequiredPaths(fleet.RouterStack)...)
	}
	return out
}

// LoadShared reads the fleet's stacks/shared.yaml, the one place plan and
// the apply path read it: the ledger judges the shared parts against it,
// and the access paths exempt what it declares from the cross-account
// forbidden paths. A fleet without one declares nothing; one that does
// not parse is a file:line error.
func LoadShared(f *fleet.Fleet) (*isolation.Declarations, error) {
	return isolation.LoadDeclarations(f.Dir, f.StackDir)
}

// Paths evaluates every required and forbidden path of a whole render.
// decl is the fleet's shared.yaml (LoadShared): what it declares, named
// the way the ledger names a part, is shared across accounts on purpose.
func (r *Report) Paths(f *fleet.Fleet, decl *isolation.Declarations) (access.Report, *access.Model, error) {
	m, err := r.AccessModel(f)
	if err != nil {
		return access.Report{}, nil, err
	}
	for _, s := range r.Stacks {
		for _, arn := range decl.DeclaredARNs(s.recorded, s.Kind == KindRouter) {
			m.DeclareShared(arn)
		}
	}
	isCell := func(owner string) bool { return f.Cell(owner) != nil }
	rep := m.Check(RequiredPaths(f), isCell)
	rep.Edge = append([]string{}, m.CheckEdge(r.EdgePaths())...)
	return rep, m, nil
}

// NetworkPaths decides the network paths of a whole render: every
// cell's required paths (CloudFront to its ALB, the ALB to its tasks, the
// tasks to their data and the AWS APIs, the migrator to the database)
// and the forbidden ones (between cells, from the internet to a task or
// the data). A cell's migrator runs with the network configuration of
// its migration output (the one a rollout hands RunTask).
func (r *Report) NetworkPaths(f *fleet.Fleet) (netpath.Report, error) {
	if !r.Whole(f) {
		return netpath.Report{}, fmt.Errorf("the network paths need the whole fleet rendered (every cell and the router)")
	}
	views := r.rendered()
	stacks := make([]netpath.Stack, 0, len(views))
	for i, s := range r.Stacks {
		ns := netpath.Stack{Stack: views[i]}
		if mig, ok := s.Outputs[cellmodule.MigrationOutput].(map[string]any); ok {
			subnets, ok1 := props.StringList(mig["subnets"])
			groups, ok2 := props.StringList(mig["securityGroups"])
			if !ok1 || !ok2 {
				return netpath.Report{}, fmt.Errorf("%s: its %s output's subnets and securityGroups must be lists of ids: %v", s.Name, cellmodule.MigrationOutput, mig)
			}
			ns.Tasks = append(ns.Tasks, netpath.Task{Name: "migrator", Subnets: subnets, SecurityGroups: groups})
		}
		stacks = append(stacks, ns)
	}
	return netpath.Check(stacks)
}

// rendered is the render as the evaluators read it (offline.Stack), one
// view per stack in the report's order.
func (r *Report) rendered() []offline.Stack {
	out := make([]offline.Stack, 0, len(r.Stacks))
	for _, s := range r.Stacks {
		owner := s.Cell
		if s.Kind == KindRouter {
			owner = offline.OwnerRouter
		}
		out = append(out, offline.Stack{Name: s.Name, Owner: owner, Account: renderAccount(s.Account), Region: s.Region,
			Partition: "aws", Resources: s.recorded, Invokes: s.invokes})
	}
	return out
}

// RefuseBrokenPaths is the apply path's gate on the access and network
// paths: a whole render whose required paths are not all allowed, whose
// forbidden paths are not all denied, or whose data keys could be deleted
// is refused before anything runs (exit 2), each finding named with its
// reason. A shared.yaml that does not parse refuses it too (its file:line
// error): the cross-account paths cannot be decided without it.
func RefuseBrokenPaths(r *Report, f *fleet.Fleet) error {
	if !r.Whole(f) {
		return nil
	}
	decl, err := LoadShared(f)
	if err != nil {
		return fmt.Errorf("reading the fleet's shared parts, nothing was changed: %w", err)
	}
	paths, _, err := r.Paths(f, decl)
	if err != nil {
		return fmt.Errorf("reading the fleet's access paths, nothing was changed: %w", err)
	}
	network, err := r.NetworkPaths(f)
	if err != nil {
		return fmt.Errorf("reading the fleet's network paths, nothing was changed: %w", err)
	}
	if paths.OK() && network.OK() {
		return nil
	}
	var lines []string
	for _, x := range paths.Findings() {
		lines = append(lines, fmt.Sprintf("%s: %s is %s: %s", x.Path.Name, x.Describe(), x.Decision.Words(), x.Reason))
	}
	lines = append(lines, paths.Problems()...)
	lines = append(lines, NetworkFindings(network)...)
	return &outcome.FindingsError{Count: len(lines),
		Err: fmt.Errorf("the fleet's access or network paths would break, nothing was changed (see `cellctl plan`):\n  %s", strings.Join(lines, "\n  "))}
}

// NetworkFindings are a network report's findings, one line each: a
// required path that is not allowed, or a forbidden one that is, with
// what decides it.
func NetworkFindings(r netpath.Report) []string {
	var lines []string
	for _, x := range r.Findings() {
		state := "not allowed"
		if x.Allowed {
			state = "open"
		}
		lines = append(lines, fmt.Sprintf("%s is %s: %s", x.Path, state, x.Reason))
	}
	return lines
}
