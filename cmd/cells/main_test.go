package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/stacks"
)

// The stock pulumi CLI runs this program from its `main` directory
// (cmd/cells): it must find the fleet by walking up to Pulumi.yaml and run
// exactly stacks.Program, the program cellctl runs inline.
func TestProgramFromMainDirectory(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := fleetRoot()
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.Abs(filepath.Join(wd, "..", "..")); root != want {
		t.Fatalf("fleet root = %s, want %s", root, want)
	}
	f, err := fleet.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	key := f.ConfigKey(fleet.OriginVerifyKey)
	rec, exports, err := offline.Run(offline.Options{Project: f.Project, Stack: "cell-a", Config: map[string]string{key: "s3cret"}, SecretKeys: []string{key}},
		awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: "123456789012", Region: "us-east-1"}), stacks.Program(f))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.ByType("aws:ec2/vpc:Vpc")) != 1 || exports["albDnsName"] == (nil) {
		t.Fatalf("cell-a did not render: %d resources, exports %v", len(rec.Resources()), exports)
	}
	// Without the secret the program must refuse, naming the fix.
	_, _, err = offline.Run(offline.Options{Project: f.Project, Stack: "cell-a"},
		awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: "123456789012", Region: "us-east-1"}), stacks.Program(f))
	if err == nil {
		t.Fatal("a cell without its origin-verify secret must not render")
	}
}
