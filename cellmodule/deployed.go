package cellmodule

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule/spec"
)

// deployedOutput exports the cell's effective configuration (see
// spec.DeployedOutput): `cellctl deploy` reads it as the configuration the
// cell runs, to record before a wave and to roll back to.
func (b *builder) deployedOutput() error {
	v, err := spec.EncodeDeployed(b.spec)
	if err != nil {
		return err
	}
	b.cell.Outputs[spec.DeployedOutput] = pulumi.String(v)
	return nil
}
