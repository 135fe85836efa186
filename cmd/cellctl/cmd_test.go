package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/cmd/cellctl/root"
	"github.com/cellctl/cellctl/cmd/cellctl/route"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/iostreams"
)

// cellctl runs the command line as main does and returns stdout, stderr
// and the exit code.
func cellctl(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	code := execute(context.Background(), io, args)
	return out.String(), errOut.String(), code
}

func TestGlobalFlagValidation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "-o", "yaml"}, `--output "yaml" is not supported here (allowed: table, json, markdown)`},
		{[]string{"up", "-o", "markdown"}, `--output "markdown" is not supported here (allowed: table, json)`},
		{[]string{"preview", "-o", "yaml"}, `--output "yaml" is not supported here (allowed: table, json, markdown)`},
		{[]string{"plan", "--cloud", "gcp"}, `--cloud "gcp" is not supported (allowed: aws, sim)`},
		{[]string{"plan", "--parallel", "0"}, "--parallel must be at least 1, got 0"},
		{[]string{"up", "cell-z", "--dir", "../.."}, `unknown cell "cell-z"`},
		{[]string{"destroy", "cell-z", "--dir", "../.."}, `unknown cell "cell-z"`},
	} {
		_, stderr, code := cellctl(t, tc.args...)
		if code != exitcode.Error || !strings.Contains(stderr, "error: "+tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestPlanJSONIsOneDocument(t *testing.T) {
	stdout, stderr, code := cellctl(t, "plan", "--dir", "../..", "-o", "json", "cell-a")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Stacks    []map[string]any  `json:"stacks"`
		Isolation struct{ OK bool } `json:"isolation"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("stdout is not exactly one JSON document: %v\n%s", err, stdout)
	}
	if len(doc.Stacks) != 1 || doc.Stacks[0]["name"] != "cell-a" || !doc.Isolation.OK {
		t.Fatalf("doc = %+v", doc)
	}
}

func TestPlanTable(t *testing.T) {
	stdout, _, code := cellctl(t, "plan", "--dir", "../..")
	if code != 0 {
		t.Fatal(stdout)
	}
	for _, want := range []string{"cell-d  cell    4      10.4.0.0/16  us-west-2", "nat=per-az", "table v1, 1024 buckets, 2 overrides", "isolation: ok"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan table lacks %q:\n%s", want, stdout)
		}
	}
}

func TestBadFleetExitsOne(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := cellctl(t, "plan", "--dir", dir)
	if code != exitcode.Error || !strings.Contains(stderr, "Pulumi.yaml: file not found") {
		t.Fatalf("exit %d, %s", code, stderr)
	}
}

// A dry run renders and plans without an engine: no pulumi CLI, no
// passphrase, no cloud.
func TestUpDryRunNeedsNoEngine(t *testing.T) {
	t.Setenv("PULUMI_CONFIG_PASSPHRASE", "")
	t.Setenv("PATH", t.TempDir())
	stdout, stderr, code := cellctl(t, "up", "--dir", "../..", "--dry-run", "cell-a", "router")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "plan: up 2 stacks\n  in order (stop at the first failure):\n    in order (stop at the first failure):\n      up cell-a (81 resources)\n" +
		"      bootstrap the database users of cell-a\n    up router (" // the router's count follows
	if !strings.HasPrefix(stdout, want) || !strings.HasSuffix(stdout, "the router is updated only after all its cells succeed)\ndry run: nothing was changed\n") {
		t.Fatalf("dry run:\n%s", stdout)
	}
}

// Through the root command, as a user runs it: registered, one JSON
// document, exit 1 naming the invalid id.
func TestRouteThroughRoot(t *testing.T) {
	stdout, stderr, code := cellctl(t, "route", "--dir", "../..", "-o", "json", "acme", "not valid")
	if code != exitcode.Error {
		t.Errorf("exit %d with an invalid tenant id, want %d", code, exitcode.Error)
	}
	if !strings.Contains(stderr, `tenant id "not valid" contains U+0020 (space)`) {
		t.Errorf("stderr does not explain the invalid id: %q", stderr)
	}
	var got route.RouteReport
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout is not the route report: %v\n%s", err, stdout)
	}
	if len(got.Routes) != 1 || got.Routes[0].Tenant != "acme" || got.Routes[0].Cell != "cell-b" {
		t.Errorf("routes = %+v, want acme on cell-b", got.Routes)
	}

	_, stderr, code = cellctl(t, "route", "--dir", "../..")
	if code != exitcode.Error || !strings.Contains(stderr, "name at least one tenant") {
		t.Errorf("route without tenants or --diff: exit %d, stderr %q", code, stderr)
	}
}

// TestFlagHelpNamesItsValue: pflag shows a back-quoted word of a flag's
// usage as the flag's value ("--account sim account role" when the usage
// quoted a command): every flag of every command either quotes one word
// naming its value, or nothing.
func TestFlagHelpNamesItsValue(t *testing.T) {
	f := cmdutil.NewFactory(iostreams.System())
	defer f.Close()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(fl *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(fl); strings.ContainsAny(name, " \t") {
				t.Errorf("%s --%s: its value shows as %q", c.CommandPath(), fl.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root.NewCmdRoot(f))
}

// TestCloudSources: --cloud, then $CELLCTL_CLOUD, then Pulumi.yaml's
// cellctl.cloud pick the cloud; a bad value from each is refused with
// where it came from and what is allowed, exit 1.
func TestCloudSources(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte("name: cells\nruntime: go\ncellctl:\n  cloud: gcp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"plan", "--dir", dir}, "error: invalid fleet configuration in " + dir + ":\nPulumi.yaml:4: cellctl.cloud: must be one of \"aws\" or \"sim\""},
		{"azure", []string{"plan", "--dir", "../.."}, `error: CELLCTL_CLOUD="azure" is not supported (allowed: aws, sim`},
		{"azure", []string{"plan", "--dir", "../..", "--cloud", "gcp"}, `error: --cloud "gcp" is not supported (allowed: aws, sim)`},
	} {
		t.Setenv("CELLCTL_CLOUD", tc.env)
		_, stderr, code := cellctl(t, tc.args...)
		if code != exitcode.Error || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("CELLCTL_CLOUD=%s %v: exit %d, stderr %q, want %q", tc.env, tc.args, code, stderr, tc.want)
		}
	}
	// The flag wins: the environment is not judged (the fleet load still
	// refuses the bad setting with the rest of the file's problems).
	t.Setenv("CELLCTL_CLOUD", "azure")
	if _, stderr, _ := cellctl(t, "plan", "--dir", dir, "--cloud", "sim"); strings.Contains(stderr, `CELLCTL_CLOUD="azure"`) {
		t.Errorf("--cloud sim still judged the other sources: %s", stderr)
	}
}

// TestCloudlessCommandsIgnoreABadCloudSetting: version and the completion
// scripts act on no cloud: a bad cellctl.cloud does not stop them (it
// stopped `cellctl version`), while a command that acts on one is refused.
func TestCloudlessCommandsIgnoreABadCloudSetting(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte("name: cells\nruntime: go\ncellctl:\n  cloud: gcp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CELLCTL_CLOUD", "")
	for _, args := range [][]string{{"version", "--dir", dir}, {"completion", "bash", "--dir", dir}} {
		if out, stderr, code := cellctl(t, args...); code != exitcode.OK || out == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, stderr, code := cellctl(t, "status", "--dir", dir); code != exitcode.Error || !strings.Contains(stderr, "cellctl.cloud") {
		t.Errorf("status with a bad cloud setting: exit %d, stderr %q", code, stderr)
	}
}
