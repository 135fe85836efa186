package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildCLI builds a stand-in CLI whose `version` prints printed, linked
// with ldflags.
func buildCLI(t *testing.T, printed, ldflags string) string {
	t.Helper()
	dir := t.TempDir()
	src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"" + printed + "\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module fakepulumi\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pulumi")
	args := []string{"build", "-o", bin}
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in CLI: %v\n%s", err, out)
	}
	return bin
}

// TestVersionReadFromTheLinkedFlags: a CLI that records the -X of
// pulumi's version variable is not started to learn its version (this one
// would print another), and one that records none is asked.
func TestVersionReadFromTheLinkedFlags(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain on PATH to build a stand-in CLI")
	}
	linked := buildCLI(t, "v9.9.9", "-s -X 'github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v3.200.1' -X main.unused=1")
	v, err := pulumiVersion(linked)
	if err != nil || v.String() != "3.200.1" {
		t.Fatalf("linked build: %v, %v; want 3.200.1 read from its build information", v, err)
	}
	asked := buildCLI(t, "v3.150.0", "")
	v, err = pulumiVersion(asked)
	if err != nil || v.String() != "3.150.0" {
		t.Fatalf("build without the flag: %v, %v; want 3.150.0 from `pulumi version`", v, err)
	}
	// Neither linked nor printed: refused, with what to do.
	empty := buildCLI(t, "", "")
	if _, err := pulumiVersion(empty); err == nil {
		t.Fatal("a CLI that reports no version was accepted")
	}
}
