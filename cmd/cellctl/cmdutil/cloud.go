package cmdutil

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/fleet"
)

// CloudEnv is the environment variable that picks the cloud when --cloud
// is not given.
const CloudEnv = "CELLCTL_CLOUD"

// Cloudless is the annotation of a command that acts on no cloud and
// reads no fleet (version): it runs whatever the cloud settings say, even
// a bad one.
const Cloudless = "cellctl/cloudless"

// IsCloudless reports whether cmd acts on no cloud: it, or a command it
// belongs to, is annotated Cloudless, it is cobra's generated
// completion (a script, written without a fleet), or it is a command
// group (run bare, it prints its help).
func IsCloudless(cmd *cobra.Command) bool {
	if cmd.HasSubCommands() {
		return true
	}
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[Cloudless] != "" || c.Name() == "completion" && c.Parent() != nil && !c.Parent().HasParent() {
			return true
		}
	}
	return false
}

// CloudHelp is --cloud's help: the values and where the default comes from.
const CloudHelp = "cloud to act on: aws, or sim (cellctl's simulated AWS, for rehearsals and tests); default $" + CloudEnv +
	", else the fleet's cellctl.cloud in Pulumi.yaml, else aws"

// ResolveCloud picks the cloud a command acts on: the --cloud flag (flag,
// "" when not given), else $CELLCTL_CLOUD (env), else the fleet's
// cellctl.cloud setting (read only when needed: a command run outside a
// fleet, or with the flag, never reads Pulumi.yaml), else aws. A value
// that is not a cloud is an error naming where it came from and what is
// allowed.
func ResolveCloud(flag, env string, fleetSettings func() (fleet.Settings, error)) (string, error) {
	allowed := func(v string) bool { return slices.Contains(cloud.Kinds, v) }
	switch {
	case flag != "":
		if !allowed(flag) {
			return "", fmt.Errorf("--cloud %q is not supported (allowed: aws, sim)", flag)
		}
		return flag, nil
	case env != "":
		if !allowed(env) {
			return "", fmt.Errorf("%s=%q is not supported (allowed: aws, sim; unset it to use the fleet's cellctl.cloud in Pulumi.yaml)", CloudEnv, env)
		}
		return env, nil
	}
	s, err := fleetSettings()
	if err != nil {
		return "", err
	}
	if s.Cloud != "" {
		return s.Cloud, nil
	}
	return cloud.AWS, nil
}
