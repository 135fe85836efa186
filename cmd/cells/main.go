// Command cells is the fleet's program for the stock pulumi CLI
// (Pulumi.yaml's `main`), so `pulumi preview -s cell-a` works on the fleet
// repository without cellctl. It runs exactly the program cellctl runs.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/stacks"
)

func main() {
	dir, err := fleetRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	f, err := fleet.Load(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error: invalid fleet configuration:\n"+err.Error())
		os.Exit(1)
	}
	pulumi.Run(stacks.Program(f))
}

// fleetRoot finds the fleet repository: the language host runs the program
// from its `main` directory, so walk up to the Pulumi.yaml.
func fleetRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, fleet.ProjectFile)); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s found in %s or any parent directory", fleet.ProjectFile, dir)
		}
	}
}
