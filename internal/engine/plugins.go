package engine

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
)

// AWSPluginVersion is the pulumi-aws provider the programs are written
// against (the SDK version in go.mod).
const AWSPluginVersion = "v6.83.4"

// PreparePlugins makes sure the real pulumi-aws provider plugin is
// installed, once, before stacks fan out — parallel stacks must not race to
// download it. With the simulated cloud (Offline) nothing is installed.
func (e *Engine) PreparePlugins(ctx context.Context) error {
	if e.cloud.Offline {
		return nil
	}
	dir, err := mkdirTemp("cellctl-plugins-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env := map[string]string{"PULUMI_SKIP_UPDATE_CHECK": "true"}
	for k, v := range e.opts.Env {
		env[k] = v
	}
	ws, err := auto.NewLocalWorkspace(ctx, auto.WorkDir(dir), auto.Pulumi(e.opts.Pulumi), auto.EnvVars(env))
	if err != nil {
		return err
	}
	plugins, err := ws.ListPlugins(ctx)
	if err == nil {
		for _, p := range plugins {
			if p.Name == "aws" && p.Kind == "resource" && p.Version != nil && "v"+p.Version.String() == AWSPluginVersion {
				return nil
			}
		}
	}
	fmt.Fprintf(e.opts.Log, "installing the pulumi-aws provider plugin %s\n", AWSPluginVersion)
	if err := ws.InstallPlugin(ctx, "aws", AWSPluginVersion); err != nil {
		return fmt.Errorf("the pulumi-aws provider plugin %s is not installed and could not be installed (%s); "+
			"install it with `pulumi plugin install resource aws %s`, or rehearse offline with --cloud sim",
			AWSPluginVersion, errorLine(cleanErr(err).Error()), AWSPluginVersion)
	}
	return nil
}

// errorLine picks the CLI's "error:" line out of its stderr.
func errorLine(msg string) string {
	lines := strings.Split(msg, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "error: ") {
			return strings.TrimPrefix(l, "error: ")
		}
	}
	return firstLine(msg)
}
