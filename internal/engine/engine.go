// Package engine drives the real Pulumi engine for a fleet through the
// Automation API: one workspace per stack (never a shared "current stack"
// file, pulumi/pulumi#8186), the fleet program inline (no per-run go
// build), any Pulumi backend (a file backend under .cellctl/state by
// default), the secrets provider each stack file names (passphrase or a
// key management service, secretsprovider.go), bounded parallelism across
// stacks, per-stack results and errors, and live progress events.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/safefile"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// StateDir is where cellctl keeps local state inside the fleet repository.
const StateDir = cloud.StateDir

// DemoPassphrase encrypts secrets of the local demo only (file backend under
// .cellctl/state on the simulated cloud). Anything real must set
// PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE).
const DemoPassphrase = "cellctl-local-demo"

// Options configure an Engine.
type Options struct {
	Fleet *fleet.Fleet
	// Program builds the Pulumi program of a fleet; nil: stacks.Program.
	// A run with inputs gets the program of a fleet copy that carries them.
	Program func(f *fleet.Fleet) pulumi.RunFunc
	// Backend is a Pulumi backend URL; empty: $PULUMI_BACKEND_URL, else the
	// file backend under <fleet>/.cellctl/state.
	Backend string
	// Passphrase for the passphrase secrets provider; empty: from the
	// environment, or DemoPassphrase when AllowDemoPassphrase.
	Passphrase string
	// AllowDemoPassphrase permits DemoPassphrase; it is always permitted
	// on the simulated cloud with the local file backend.
	AllowDemoPassphrase bool
	// SecretsProvider is the secrets provider of a stack whose file names
	// none (--secrets-provider): passphrase or a key management service
	// URL such as awskms://alias/cells?region=us-east-1. Empty: the one
	// the fleet's other stack files name, else the passphrase.
	SecretsProvider string
	// Parallel bounds how many stacks Status reads at once.
	Parallel int
	// Cloud is how stacks reach their cloud (provider attach, pending
	// operations, plugin downloads); nil: AWS.
	Cloud *cloud.Bundle
	// Pulumi is the CLI to run; nil: FindPulumi.
	Pulumi auto.PulumiCommand
	// Env is added to every stack's environment (PULUMI_HOME in tests, …).
	Env map[string]string
	// Events receives resource-level progress; nil discards it. (The run
	// plan sends each stack's start and finish.)
	Events func(stackrun.Event)
	// Log receives notes for the operator (stderr).
	Log io.Writer
}

// Engine runs Pulumi operations over a fleet.
type Engine struct {
	opts       Options
	cloud      *cloud.Bundle
	backend    string
	passphrase string

	// previewPlan is the origin-verify secret previews use for stacks
	// whose file has none yet (never written anywhere).
	previewMu   sync.Mutex
	previewPlan *originPlan

	// crypters are the passphrase crypters by salt (see secretcrypt.go).
	crypterMu sync.Mutex
	crypters  map[string]config.Crypter

	// stateBlobs reads the backend's files without the CLI (blobs).
	blobsOnce  sync.Once
	stateBlobs stateBlobs
	blobsErr   error
}

