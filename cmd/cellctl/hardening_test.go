package main

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/exitcode"
)

// unlock must refuse a path before it reaches the backend (it used to say
// "../../../etc/passwd is not locked").
func TestUnlockRefusesInvalidStackName(t *testing.T) {
	stdout, stderr, code := execute(t, "unlock", "../../../etc/passwd", "--dir", "../..")
	want := `error: "../../../etc/passwd" is not a valid stack name: stacks are "router" and cell ids`
	if code != exitcode.Error || !strings.Contains(stderr, want) || stdout != "" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
}

// A fault that could never fire is refused before the simulated cloud is
// touched (it used to be stored silently).
func TestSimFaultAddRefusesWhatNeverFires(t *testing.T) {
	for args, want := range map[string]string{
		"--cell cell-z":         `unknown cell or stack "cell-z": the fleet's stacks are cell-a, cell-b, cell-c, cell-d, router`,
		"--type rds/clusterz":   `unknown resource type "rds/clusterz"`,
		"--name cell-a-[":       `bad name pattern "cell-a-["`,
		"--times 0":             "times must be at least 1, got 0",
		"--cell a --op explode": `invalid operation "explode"`,
	} {
		_, stderr, code := execute(t, append([]string{"sim", "fault", "add", "--dir", "../.."}, strings.Fields(args)...)...)
		if code != exitcode.Error || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, %s", args, code, stderr)
		}
	}
}
