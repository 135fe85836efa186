package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

// statePulumi is a pulumi CLI that records its argv and its standard
// input under rec, answers `stack export` with a ciphertext deployment,
// and holds `stack import` until release exists (the moment a kill -9
// would freeze).
func statePulumi(t *testing.T, rec, release string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pulumi")
	script := `#!/bin/sh
if [ "$1" = version ]; then echo v3.274.1; exit 0; fi
printf '%s\n' "$@" > ` + rec + `.argv
case "$*" in
*"stack export"*) echo '{"version":3,"deployment":{"resources":[{"outputs":{"s":{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","ciphertext":"v1:abc"}}}]}}' ;;
*"stack import"*) cat > ` + rec + `.stdin; touch ` + release + `.read
  while [ ! -e ` + release + ` ]; do sleep 0.05; done ;;
esac
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// freshTempRoot points $TMPDIR at a directory of the test's own and
// makes the process's run directory anew in it (the run directory is made
// once per process; a test's TMPDIR is removed when it ends).
func freshTempRoot(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	reset := func() {
		RemoveTempRoot()
		tempOnce, tempDir, tempErr, tempOwner = sync.Once{}, "", nil, nil
	}
	reset()
	t.Cleanup(reset)
	return tmp
}

func stateWorkspace(t *testing.T, pulumi string) auto.Workspace {
	t.Helper()
	cmd, err := NewCommand(pulumi)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := auto.NewLocalWorkspace(context.Background(), auto.WorkDir(t.TempDir()), auto.Pulumi(cmd),
		auto.EnvVars(map[string]string{"PULUMI_CONFIG_PASSPHRASE": "p"}))
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestImportNeverWritesTheDeploymentToDisk: a deployment with plaintext
// secrets reaches `pulumi stack import` whole, through its standard input;
// while the import runs no file under $TMPDIR (where the Automation API's
// ImportStack would have written it) holds the secret.
func TestImportNeverWritesTheDeploymentToDisk(t *testing.T) {
	tmp := freshTempRoot(t)
	rec := filepath.Join(t.TempDir(), "rec")
	release := filepath.Join(t.TempDir(), "release")
	ws := stateWorkspace(t, statePulumi(t, rec, release))
	const secret = "s3cr3t-origin-verify-value"
	dep := apitype.UntypedDeployment{Version: 3, Deployment: json.RawMessage(
		`{"resources":[{"outputs":{"s":{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","plaintext":"\"` + secret + `\""}}}]}`)}
	done := make(chan error, 1)
	go func() { done <- importState(context.Background(), ws, "cell-a", dep) }()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(release + ".read"); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the import ended before it read its input: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the import never read its input")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if hits := filesHolding(t, tmp, secret); len(hits) > 0 {
		t.Fatalf("the imported deployment is on disk while the import runs: %v", hits)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	argv, _ := os.ReadFile(rec + ".argv")
	if got := strings.Fields(string(argv)); strings.Contains(string(argv), "--file") || !strings.Contains(strings.Join(got, " "), "stack import --stack cell-a") {
		t.Errorf("import argv: %q", got)
	}
	var got apitype.UntypedDeployment
	stdin, _ := os.ReadFile(rec + ".stdin")
	if err := json.Unmarshal(stdin, &got); err != nil || got.Version != 3 || !strings.Contains(string(got.Deployment), secret) {
		t.Errorf("pulumi did not receive the deployment on stdin (%v): %.80s", err, stdin)
	}
}

// TestExportForDiskKeepsSecretsEncrypted: the export cellctl copies into
// a scratch backend never asks pulumi for plaintext.
func TestExportForDiskKeepsSecretsEncrypted(t *testing.T) {
	freshTempRoot(t)
	rec := filepath.Join(t.TempDir(), "rec")
	ws := stateWorkspace(t, statePulumi(t, rec, filepath.Join(t.TempDir(), "release")))
	dep, err := exportEncrypted(context.Background(), ws, "cell-a")
	if err != nil {
		t.Fatal(err)
	}
	argv, _ := os.ReadFile(rec + ".argv")
	if strings.Contains(string(argv), "--show-secrets") || !strings.Contains(string(argv), "export") {
		t.Errorf("export argv: %q", argv)
	}
	if !strings.Contains(string(dep.Deployment), `"ciphertext"`) {
		t.Errorf("the deployment read back: %s", dep.Deployment)
	}
}