// New checks the options and the pulumi CLI.
func New(opts Options) (*Engine, error) {
	if opts.Fleet == nil {
		return nil, errors.New("engine: a fleet is required")
	}
	if opts.Parallel < 1 {
		opts.Parallel = 1
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	e := &Engine{opts: opts, cloud: opts.Cloud}
	if e.cloud == nil {
		e.cloud = &cloud.Bundle{Kind: cloud.AWS}
	}

	e.backend = BackendURL(opts.Backend, opts.Fleet.Dir)
	// The demo passphrase protects nothing real: only the simulated cloud
	// with the default backend (the fleet's own .cellctl/state) may use it.
	if e.cloud.Kind == cloud.Sim && opts.Backend == "" && os.Getenv("PULUMI_BACKEND_URL") == "" {
		opts.AllowDemoPassphrase = true
	}
	if opts.SecretsProvider != "" {
		if err := CheckSecretsProvider(opts.SecretsProvider); err != nil {
			return nil, fmt.Errorf("--secrets-provider: %w", err)
		}
	}
	// A passphrase is required only by a fleet with a stack on the
	// passphrase provider: one whose stack files all name a KMS key runs
	// with none set, and never falls back to one.
	need, err := e.needsPassphrase()
	if err != nil {
		return nil, err
	}
	pass, err := passphrase(opts)
	if err != nil && need {
		return nil, err
	}
	if need {
		e.passphrase = pass
	} else if opts.Passphrase != "" || os.Getenv("PULUMI_CONFIG_PASSPHRASE") != "" || os.Getenv("PULUMI_CONFIG_PASSPHRASE_FILE") != "" {
		e.passphrase = pass // a stack added later may use it; the demo one is never taken unasked
	}
	if e.opts.Pulumi == nil {
		path, err := FindPulumi(filepath.Join(opts.Fleet.Dir, "bin"))
		if err != nil {
			return nil, err
		}
		if e.opts.Pulumi, err = NewCommand(path); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// BackendURL is the backend a fleet's engine uses: the --backend flag,
// else PULUMI_BACKEND_URL, else the file backend in the fleet's
// .cellctl/state (created by the first run that writes state, see open: a
// read-only command on a fresh clone leaves no .cellctl behind).
func BackendURL(flag, fleetDir string) string {
	if flag != "" {
		return flag
	}
	if u := os.Getenv("PULUMI_BACKEND_URL"); u != "" {
		return u
	}
	return "file://" + filepath.ToSlash(filepath.Join(fleetDir, StateDir, "state"))
}

// Backend is the backend URL in use.
func (e *Engine) Backend() string { return e.backend }

// IsLocalBackend reports whether state lives in the fleet's .cellctl/state.
func (e *Engine) IsLocalBackend() bool {
	return e.backend == "file://"+filepath.ToSlash(filepath.Join(e.opts.Fleet.Dir, StateDir, "state"))
}

func passphrase(opts Options) (string, error) {
	if opts.Passphrase != "" {
		return opts.Passphrase, nil
	}
	if p := os.Getenv("PULUMI_CONFIG_PASSPHRASE"); p != "" {
		return p, nil
	}
	if f := os.Getenv("PULUMI_CONFIG_PASSPHRASE_FILE"); f != "" {
		b, err := safefile.Read(f, 64<<10)
		if err != nil {
			return "", fmt.Errorf("PULUMI_CONFIG_PASSPHRASE_FILE: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	if opts.AllowDemoPassphrase {
		return DemoPassphrase, nil
	}
	return "", errors.New("no secrets passphrase: set PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE); " +
		"the built-in demo passphrase is only used with --cloud sim and the local file backend")
}

// workspace is one stack's private workspace: a fresh directory holding a
// copy of Pulumi.yaml and the stack's config file, so concurrent stacks and
// concurrent cellctl processes never share a file. It lives in the
// system's temporary directory ($TMPDIR), never in the fleet repository:
// a read-only command must leave the repository as it found it, even when
// it is killed before it removes its workspace.
type workspace struct {
	stack     auto.Stack
	dir       string
	stackFile string // the copy inside dir
	repoFile  string // the fleet's stack file
	attach    *cloud.Attachment
	// base is the stack file as the run started from it (and as last
	// written back): what the run changed is the copy's difference to it.
	base []byte
	// writable is set for the operations that may store what they change
	// in the stack file (up, the origin-verify secret); every other one
	// writes nothing.
	writable bool
	lockPath string
	// scratchBackend is the throwaway file backend a preview of a stack
	// the backend does not hold yet runs against (removed on close).
	scratchBackend string
	// after answers the SDK's questions after an up or a destroy from the
	// operation's own events (afterrun.go).
	after *afterRun
}

// access says whether a workspace's changes to the stack file are kept.
type access bool

const (
	readOnly  access = false
	readWrite access = true
)

func (w *workspace) close() {
	if w.attach != nil && w.attach.Close != nil {
		_ = w.attach.Close()
	}
	_ = os.RemoveAll(w.dir)
	if w.scratchBackend != "" {
		_ = os.RemoveAll(w.scratchBackend)
	}
}

// stackFileOf returns the fleet-relative stack file of a stack.
func (e *Engine) stackFileOf(name string) (string, error) {
	f := e.opts.Fleet
	if name == fleet.RouterStack && f.Router != nil {
		return f.Router.File, nil
	}
	if c := f.Cell(name); c != nil {
		return c.File, nil
	}
	return "", fmt.Errorf("unknown stack %q (stacks of this fleet: %s)", name, strings.Join(f.StackNames(), ", "))
}

// open prepares the workspace of one stack. create selects whether a
// missing stack is created (up, preview) or reported (status, destroy).
// program is the Pulumi program the workspace runs (nil: the fleet's
// current configuration).
//
// mode readWrite lets the run's own changes to the stack file (the salt,
// a secret) be merged back into the repository's file, and creates a
// missing stack in the backend; readOnly never writes the stack file nor
// the backend: a missing stack it must "create" (a preview of a cell not
// deployed yet) is created in a scratch file backend in $TMPDIR, removed
// with the workspace, so the preview plans every resource as a create and
// the real backend gains no empty stack.
func (e *Engine) open(ctx context.Context, name string, create bool, mode access, program pulumi.RunFunc) (*workspace, error) {
	if program == nil {
		var err error
		if program, err = e.program(name, stackrun.Inputs{}); err != nil {
			return nil, err
		}
	}
	rel, err := e.stackFileOf(name)
	if err != nil {
		return nil, err
	}
	// A broken checkpoint is named before anything reads or runs.
	if err := e.checkCheckpoint(name); err != nil {
		return nil, err
	}
	backend, scratch, err := e.backendFor(ctx, name, create, mode)
	if err != nil {
		return nil, err
	}
	dir, err := mkdirTemp("cellctl-" + name + "-")
	if err != nil {
		if scratch != "" {
			_ = os.RemoveAll(scratch)
		}
		return nil, err
	}
	w := &workspace{scratchBackend: scratch, dir: dir, repoFile: filepath.Join(e.opts.Fleet.Dir, rel), writable: bool(mode),
		lockPath: filepath.Join(e.opts.Fleet.Dir, StateDir, "locks", "stackfile-"+name+".lock")}
	ok := false
	defer func() {
		if !ok {
			w.close()
		}
	}()
	project, err := inlineProject(filepath.Join(e.opts.Fleet.Dir, fleet.ProjectFile))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, fleet.ProjectFile), project, 0o644); err != nil {
		return nil, err
	}
	w.stackFile = filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(w.stackFile), 0o755); err != nil {
		return nil, err
	}
	stackData, err := safefile.Read(w.repoFile, maxStackFile)
	if err != nil {
		return nil, err
	}
	w.base = stackData
	if err := os.WriteFile(w.stackFile, stackData, 0o644); err != nil {
		return nil, err
	}
	provider, err := e.providerOf(name)
	if err != nil {
		return nil, err
	}
	if create && mode == readWrite && provider == PassphraseProvider && e.passphrase != "" {
		if err := e.shareFleetSalt(ctx, name, w.stackFile); err != nil {
			return nil, fmt.Errorf("stack %s: %w", name, err)
		}
	}
	penv, err := e.providerEnv(ctx, provider)
	if err != nil {
		return nil, fmt.Errorf("stack %s: %w", name, err)
	}
	env := map[string]string{
		"PULUMI_BACKEND_URL":       backend,
		"PULUMI_SKIP_UPDATE_CHECK": "true",
		// Several stacks run at once; a confirmation prompt would hang.
		"PULUMI_SKIP_CONFIRMATIONS": "true",
	}
	if e.cloud.Offline {
		env["PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION"] = "true"
	}
	for k, v := range penv {
		env[k] = v
	}
	for k, v := range e.opts.Env {
		env[k] = v
	}
	if e.cloud.Attach != nil {
		a, err := e.cloud.Attach(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("attaching the cloud: %w", err)
		}
		w.attach = a
		for k, v := range a.Env {
			env[k] = v
		}
	}
	w.after = newAfterRun(e.opts.Pulumi)
	if scratch == "" && e.holdsStack(ctx, name) {
		w.after.selected = name
	}
	ws, err := auto.NewLocalWorkspace(ctx,
		auto.WorkDir(dir),
		auto.Program(program),
		auto.EnvVars(env),
		auto.Pulumi(w.after),
		auto.SecretsProvider(provider),
	)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	// A file backend's checkpoint can be read while another process is
	// replacing it (two operators on one stack): retryBusy, and let the
	// operation itself meet the other process's lock.
	notDeployed := false
	err = retryBusy(ctx, func() error {
		var err error
		if create {
			w.stack, err = auto.UpsertStack(ctx, name, ws)
		} else {
			w.stack, err = auto.SelectStack(ctx, name, ws)
			if auto.IsSelectStack404Error(err) {
				notDeployed = true
				return nil
			}
		}
		return err
	})
	if notDeployed {
		return nil, ErrNotDeployed
	}
	if err != nil {
		return nil, fmt.Errorf("stack %s: %w", name, cleanErr(err))
	}
	// Creating a stack writes its provider state (the passphrase salt, or
	// the service's secretsprovider and encryptedkey) into the stack file;
	// keep the repository's copy in step (a run that may write only).
	if err := w.writeBack(); err != nil {
		return nil, err
	}
	ok = true
	return w, nil
}

// maxStackFile bounds the stack files and Pulumi.yaml the engine reads:
// the fleet loader's limit, so a file the loader accepted reads here too.
const maxStackFile = fleet.MaxConfigFileBytes

// backendFor picks the backend a workspace of stack runs against. A run
// that may write (mode readWrite) gets the fleet's backend, whose local
// directory is created then. A read-only run never creates anything
// there: one that only reads a stack (create false: status, unlock,
// destroy's checks) of a stack the backend lacks is ErrNotDeployed; one
// that must run the program (create: a preview) gets the fleet's backend
// when it holds the stack — and, for the router, every cell it references
// — else a scratch file backend in $TMPDIR holding copies of the stacks
// the fleet's backend has and empty ones for the rest (its directory is
// returned for removal). So a preview of a fresh clone plans every
// resource as a create and the fleet's backend gains no empty stack.
func (e *Engine) backendFor(ctx context.Context, stack string, create bool, mode access) (backend, scratch string, err error) {
	root, isFile := strings.CutPrefix(e.backend, "file://")
	if mode == readWrite {
		if isFile {
			if err := os.MkdirAll(filepath.FromSlash(root), 0o755); err != nil {
				return "", "", fmt.Errorf("creating the local state directory: %w", err)
			}
		}
		return e.backend, "", nil
	}
	if !isFile && !create {
		return e.backend, "", nil // SelectStack reports a missing stack
	}
	have, err := e.stacksInBackend(ctx)
	if err != nil {
		return "", "", err
	}
	if !have[stack] && !create {
		return "", "", ErrNotDeployed
	}
	needs := []string{stack}
	if stack == fleet.RouterStack {
		// The router program reads every cell's outputs through a stack
		// reference, which fails on a stack the backend does not hold.
		needs = e.opts.Fleet.StackNames()
	}
	complete := true
	for _, n := range needs {
		complete = complete && have[n]
	}
	if complete || !create {
		return e.backend, "", nil
	}
	dir, err := e.scratchBackend(ctx, have)
	if err != nil {
		return "", "", fmt.Errorf("preparing a scratch backend for the preview of %s: %w", stack, err)
	}
	return "file://" + filepath.ToSlash(dir), dir, nil
}

// holdsStack says whether the fleet's diy backend (file:// or s3://)
// holds a checkpoint of stack (plain or gzipped; open checked it is one).
// Such a stack needs no `pulumi stack select` before its operation
// (afterRun answers it).
func (e *Engine) holdsStack(ctx context.Context, stack string) bool {
	bl, ok, err := e.blobs(ctx)
	if !ok || err != nil {
		return false
	}
	for _, k := range []string{e.stackKey(stack), e.stackKey(stack) + ".gz"} {
		if held, err := bl.exists(ctx, k); err == nil && held {
			return true
		}
	}
	return false
}

// stacksInBackend says which of the fleet's stacks the backend holds: by
// their checkpoints on a diy backend (nothing is created when the
// directory is missing), else by listing the backend's stacks.
func (e *Engine) stacksInBackend(ctx context.Context) (map[string]bool, error) {
	have := map[string]bool{}
	bl, ok, err := e.blobs(ctx)
	if err != nil {
		return nil, err
	}
	if ok {
		names, err := bl.list(ctx, ".pulumi/stacks/"+e.opts.Fleet.Project)
		if err != nil {
			return nil, fmt.Errorf("listing the stacks of %s: %w", e.backend, err)
		}
		for _, n := range names {
			if s, ok := strings.CutSuffix(strings.TrimSuffix(n, ".gz"), ".json"); ok {
				have[s] = true
			}
		}
		return have, nil
	}
	ws, cleanup, err := e.probeWorkspace(ctx, e.backend)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	stacks, err := ws.ListStacks(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the stacks of %s: %w", e.backend, cleanErr(err))
	}
	for _, s := range stacks {
		name := s.Name
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		have[name] = true
	}
	return have, nil
}

// probeWorkspace is a workspace on backend that selects no stack.
func (e *Engine) probeWorkspace(ctx context.Context, backend string) (auto.Workspace, func(), error) {
	dir, err := mkdirTemp("cellctl-probe-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	project, err := inlineProject(filepath.Join(e.opts.Fleet.Dir, fleet.ProjectFile))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, fleet.ProjectFile), project, 0o644)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	env := map[string]string{"PULUMI_BACKEND_URL": backend, "PULUMI_SKIP_UPDATE_CHECK": "true"}
	if e.passphrase != "" {
		env["PULUMI_CONFIG_PASSPHRASE"] = e.passphrase
	}
	if p, err := e.defaultProvider(); err == nil && p != PassphraseProvider {
		penv, err := e.providerEnv(ctx, p)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		for k, v := range penv {
			env[k] = v
		}
	}
	for k, v := range e.opts.Env {
		env[k] = v
	}
	ws, err := auto.NewLocalWorkspace(ctx, auto.WorkDir(dir), auto.EnvVars(env), auto.Pulumi(e.opts.Pulumi))
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("workspace: %w", err)
	}
	return ws, cleanup, nil
}

// scratchBackend builds a file backend in $TMPDIR with every fleet stack:
// a copy of the state of those the fleet's backend holds (have), an empty
// stack for the others. The copies keep their secrets encrypted, as the
// checkpoints they come from do: the scratch backend is on disk.
func (e *Engine) scratchBackend(ctx context.Context, have map[string]bool) (string, error) {
	dir, err := mkdirTemp("cellctl-scratch-backend-")
	if err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(dir)
		}
	}()
	project := e.opts.Fleet.Project
	stacksDir := filepath.Join(dir, ".pulumi", "stacks", project)
	if err := os.MkdirAll(stacksDir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ".pulumi", "meta.yaml"), []byte("version: 1\n"), 0o644); err != nil {
		return "", err
	}
	var remote auto.Workspace // a backend only the CLI reads
	for _, n := range e.opts.Fleet.StackNames() {
		fqn := "organization/" + project + "/" + n
		latest := json.RawMessage("null")
		var cp []byte // the backend's own checkpoint, when it reads directly
		if have[n] {
			data, held, err := e.readCheckpoint(ctx, n)
			if err != nil {
				return "", err
			}
			cp = data
			if !held {
				if remote == nil {
					ws, cleanup, err := e.probeWorkspace(ctx, e.backend)
					if err != nil {
						return "", err
					}
					defer cleanup()
					remote = ws
				}
				dep, err := exportEncrypted(ctx, remote, n)
				if err != nil {
					return "", err
				}
				latest = dep.Deployment
			}
		}
		if cp == nil {
			var err error
			if cp, err = json.Marshal(map[string]any{"version": 3, "checkpoint": map[string]any{"stack": fqn, "latest": latest}}); err != nil {
				return "", err
			}
		}
		if err := os.WriteFile(filepath.Join(stacksDir, n+".json"), cp, 0o644); err != nil {
			return "", err
		}
	}
	ok = true
	return dir, nil
}

