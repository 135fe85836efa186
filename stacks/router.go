package stacks

import (
	"fmt"
	"slices"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/awsname"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/component"
	"github.com/cellctl/cellctl/router/edge"
	"github.com/cellctl/cellctl/waves/signal"
)

// routerProgram builds the global stack: the fleet bucket, the edge
// function with stacks/routing.json baked in, and CloudFront with one
// origin per routable cell — each cell's DNS name read from that cell's
// stack outputs, which is why `cellctl up` updates the router last.
func routerProgram(ctx *pulumi.Context, f *fleet.Fleet) error {
	if f.Routing == nil {
		return fmt.Errorf("%s: the router needs %s/%s", f.Router.File, f.StackDir, fleet.RoutingFile)
	}
	secret, err := originVerifySecret(ctx, f, f.Router.File)
	if err != nil {
		return err
	}
	table := f.Routing
	org := ctx.Organization()
	if org == "" {
		org = "organization"
	}
	var origins []component.Origin
	var dash []component.DashboardCellArgs
	var grants []component.CellGrant
	for _, c := range table.Cells() {
		fc := f.Cell(c.ID)
		crossAccount := fc != nil && CrossAccount(f, fc)
		drained := c.State == router.CellDrained
		if drained && !crossAccount {
			continue // no traffic, so no origin, and no grant to make
		}
		ref, err := pulumi.NewStackReference(ctx, c.ID+"-outputs", &pulumi.StackReferenceArgs{
			Name: pulumi.String(fmt.Sprintf("%s/%s/%s", org, f.Project, c.ID)),
		})
		if err != nil {
			return err
		}
		if crossAccount {
			// A drained cell keeps its grants while its stack keeps its
			// task role: the role and the objects it wrote still exist
			// (a drain moves tenants, not data). Once its stack is
			// destroyed it exports no role, and there is none to grant.
			role := cellOutput(ref, c.ID, "taskRoleArn", "task role (taskRoleArn)")
			if drained {
				role = optionalCellOutput(ref, "taskRoleArn")
			}
			grants = append(grants, component.CellGrant{Cell: c.ID, Prefix: cellmodule.StoragePrefix(c.ID), TaskRoleArn: role})
		}
		if drained {
			continue // drained cells receive no traffic: no origin
		}
		// The cell's own name (<id>.<fleetDomain>), not its ALB's: CloudFront
		// validates the origin certificate against it.
		dns := cellOutput(ref, c.ID, "dnsName", "DNS name (dnsName)")
		origins = append(origins, component.Origin{Cell: c.ID, DNSName: dns})
		dash = append(dash, dashboardCell(f, c.ID, ref))
	}
	provider, err := component.EdgeProviderArgs(fleet.AWSKeys(), func(key string) (string, bool) {
		return ctx.GetConfig("aws:" + key)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", f.Router.File, err)
	}
	opts, err := EdgeOptions(f, table)
	if err != nil {
		return err
	}
	r, err := component.NewRouter(ctx, fleet.RouterStack, &component.RouterArgs{
		BucketName:       f.Router.FleetBucket,
		CellGrants:       grants,
		Origins:          origins,
		TableVersion:     table.Version(),
		TableChecksum:    table.Checksum(),
		TableGeneratedAt: table.GeneratedAt(),
		PriceClass:       f.Router.PriceClass,
		MemoryMB:         f.Router.EdgeMemoryMB,
		Code: func(dns map[string]string) (map[string]string, error) {
			return edge.PackageWith(table, dns, opts)
		},
		OriginVerifySecret:   secret,
		Tags:                 map[string]string{"fleet": f.Project},
		EdgeProvider:         provider,
		ViewerDomains:        f.Router.ViewerDomains,
		ViewerHostedZoneID:   f.Router.ViewerHostedZoneID,
		ViewerCertificateArn: f.Router.ViewerCertificateArn,
		Traffic:              f.Router.Traffic,
		AttachPolicy:         f.Router.AttachDeploymentPolicy,
		HoldLinkedFields:     f.Router.HoldLinkedFields,
		Dashboard:            &component.DashboardArgs{Name: awsname.Dashboard(f.Baseline.NamePrefix, f.Project), Region: f.Router.Region, Cells: dash},
	})
	if err != nil {
		return err
	}
	for k, v := range r.Outputs {
		ctx.Export(k, v)
	}
	return nil
}

// EdgeOptions are the edge function's settings of the fleet's router
// stack for table: where the tenant id comes from, the tenant host domains
// (the wildcard viewer domains) and every routed cell's lanes. The router
// program packages the function with them (edge.PackageWith, with the
// cells' deployed DNS names) and so does `cellctl router package`.
func EdgeOptions(f *fleet.Fleet, table *router.Table) (edge.Options, error) {
	lanes, err := fleetLanes(f, table)
	if err != nil {
		return edge.Options{}, err
	}
	return edge.Options{TenantHeader: f.Router.TenantHeader, TenantFrom: f.Router.TenantFrom,
		TenantHostDomains: edge.HostDomainsOf(f.Router.ViewerDomains), Lanes: lanes}, nil
}

// fleetLanes is every routed cell's lane layout (cells:lanes,
// cells:laneShardSize), which the edge bakes in to send X-Cell-Lanes.
func fleetLanes(f *fleet.Fleet, table *router.Table) (map[string]*router.Lanes, error) {
	lanes := map[string]*router.Lanes{}
	for _, id := range table.CellIDs() {
		c := f.Cell(id)
		if c == nil {
			return nil, fmt.Errorf("%s/%s routes to %s, which is not a cell of this fleet", f.StackDir, fleet.RoutingFile, id)
		}
		l, err := router.NewLanes(c.Lanes, c.LaneShardSize)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.File, err)
		}
		lanes[id] = l
	}
	return lanes, nil
}

