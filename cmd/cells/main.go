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
	prog, err := program()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	pulumi.Run(prog)
}

// program is the fleet's program for the repository the working directory
// is in; an error says why there is none (no fleet, or an invalid one).
func program() (pulumi.RunFunc, error) {
	dir, err := fleetRoot()
	if err != nil {
		return nil, err
	}
	f, err := fleet.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("invalid fleet configuration:\n%w", err)
	}
	return stacks.Program(f), nil
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
