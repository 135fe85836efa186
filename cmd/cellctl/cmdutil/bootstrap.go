package cmdutil

import (
	"context"
	"fmt"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/fleet"
)

// The cell database's name (cellmodule.DatabaseName), kept here so the
// composition root does not import the cell template.
const bootstrapDatabase = "app"

// Bootstrap runs a cell database's one-time users and grants from the
// control plane, after every up of the cell (the statements are
// idempotent): the cell stack's `dbBootstrapSql` output, one statement
// per RDS Data API ExecuteStatement call, as the master user through its
// AWS-managed secret. No process runs in the cell's VPC and no password
// is read by cellctl: the Data API takes the secret's ARN. A cell whose
// region has no Data API for Aurora PostgreSQL (`dbDataApi` false) keeps
// the manual step, and up says so.
func (f *Factory) Bootstrap(ctx context.Context, c *fleet.Cell, outs map[string]any) error {
	note, err := f.BootstrapCell(ctx, c, outs)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrLines(), "%s: %s\n", c.ID, note)
	return nil
}

// BootstrapCell is Bootstrap for a caller that reports on its own (a
// rollout's progress): it runs the statements and returns what it did —
// or, where the Data API is not available, what the operator must run.
func (f *Factory) BootstrapCell(ctx context.Context, c *fleet.Cell, outs map[string]any) (string, error) {
	str := func(k string) string { s, _ := outs[k].(string); return s }
	if on, _ := outs["dbDataApi"].(bool); !on {
		return "the RDS Data API is not available for its cluster: run the stack output dbBootstrapSql once as the master user from inside its VPC (docs/ARCHITECTURE.md)", nil
	}
	cluster, secret, region, sql := str("dbClusterArn"), str("dbSecretArn"), str("region"), str("dbBootstrapSql")
	if cluster == "" || secret == "" || region == "" || sql == "" {
		return "", fmt.Errorf("the stack's outputs do not name the cluster, its master secret, its region and the bootstrap SQL (dbClusterArn, dbSecretArn, region, dbBootstrapSql)")
	}
	b, err := f.Cloud()
	if err != nil {
		return "", err
	}
	// The cluster lives in the cell's account: the Data API is called
	// with the cell's own access (its role), in the region the stack
	// reports.
	access := c.Access().InRegion(region)
	t, err := b.TargetOf(ctx, access)
	if err != nil {
		return "", err
	}
	rd, err := awsapi.NewRDSData(ctx, t)
	if err != nil {
		return "", err
	}
	stmts := awsapi.SplitStatements(sql)
	if err := rd.Execute(ctx, cluster, secret, bootstrapDatabase, stmts); err != nil {
		return "", err
	}
	return fmt.Sprintf("database users and grants in place (%d statements through the RDS Data API)", len(stmts)), nil
}
