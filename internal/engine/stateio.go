package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

// The one way cellctl moves a stack's deployment out of and into the
// backend by itself. The Automation API's own pair is unfit for it:
// ExportStack always passes --show-secrets, and ImportStack writes the
// deployment (plaintext, when it came from such an export) to a named
// file in $TMPDIR before it runs `stack import --file`, a file a kill -9
// leaves behind. Here an export that is written anywhere keeps its
// secrets encrypted, and an import reaches pulumi through a pipe: no
// deployment ever has a name on disk.

// exportEncrypted returns the stack's deployment with its secrets as
// ciphertext (`stack export` without --show-secrets): what may be copied
// into another backend or a file.
func exportEncrypted(ctx context.Context, ws auto.Workspace, stack string) (apitype.UntypedDeployment, error) {
	var dep apitype.UntypedDeployment
	stdout, stderr, code, err := runWith(ctx, ws, nil, "stack", "export", "--stack", stack)
	if err != nil {
		return dep, commandError("exporting "+stack, stdout, stderr, code, err)
	}
	if err := json.Unmarshal([]byte(stdout), &dep); err != nil {
		return dep, fmt.Errorf("exporting %s: unreadable deployment: %w", stack, err)
	}
	return dep, nil
}

// importState replaces the stack's deployment with dep, handed to
// `pulumi stack import` on its standard input. A cellctl killed half-way
// leaves pulumi a truncated document, which it refuses, so the stack's
// state is either the old or the new one.
func importState(ctx context.Context, ws auto.Workspace, stack string, dep apitype.UntypedDeployment) error {
	data, err := json.Marshal(dep)
	if err != nil {
		return fmt.Errorf("importing into %s: %w", stack, err)
	}
	stdout, stderr, code, err := runWith(ctx, ws, bytes.NewReader(data), "stack", "import", "--stack", stack)
	if err != nil {
		return commandError("importing into "+stack, stdout, stderr, code, err)
	}
	return nil
}

// runWith runs the workspace's pulumi CLI in its directory with its
// environment, as the Automation API's own calls do.
func runWith(ctx context.Context, ws auto.Workspace, stdin io.Reader, args ...string) (string, string, int, error) {
	lw, ok := ws.(*auto.LocalWorkspace)
	if !ok {
		return "", "", -2, fmt.Errorf("workspace %T has no pulumi command", ws)
	}
	var env []string
	if home := lw.PulumiHome(); home != "" {
		env = append(env, "PULUMI_HOME="+home)
	}
	for k, v := range lw.GetEnvVars() {
		env = append(env, k+"="+v)
	}
	return lw.PulumiCommand().Run(ctx, lw.WorkDir(), stdin, nil, nil, env, args...)
}

// commandError is a failed pulumi call told by what it said on stderr
// (the engine's typed errors, e.g. a busy checkpoint, read that text).
func commandError(what, stdout, stderr string, code int, err error) error {
	msg := strings.TrimSpace(stderr)
	if msg == "" {
		msg = strings.TrimSpace(stdout)
	}
	if msg == "" {
		msg = fmt.Sprintf("exit %d: %v", code, err)
	}
	return classifyBusy(&cliError{msg: what + ": " + msg, err: err})
}