// ErrNotDeployed says a stack has never been deployed to the backend.
var ErrNotDeployed = stackrun.ErrNotDeployed

// writeBack merges what this run changed in its copy of the stack file
// (encryption salt, a secret cellctl set) into the repository's file as it
// is now; a read-only workspace writes nothing. See stackfile.go.
func (w *workspace) writeBack() error {
	if !w.writable {
		return nil
	}
	now, err := safefile.Read(w.stackFile, maxStackFile)
	if err != nil {
		return err
	}
	err = writeBackStackFile(w.repoFile, w.lockPath, w.base, now)
	var conflict *ConflictError
	if err == nil || errors.As(err, &conflict) {
		w.base = now
	}
	return err
}

// cleanErr shortens an Automation API error to what the user needs: the
// CLI's stderr, without the command line and stdout dump, nor the lines
// the CLI's AWS SDK logs there (withoutSDKLog).
func cleanErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if i := strings.Index(msg, "\nstderr: "); i >= 0 {
		stderr := strings.TrimSpace(withoutSDKLog(msg[i+len("\nstderr: "):]))
		if stderr != "" {
			return &cliError{msg: stderr, err: err}
		}
	}
	return err
}

// sdkLogLine is a line aws-sdk-go-v2's default logger writes to stderr
// ("SDK 2026/12/07 12:26:20 WARN Response has no supported checksum…"):
// the pulumi CLI's S3 backend and KMS secrets provider print them before
// the error itself, where they were taken for the stack's error.
var sdkLogLine = regexp.MustCompile(`^SDK \d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} [A-Z]+ `)

// withoutSDKLog drops the AWS SDK's log lines from the CLI's stderr.
func withoutSDKLog(stderr string) string {
	if !strings.Contains(stderr, "SDK ") {
		return stderr
	}
	lines := strings.Split(stderr, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !sdkLogLine.MatchString(l) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

type cliError struct {
	msg string
	err error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }

// inlineProject returns the fleet's Pulumi.yaml for an inline-program
// workspace: the same project and config, without `main` (the program runs
// inside cellctl, not from cmd/cells).
func inlineProject(path string) ([]byte, error) {
	data, err := safefile.Read(path, maxStackFile)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "main" {
				m.Content = append(m.Content[:i], m.Content[i+2:]...)
				break
			}
		}
	}
	return yaml.Marshal(&doc)
}
