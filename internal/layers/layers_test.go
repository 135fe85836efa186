package layers

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	listOnce sync.Once
	listed   map[string][]string
	listErr  error
)

// modulePackages lists every package of the module with the module's
// packages it imports (production code only: tests may reach across),
// from one `go list` shared by the tests.
func modulePackages(t *testing.T) map[string][]string {
	t.Helper()
	listOnce.Do(func() { listed, listErr = goList() })
	if listErr != nil {
		t.Fatal(listErr)
	}
	return listed
}

func goList() (map[string][]string, error) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, Module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(f[0], Module), "/")
		var deps []string
		for _, imp := range f[1:] {
			if r, ok := strings.CutPrefix(imp, Module+"/"); ok {
				deps = append(deps, r)
			}
		}
		pkgs[rel] = deps
	}
	if len(pkgs) < 40 {
		return nil, fmt.Errorf("go list found %d packages: it did not see the module", len(pkgs))
	}
	return pkgs, nil
}

// TestLayers: every package is placed in a layer, and none imports a
// package of a higher layer.
func TestLayers(t *testing.T) {
	pkgs := modulePackages(t)
	var unplaced, upward []string
	for p, deps := range pkgs {
		if p == "" || strings.HasPrefix(p, "tools") {
			continue
		}
		lp, ok := Of(p)
		if !ok {
			unplaced = append(unplaced, p)
			continue
		}
		for _, d := range deps {
			if ld, ok := Of(d); ok && ld > lp {
				upward = append(upward, p+" ("+lp.String()+") imports "+d+" ("+ld.String()+")")
			}
		}
	}
	sort.Strings(unplaced)
	sort.Strings(upward)
	for _, p := range unplaced {
		t.Errorf("%s is in no layer: place it in internal/layers' table (and docs/ARCHITECTURE.md)", p)
	}
	for _, u := range upward {
		t.Errorf("a lower layer imports a higher one: %s", u)
	}
}

// TestCommandsDoNotImportEachOther: a command reaches shared wiring
// through the composition root and logic through the use cases, never
// through another command's package.
func TestCommandsDoNotImportEachOther(t *testing.T) {
	pkgs := modulePackages(t)
	var bad []string
	for p, deps := range pkgs {
		from := Command(p)
		if from == "" || MayImportCommands[from] {
			continue
		}
		for _, d := range deps {
			to := Command(d)
			if to == "" || to == from || d == CompositionRoot {
				continue
			}
			bad = append(bad, p+" imports "+d)
		}
		if p == CompositionRoot {
			for _, d := range deps {
				if Command(d) != "" {
					bad = append(bad, "the composition root imports the command "+d)
				}
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestOnlyTheCloudBundleKnowsTheSimulator: the simulator stands in for
// AWS at the API boundary only. Its subpackages import each other; no
// production package imports test support (TestSupport: the simulator's
// driver, the PostgreSQL lock, the AGPL IAM judge internal/iamsim, the
// moto judge internal/motojudge) —
// `go list`'s Imports are the non-test files' only.
func TestOnlyTheCloudBundleKnowsTheSimulator(t *testing.T) {
	for p, deps := range modulePackages(t) {
		for _, d := range deps {
			if IsSimulator(d) && !SimulatorUsers[p] && !IsSimulator(p) {
				t.Errorf("%s imports the simulator (%s): only %v may", p, d, SimulatorUsers)
			}
			if TestSupport[d] {
				t.Errorf("%s imports %s, which only tests may import", p, d)
			}
		}
	}
}

// TestRenderRootImportsNoView: see RenderRoot.
func TestRenderRootImportsNoView(t *testing.T) {
	for _, d := range modulePackages(t)[RenderRoot] {
		if strings.HasPrefix(d, RenderRoot+"/") {
			t.Errorf("%s imports %s: its subpackages import it, never the other way", RenderRoot, d)
		}
	}
}

// TestPulumiFreePackagesReachNoPulumiPackage: see PulumiFree.
func TestPulumiFreePackagesReachNoPulumiPackage(t *testing.T) {
	args := []string{"list", "-f", `{{.ImportPath}} {{join .Deps " "}}`}
	for _, p := range PulumiFree {
		args = append(args, Module+"/"+p)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	seen := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		seen++
		var pulumi []string
		for _, d := range f[1:] {
			if strings.HasPrefix(d, "github.com/pulumi/") {
				pulumi = append(pulumi, d)
			}
		}
		if len(pulumi) > 0 {
			t.Errorf("%s reaches %d Pulumi packages (e.g. %s); it must reach none (layers.PulumiFree says why)", f[0], len(pulumi), pulumi[0])
		}
	}
	if seen != len(PulumiFree) {
		t.Errorf("go list answered for %d packages, want %d", seen, len(PulumiFree))
	}
}

// TestOf pins the table's matching rules: the longest entry wins and a
// "/..." entry covers what is below it.
func TestOf(t *testing.T) {
	for rel, want := range map[string]Layer{
		"internal/awsapi":           Infrastructure,
		"internal/awsapi/wire":      Base,
		"waves":                     Domain,
		"internal/adapters/backend": UseCases,
		"waves/executor/fromwaves":  UseCases,
		"cmd/cellctl/deploy":        Commands,
		"internal/render/routing":   UseCases,
		"internal/sim":              Infrastructure,
		"internal/sim/store":        Infrastructure,
	} {
		if got, ok := Of(rel); !ok || got != want {
			t.Errorf("Of(%s) = %v, %v; want %v", rel, got, ok, want)
		}
	}
	if _, ok := Of("internal/nosuch"); ok {
		t.Error("an unlisted package must be unplaced")
	}
	for rel, want := range map[string]bool{"internal/sim": true, "internal/sim/health": true, "internal/simulate": false, "internal/health": false} {
		if IsSimulator(rel) != want {
			t.Errorf("IsSimulator(%s) = %v", rel, !want)
		}
	}
	if got := Command("cmd/cellctl/deploy"); got != "cmd/cellctl/deploy" {
		t.Errorf("Command = %q", got)
	}
}
