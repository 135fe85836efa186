package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
)

// TestResolveCloudPrecedence: --cloud, then $CELLCTL_CLOUD, then the
// fleet's cellctl.cloud, then aws; Pulumi.yaml is read only when neither
// the flag nor the environment says.
func TestResolveCloudPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name, flag, env, fleet string
		want                   string
		readsFleet             bool
	}{
		{name: "default", want: "aws", readsFleet: true},
		{name: "fleet", fleet: "sim", want: "sim", readsFleet: true},
		{name: "env over fleet", env: "aws", fleet: "sim", want: "aws"},
		{name: "env over default", env: "sim", want: "sim"},
		{name: "flag over env and fleet", flag: "aws", env: "sim", fleet: "sim", want: "aws"},
		{name: "flag over fleet", flag: "sim", fleet: "aws", want: "sim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := false
			got, err := ResolveCloud(tc.flag, tc.env, func() (fleet.Settings, error) {
				read = true
				return fleet.Settings{Cloud: tc.fleet}, nil
			})
			if err != nil || got != tc.want {
				t.Fatalf("ResolveCloud(%q, %q, fleet %q) = %q, %v; want %q", tc.flag, tc.env, tc.fleet, got, err, tc.want)
			}
			if read != tc.readsFleet {
				t.Errorf("read Pulumi.yaml = %v, want %v", read, tc.readsFleet)
			}
		})
	}
}

// TestResolveCloudBadValues: a bad value is an error naming where it came
// from and what is allowed, even when a later source would have been fine.
func TestResolveCloudBadValues(t *testing.T) {
	fine := func() (fleet.Settings, error) { return fleet.Settings{Cloud: "sim"}, nil }
	if _, err := ResolveCloud("gcp", "sim", fine); err == nil || err.Error() != `--cloud "gcp" is not supported (allowed: aws, sim)` {
		t.Errorf("flag: %v", err)
	}
	if _, err := ResolveCloud("", "AWS", fine); err == nil || !strings.HasPrefix(err.Error(), `CELLCTL_CLOUD="AWS" is not supported (allowed: aws, sim`) {
		t.Errorf("env: %v", err)
	}
	bad := errors.New("Pulumi.yaml:9: cellctl.cloud: bad")
	if _, err := ResolveCloud("", "", func() (fleet.Settings, error) { return fleet.Settings{}, bad }); !errors.Is(err, bad) {
		t.Errorf("fleet: %v", err)
	}
}

// TestResolveCloudFromPulumiYAML reads a real Pulumi.yaml: the setting,
// and a bad one named at its line.
func TestResolveCloudFromPulumiYAML(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	settings := func() (fleet.Settings, error) { return fleet.ReadSettings(dir) }
	if got, err := ResolveCloud("", "", settings); err != nil || got != "aws" {
		t.Fatalf("no Pulumi.yaml: %q, %v; want aws", got, err)
	}
	write("name: cells\nruntime: go\ncellctl:\n  cloud: sim\n")
	if got, err := ResolveCloud("", "", settings); err != nil || got != "sim" {
		t.Fatalf("cellctl.cloud sim: %q, %v", got, err)
	}
	write("name: cells\nruntime: go\ncellctl:\n  cloud: gcp\n")
	_, err := ResolveCloud("", "", settings)
	if want := `Pulumi.yaml:4: cellctl.cloud: must be one of "aws" or "sim"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("bad value: %v, want %q", err, want)
	}
	// The flag and the environment are not even checked against it.
	if got, err := ResolveCloud("", "aws", settings); err != nil || got != "aws" {
		t.Fatalf("env over a bad setting: %q, %v", got, err)
	}
}
