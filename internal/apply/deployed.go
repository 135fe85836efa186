package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-multierror"
	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// DeployedReader reads a deployed stack's outputs (stackrun.ErrNotDeployed
// when it never was). internal/engine implements it; an up or preview
// compares them with the configuration before anything runs.
type DeployedReader interface {
	DeployedOutputs(ctx context.Context, stack string) (map[string]any, error)
}

// RoleReader is an engine that reads the IAM role a deployed stack's
// provider assumed (engine.DeployedRole; known false: not recorded).
type RoleReader interface {
	DeployedRole(ctx context.Context, stack string) (role string, known bool, err error)
}

// immutable refuses the changes a deployed cell cannot take: its index
// (its CIDR, 10.N.0.0/16), its region and its account (its role, where
// a new one would not provably keep the account). Each one replaces the
// whole network — the VPC, every subnet, the NAT gateways and their
// Elastic IPs — and with it the Aurora cluster, the cache and the queues,
// which cannot move to another VPC, region or account in place: pulumi
// would create a second cell beside the first and fail half way (names
// taken, addresses in use, protected resources), leaving the state
// pointing at the new resources and the old ones marked for deletion.
// Nothing runs when one is found.
func immutable(ctx context.Context, env *Env, r DeployedReader, names []string) error {
	var cells []*fleet.Cell
	for _, n := range names {
		if c := env.Fleet.Cell(n); c != nil {
			cells = append(cells, c)
		}
	}
	errs := make([]error, len(cells))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(env.Parallel, 1))
	for i, c := range cells {
		g.Go(func() error {
			outs, err := r.DeployedOutputs(gctx, c.ID)
			if errors.Is(err, stackrun.ErrNotDeployed) {
				return nil
			}
			if err != nil {
				// Fail closed: a cell whose deployed shape cannot be read
				// is not known to be safe to change.
				errs[i] = fmt.Errorf("%s: cannot read the deployed stack's outputs to check its index and region: %w", c.ID, err)
				return nil
			}
			errs[i] = compareDeployed(c, outs)
			// A declared account compared above settles the role; only
			// otherwise is the deployed role read.
			settled := deployedAccount(outs) != "" && c.Access().Account != ""
			if rr, ok := r.(RoleReader); ok && errs[i] == nil && !settled {
				role, known, err := rr.DeployedRole(gctx, c.ID)
				switch {
				case err != nil:
					errs[i] = fmt.Errorf("%s: cannot read the role its deployed stack was updated through: %w", c.ID, err)
				case known:
					errs[i] = compareRole(c, deployedAccount(outs), role)
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	var all *multierror.Error
	for _, err := range errs {
		if err != nil {
			all = multierror.Append(all, err)
		}
	}
	if all == nil {
		return nil
	}
	all.ErrorFormat = func(es []error) string {
		s := "refused, nothing was run:"
		for _, e := range es {
			s += "\n  " + e.Error()
		}
		return s
	}
	return all
}

// compareDeployed checks one cell's configuration against its deployed
// outputs. An output that is missing (a stack deployed before it was
// exported) is not compared.
func compareDeployed(c *fleet.Cell, outs map[string]any) error {
	var errs []error
	depIndex, hasIndex := outs["index"].(float64)
	depCIDR, _ := outs["cidr"].(string)
	if hasIndex && int(depIndex) != c.Index || depCIDR != "" && depCIDR != c.CIDR() {
		was := depCIDR
		if was == "" {
			was = fmt.Sprintf("10.%d.0.0/16", int(depIndex))
		}
		errs = append(errs, fmt.Errorf("%s: %s sets cells:index %d (%s), but %s is deployed as index %d (%s). "+
			"A deployed cell's index is its network: changing it would replace the VPC, every subnet, the NAT gateways and "+
			"their Elastic IPs, and with them the database, cache, queues and service, which cannot move to another VPC in place. "+
			"To keep %s, set cells:index back to %d. To serve its tenants from %s: add a new cell with cells:index %d, "+
			"deploy it, migrate %s's tenants to it in the routing table, then drain and destroy %s (docs/LIFECYCLE.md)",
			c.ID, c.File, c.Index, c.CIDR(), c.ID, int(depIndex), was, c.ID, int(depIndex), c.CIDR(), c.Index, c.ID, c.ID))
	}
	if region, ok := outs["region"].(string); ok && region != "" && region != c.Region {
		errs = append(errs, fmt.Errorf("%s: %s puts the cell in region %s, but it is deployed in %s. "+
			"Every resource of a cell is regional: a change of region would create a second cell in %s and delete the "+
			"first one's data. To keep %s, set aws:region back to %s. To move its tenants: add a new cell in %s, "+
			"migrate the tenants to it in the routing table, then drain and destroy %s (docs/LIFECYCLE.md)",
			c.ID, c.File, c.Region, region, c.Region, c.ID, region, c.Region, c.ID))
	}
	if account := deployedAccount(outs); account != "" && c.Access().Account != "" && account != c.Access().Account {
		errs = append(errs, fmt.Errorf("%s: %s's account settings (cells:account, aws:assumeRole) put the cell in account %s, but it is deployed in account %s. "+
			"A cell's account is where its data lives: a change of account would create a second cell (its VPC, Elastic IPs, cache users) in account %s, "+
			"fail half way and leave the state pointing at the new resources with the old ones marked for deletion. "+
			"To keep %s, set its account settings back to account %s. To serve its tenants from account %s: add a new cell in that account "+
			"(`cellctl cell add`), migrate %s's tenants to it in the routing table, then drain and retire %s (docs/LIFECYCLE.md)",
			c.ID, c.File, c.Access().Account, account, c.Access().Account, c.ID, account, c.Access().Account, c.ID, c.ID))
	}
	return errors.Join(errs...)
}

// deployedAccount is the account a deployed cell's resources live in, read
// from the ARNs it exports ("" when it exports none).
func deployedAccount(outs map[string]any) string {
	for _, k := range []string{"taskRoleArn", "dbClusterArn", "queueArn", "dlqArn"} {
		arn, _ := outs[k].(string)
		parts := strings.SplitN(arn, ":", 6)
		if len(parts) == 6 && parts[0] == "arn" && len(parts[4]) == 12 && strings.Trim(parts[4], "0123456789") == "" {
			return parts[4]
		}
	}
	return ""
}

// compareRole checks the role the cell's provider assumes against the one
// its deployed stack was updated through (deployedRole, "" for none). A
// new role that is provably in the account the cell lives in — a renamed
// deploy role — moves nothing and is allowed; a new role in another
// account is compareDeployed's account change; any other change (a role
// dropped or added with no account declared) cannot be shown to keep the
// cell where it is, and is refused.
func compareRole(c *fleet.Cell, account, deployedRole string) error {
	a := c.Access()
	if a.Role.RoleARN == deployedRole {
		return nil
	}
	if account != "" && a.Account != "" {
		return nil // the same account (allowed), or the account change reported above
	}
	was, now := deployedRole, a.Role.RoleARN
	if was == "" {
		was = "none (the caller's credentials)"
	}
	if now == "" {
		now = "none (the caller's credentials)"
	}
	where := "an account nothing records"
	if account != "" {
		where = "account " + account
	}
	return fmt.Errorf("%s: %s changes the role the cell is deployed through from %s to %s, and nothing proves the cell stays in %s, where it lives. "+
		"A change of account would create a second cell there and fail half way. To keep %s, set aws:assumeRole back, or declare "+
		"cells:account (checked against the caller before anything runs) when the new credentials reach the same account. "+
		"To move its tenants to another account: add a new cell in that account (`cellctl cell add`), migrate %s's tenants to it, "+
		"then drain and retire %s (docs/LIFECYCLE.md)",
		c.ID, c.File, was, now, where, c.ID, c.ID, c.ID)
}

// neverCompleted reports whether a stack's outputs are those of a stack
// whose every up failed: pulumi registers a stack's outputs only when its
// program completes, so a cell whose first up failed part way (its VPC
// created, its fifth Elastic IP refused) has a stack with no outputs. Such
// a cell is still being created: the quota preflight checks it again.
func neverCompleted(outs map[string]any) bool { return len(outs) == 0 }

// AccessChecker is an engine that can prove, before any stack runs, that
// the accounts the stacks live in can be reached as their stack files
// say (cloud.Bundle.CheckAccess): a cell whose role cannot be assumed is
// refused with every other stack of the run, before anything is created.
type AccessChecker interface {
	CheckAccess(ctx context.Context, fl *fleet.Fleet, stacks []string) error
}
