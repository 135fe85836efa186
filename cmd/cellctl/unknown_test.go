package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/cmd/cellctl/root"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/iostreams"
)

// A word that names no subcommand of a group (`cellctl rollout pause`
// before there was a pause) fails with cobra's "unknown command" error
// and exit 1, for every group of the real command tree, so a script that
// calls a verb which does not exist never "succeeds"; the group run bare
// still prints its help and exits 0.
func TestEveryGroupRejectsAnUnknownSubcommand(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	defer f.Close()
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() {
			groups = append(groups, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(root.NewCmdRoot(f), nil)
	if len(groups) < 10 {
		t.Fatalf("found %d command groups: the walk did not see the tree", len(groups))
	}
	for _, g := range groups {
		args := append(append([]string(nil), g...), "no-such-verb")
		_, stderr, code := cellctl(t, args...)
		want := `unknown command "no-such-verb" for "` + strings.Join(append([]string{"cellctl"}, g...), " ") + `"`
		if code != exitcode.Error || !strings.Contains(stderr, "error: "+want) {
			t.Errorf("cellctl %s: exit %d, stderr %q; want exit %d and %q", strings.Join(args, " "), code, stderr, exitcode.Error, want)
		}
		if len(g) == 0 {
			continue
		}
		stdout, stderr, code := cellctl(t, g...)
		if code != 0 || !strings.Contains(stdout, "Available Commands:") || stderr != "" {
			t.Errorf("cellctl %s (bare): exit %d, stdout %q, stderr %q; want its help, exit 0", strings.Join(g, " "), code, stdout, stderr)
		}
	}
}
