package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/offline"
)

// What the stock pulumi CLI's run of cmd/cells gets from the working
// directory: the fleet's program from anywhere inside the repository, and
// an error naming the cause (no fleet, an invalid one) otherwise — never a
// program over a half-read fleet.
func TestProgramFindsTheFleetOrSaysWhy(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := t.TempDir()
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, fleet.ProjectFile), []byte("name: cells\nruntime: go\nconfig: [not, a, mapping\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(bad, "cmd", "cells"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, wd string
		want     []string // error fragments; none: a program
	}{
		{"the repository's main directory", filepath.Join(repo, "cmd", "cells"), nil},
		{"the repository root", repo, nil},
		{"outside any fleet", nowhere, []string{"no Pulumi.yaml found in " + nowhere + " or any parent directory"}},
		{"a fleet whose Pulumi.yaml is invalid", filepath.Join(bad, "cmd", "cells"), []string{"invalid fleet configuration", "Pulumi.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(tc.wd)
			prog, err := program()
			if len(tc.want) > 0 {
				if err == nil || prog != nil {
					t.Fatalf("program() = %v, %v; want an error", prog != nil, err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f, err := fleet.Load(repo)
			if err != nil {
				t.Fatal(err)
			}
			key := f.ConfigKey(fleet.OriginVerifyKey)
			rec, _, err := offline.Run(offline.Options{Project: f.Project, Stack: "cell-b", Config: map[string]string{key: "s3cret"}, SecretKeys: []string{key}},
				awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: "123456789012", Region: "us-east-1"}), prog)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(rec.ByType("aws:ec2/vpc:Vpc")); n != 1 {
				t.Fatalf("cell-b rendered %d VPCs, want 1", n)
			}
		})
	}
}
