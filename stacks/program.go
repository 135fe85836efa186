// Package stacks is the fleet's Pulumi program: one function that, given the
// loaded fleet, builds whichever stack the engine runs — a cell for
// "cell-<id>", the global router for "router". cellctl runs it inline
// through the Automation API; cmd/cells runs the very same function under
// the stock pulumi CLI, so both paths always deploy the same thing.
//
// The directory also holds the fleet's stack files (Pulumi.<stack>.yaml),
// waves.yaml and routing.json.
package stacks

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router/component"
)

// Program returns the Pulumi program of every stack of f.
func Program(f *fleet.Fleet) pulumi.RunFunc {
	return func(ctx *pulumi.Context) error {
		name := ctx.Stack()
		if name == fleet.RouterStack {
			if f.Router == nil {
				return fmt.Errorf("stack %q: the fleet has no %s/Pulumi.router.yaml", name, f.StackDir)
			}
			return routerProgram(ctx, f)
		}
		c := f.Cell(name)
		if c == nil {
			return fmt.Errorf("stack %q is not part of the fleet in %s: its cells are %v (stack files %s/Pulumi.cell-<id>.yaml)",
				name, f.Dir, f.CellIDs(), f.StackDir)
		}
		return cellProgram(ctx, f, c)
	}
}

// originVerifySecret reads the fleet-wide secret the router's CloudFront
// origins send and every cell's ALB requires.
func originVerifySecret(ctx *pulumi.Context, f *fleet.Fleet, file string) (pulumi.StringOutput, error) {
	key := f.ConfigKey(fleet.OriginVerifyKey)
	if _, ok := ctx.GetConfig(key); !ok {
		return pulumi.StringOutput{}, fmt.Errorf("%s: %s is not set: `cellctl up` generates it, or set the same value in every stack with `pulumi config set --secret %s`", file, key, key)
	}
	return config.RequireSecret(ctx, key), nil
}

func cellProgram(ctx *pulumi.Context, f *fleet.Fleet, c *fleet.Cell) error {
	secret, err := originVerifySecret(ctx, f, c.File)
	if err != nil {
		return err
	}
	dns, err := dnsProvider(c, func(key string) (string, bool) { return ctx.GetConfig("aws:" + key) })
	if err != nil {
		return fmt.Errorf("%s: %w", c.File, err)
	}
	args := &cellmodule.CellArgs{Spec: c.Cell, OriginVerifySecret: secret, DNSProvider: dns}
	if f.Router != nil {
		// Every cell, in the router's account or not: the fleet bucket is
		// always encrypted with the fleet's key (router/component), so a
		// task role without it gets AccessDenied on its own prefix.
		args.FleetKey = &cellmodule.FleetKey{Account: f.Router.Access().Account, Region: f.Router.Region, SharesAccount: !CrossAccount(f, c)}
	}
	// A rotation in progress: the cell accepts the next value too.
	if next := f.ConfigKey(fleet.OriginVerifyNextKey); hasConfig(ctx, next) {
		args.OriginVerifyNext = config.RequireSecret(ctx, next)
	}
	cell, err := cellmodule.NewCell(ctx, c.ID, args)
	if err != nil {
		return err
	}
	for k, v := range cell.Outputs {
		ctx.Export(k, v)
	}
	return nil
}

// dnsProvider is the explicit provider of the cell's DNS records when
// cells:dnsAssumeRole names the role into the fleet zone's account; nil
// otherwise (the records use the cell's own provider). An explicit
// provider inherits nothing from the stack, so it takes the stack's local
// emulator settings (fleet.EmulatorKeys: endpoints, path-style S3, the
// skip flags; get reads "aws:<key>") — without them a rehearsal against
// LocalStack or moto would send the records to AWS.
func dnsProvider(c *fleet.Cell, get func(key string) (string, bool)) (*aws.ProviderArgs, error) {
	r := c.DNSRole()
	if r.RoleARN == "" {
		return nil, nil
	}
	args, err := component.ProviderArgs(fleet.EmulatorKeys, get)
	if err != nil {
		return nil, err
	}
	ar := &aws.ProviderAssumeRoleArgs{RoleArn: pulumi.String(r.RoleARN)}
	if r.SessionName != "" {
		ar.SessionName = pulumi.String(r.SessionName)
	}
	if r.ExternalID != "" {
		ar.ExternalId = pulumi.String(r.ExternalID)
	}
	if r.Duration > 0 {
		ar.Duration = pulumi.String(r.Duration.String())
	}
	args.Region, args.AssumeRole = pulumi.String(c.Region), ar
	return args, nil
}

func hasConfig(ctx *pulumi.Context, key string) bool {
	_, ok := ctx.GetConfig(key)
	return ok
}
