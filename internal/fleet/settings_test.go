package fleet

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadSettings(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       Settings
		err        string
	}{
		{name: "none", yaml: "name: cells\n"},
		{name: "sim", yaml: "name: cells\ncellctl:\n  cloud: sim\n", want: Settings{Cloud: "sim", CloudLine: 3}},
		{name: "aws", yaml: "name: cells\ncellctl:\n  cloud: aws\n", want: Settings{Cloud: "aws", CloudLine: 3}},
		{name: "bad value", yaml: "name: cells\ncellctl:\n  cloud: gcp\n",
			err: `Pulumi.yaml:3: cellctl.cloud: must be one of "aws" or "sim" (the cloud commands act on when --cloud and $CELLCTL_CLOUD are unset), got the string "gcp"`},
		{name: "not a string", yaml: "name: cells\ncellctl:\n  cloud: [sim]\n",
			err: `Pulumi.yaml:3: cellctl.cloud: must be one of "aws" or "sim" (the cloud commands act on when --cloud and $CELLCTL_CLOUD are unset), got a list`},
		{name: "unknown key", yaml: "name: cells\ncellctl:\n  clod: sim\n", err: `Pulumi.yaml:3: cellctl.clod: unknown key (allowed: cellctl.cloud)`},
		{name: "not a mapping", yaml: "name: cells\ncellctl: sim\n", err: `Pulumi.yaml:2: cellctl: must be a mapping, got the string "sim"`},
		// Unparsable: the fleet loader reports it where a fleet is needed.
		{name: "malformed yaml", yaml: "name: [cells\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ProjectFile), []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadSettings(dir)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v\nwant %s", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ReadSettings = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if s, err := ReadSettings(t.TempDir()); err != nil || s != (Settings{}) {
		t.Fatalf("no Pulumi.yaml: %+v, %v", s, err)
	}
}

// TestDemoFleetRunsOnSim: the repository's demo fleet names the simulated
// cloud, so its README examples run without --cloud sim.
func TestDemoFleetRunsOnSim(t *testing.T) {
	f, err := Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	if f.Settings.Cloud != "sim" {
		t.Fatalf("demo fleet cellctl.cloud = %q, want sim", f.Settings.Cloud)
	}
}