// RouterCellOutputs are the cells' stack outputs the router program reads
// (its origins, the grants of cross-account cells, the dashboard): all it
// takes from a cell. The router canary fingerprints exactly these, so a
// release that changes other outputs (an image, a task definition's
// revision) is not a router change. cellOutput refuses any other key.
var RouterCellOutputs = []string{"dnsName", "taskRoleArn", "albArnSuffix", "targetGroupArnSuffix"}

// readsCellOutput refuses a cell output RouterCellOutputs does not list.
func readsCellOutput(key string) error {
	if !slices.Contains(RouterCellOutputs, key) {
		return fmt.Errorf("the router program reads the cell output %q, which stacks.RouterCellOutputs does not list: add it there (the router canary fingerprints only those)", key)
	}
	return nil
}

// cellOutput is a string output of cell id's stack (what names it in the
// error). GetStringOutput would fail on a missing output with an error
// that does not say what to do; a cell that was never deployed (or whose
// last up failed) has none yet.
func cellOutput(ref *pulumi.StackReference, id, key, what string) pulumi.StringOutput {
	return ref.GetOutput(pulumi.String(key)).ApplyT(func(v any) (string, error) {
		if err := readsCellOutput(key); err != nil {
			return "", err
		}
		s, _ := v.(string)
		if s == "" {
			return "", fmt.Errorf("cell %s has no %s in its stack outputs: run `cellctl up %s` first", id, what, id)
		}
		return s, nil
	}).(pulumi.StringOutput)
}

// optionalCellOutput is a string output of a cell's stack that may be
// missing ("" then): a drained cell's stack may have been destroyed.
func optionalCellOutput(ref *pulumi.StackReference, key string) pulumi.StringOutput {
	return ref.GetOutput(pulumi.String(key)).ApplyT(func(v any) (string, error) {
		if err := readsCellOutput(key); err != nil {
			return "", err
		}
		s, _ := v.(string)
		return s, nil
	}).(pulumi.StringOutput)
}

// dashboardCell is one routed cell on the fleet dashboard: its load
// balancer and target group from its stack outputs, its alarms from the
// fleet (the same names the cell template creates).
func dashboardCell(f *fleet.Fleet, id string, ref *pulumi.StackReference) component.DashboardCellArgs {
	out := func(key string) pulumi.StringOutput { return cellOutput(ref, id, key, key) }
	d := component.DashboardCellArgs{Cell: id, LoadBalancer: out("albArnSuffix"), TargetGroup: out("targetGroupArnSuffix")}
	if c := f.Cell(id); c != nil {
		for _, n := range signal.AlarmNames(c.Names()) {
			d.AlarmNames = append(d.AlarmNames, n)
		}
		// Its alarms live in its own account (and region).
		d.Region, d.Account = c.Region, c.Access().Account
		if c.CapacityRPS > 0 {
			d.AlarmNames = append(d.AlarmNames, spec.CapacityAlarmName(c.Names()))
		}
	}
	return d
}

// CrossAccount reports whether cell c lives in another account than the
// fleet bucket (the router's): its task role then needs the bucket
// policy's grant of its prefix and the key policy's of the bucket key
// (every cell's own task policy allows the key either way). A cell that names no
// account shares the router's (the ambient credentials reach both); one
// that names an account the router does not name is treated as another,
// as granting a role of the bucket's own account changes nothing.
func CrossAccount(f *fleet.Fleet, c *fleet.Cell) bool {
	cell := c.Access().Account
	return cell != "" && cell != f.Router.Access().Account
}
