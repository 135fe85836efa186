package engine

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/fleet"
)

// fakeCLI stands in for the pulumi CLI at the engine's seam
// (Options.Pulumi, an auto.PulumiCommand): it answers the commands the
// Automation API and the engine run, keeping each stack's state where a
// file backend keeps it (<root>/.pulumi/stacks/<project>/<stack>.json, so
// the engine's direct checkpoint readers see what it wrote) and its locks
// where pulumi keeps them. A backend that is not file:// is kept in a
// directory of the fake's own, laid out the same way. What an engine
// operation (up, preview, refresh, destroy) does is the test's: op.
type fakeCLI struct {
	t       *testing.T
	project string

	mu      sync.Mutex
	calls   []*fakeCall
	history map[string][]map[string]any // stack → updates, newest first
	remote  map[string]string           // non-file backend URL → directory

	// op runs an engine operation; nil: it succeeds, changing nothing.
	op func(c *fakeCall) fakeResult
	// plugins is what `plugin ls --json` lists; installErr fails
	// `plugin install`.
	plugins    []map[string]any
	installErr string
	salt       string // the encryptionsalt `stack init` writes
	// saltPerStack makes `stack init` write a salt of its own for each
	// stack, as the real CLI does, instead of the test's one salt.
	saltPerStack bool
	// mirror, when set, is called after every command on an s3://
	// backend with the fake's directory of it: it copies the directory
	// into the bucket, as the CLI's diy backend writes there.
	mirror func(url, root string)
}

// fakeCall is one command the engine ran.
type fakeCall struct {
	Args  []string
	Env   map[string]string
	Dir   string
	Stdin []byte
	// Verb is the command: "up", "preview", "refresh", "destroy",
	// "cancel", "stack select", "stack export", …
	Verb  string
	Stack string
}

// fakeResult is what an engine operation did.
type fakeResult struct {
	// Deployment replaces the stack's latest deployment (up, refresh,
	// destroy); nil leaves it.
	Deployment any
	Events     []apitype.EngineEvent
	Summary    map[apitype.OpType]int
	Stderr     string
	Code       int
}

func newFakeCLI(t *testing.T) *fakeCLI {
	return &fakeCLI{t: t, project: "cells", history: map[string][]map[string]any{}, remote: map[string]string{}}
}

// Version is the CLI the project builds (`make pulumi`): past 3.205 the
// SDK takes engine events over its gRPC events server, not by tailing a
// file — the file tail (nxadm/tail) can stop at the caller's Close
// before it reads what was appended last, losing the preview's summary
// under load.
func (f *fakeCLI) Version() semver.Version { return semver.MustParse("3.274.1") }

// streamEvents sends events to the SDK's events server as the pulumi CLI
// does (`--event-log tcp://localhost:PORT`), and closes the stream so
// the SDK has every event before the command returns.
func streamEvents(target string, evs []apitype.EngineEvent) error {
	addr, ok := strings.CutPrefix(target, "tcp://")
	if !ok {
		return fmt.Errorf("--event-log %q: the SDK of a CLI past 3.205 passes tcp://host:port", target)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	stream, err := pulumirpc.NewEventsClient(conn).StreamEvents(context.Background())
	if err != nil {
		return err
	}
	for i, ev := range evs {
		ev.Sequence, ev.Timestamp = i+1, int(time.Now().Unix())
		line, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if err := stream.Send(&pulumirpc.EventRequest{Event: string(line)}); err != nil {
			return err
		}
	}
	_, err = stream.CloseAndRecv()
	return err
}

func (c *fakeCall) flag(name string) (string, bool) {
	for i, a := range c.Args {
		if a == name && i+1 < len(c.Args) {
			return c.Args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func (c *fakeCall) has(name string) bool {
	for _, a := range c.Args {
		if a == name {
			return true
		}
	}
	return false
}

// calledVerbs lists the verbs run so far, in order.
func (f *fakeCLI) calledVerbs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Verb)
	}
	return out
}

func (f *fakeCLI) callsOf(verb string) []*fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*fakeCall
	for _, c := range f.calls {
		if c.Verb == verb {
			out = append(out, c)
		}
	}
	return out
}

// root is the directory a backend URL keeps its stacks in.
func (f *fakeCLI) root(url string) string {
	if p, ok := strings.CutPrefix(url, "file://"); ok {
		return filepath.FromSlash(p)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.remote[url]; ok {
		return d
	}
	d := f.t.TempDir()
	f.remote[url] = d
	return d
}

func (f *fakeCLI) checkpointFile(root, stack string) string {
	return filepath.Join(root, ".pulumi", "stacks", f.project, stack+".json")
}

func (f *fakeCLI) locksDir(root, stack string) string {
	return filepath.Join(root, ".pulumi", "locks", "organization", f.project, stack)
}

// latest reads a stack's latest deployment; ok is false when the stack
// does not exist.
func (f *fakeCLI) latest(root, stack string) (json.RawMessage, bool) {
	data, err := os.ReadFile(f.checkpointFile(root, stack))
	if err != nil {
		return nil, false
	}
	var cp struct {
		Checkpoint struct {
			Latest json.RawMessage `json:"latest"`
		} `json:"checkpoint"`
	}
	if err := json.Unmarshal(data, &cp); err != nil {
		f.t.Errorf("fake pulumi: %s: %v", stack, err)
		return nil, false
	}
	return cp.Checkpoint.Latest, true
}

func (f *fakeCLI) writeLatest(root, stack string, latest any) {
	writeCheckpoint(f.t, root, f.project, stack, latest)
}

// writeCheckpoint writes a file backend's checkpoint of stack.
func writeCheckpoint(t *testing.T, root, project, stack string, latest any) {
	t.Helper()
	data, err := json.Marshal(map[string]any{"version": 3, "checkpoint": map[string]any{"stack": "organization/" + project + "/" + stack, "latest": latest}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ".pulumi", "stacks", project, stack+".json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

var errExit = errors.New("exit status 255")

func (f *fakeCLI) Run(ctx context.Context, workdir string, stdin io.Reader, extraOut, extraErr []io.Writer,
	extraEnv []string, args ...string,
) (string, string, int, error) {
	c := &fakeCall{Args: args, Dir: workdir, Env: map[string]string{}}
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		c.Env[k] = v
	}
	if stdin != nil {
		c.Stdin, _ = io.ReadAll(stdin)
	}
	var words []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			break
		}
		words = append(words, a)
	}
	c.Verb = strings.Join(words, " ")
	if len(words) >= 2 && words[0] == "stack" {
		c.Verb = "stack " + words[1]
	}
	if len(words) >= 2 && words[0] == "plugin" {
		c.Verb = "plugin " + words[1]
	}
	c.Stack, _ = c.flag("--stack")
	if c.Verb == "stack init" && len(words) >= 3 {
		c.Stack = words[2]
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	out, errOut, code := f.run(c)
	if url := c.Env["PULUMI_BACKEND_URL"]; f.mirror != nil && strings.HasPrefix(url, "s3://") {
		f.mirror(url, f.root(url))
	}
	var err error
	if code != 0 {
		err = errExit
	}
	return out, errOut, code, err
}

func (f *fakeCLI) run(c *fakeCall) (string, string, int) {
	root := f.root(c.Env["PULUMI_BACKEND_URL"])
	switch c.Verb {
	case "stack select":
		if _, ok := f.latest(root, c.Stack); !ok {
			return "", fmt.Sprintf("error: no stack named '%s' found\n", c.Stack), 255
		}
		return "", "", 0
	case "stack init":
		if _, ok := f.latest(root, c.Stack); ok {
			return "", fmt.Sprintf("error: stack '%s' already exists\n", c.Stack), 255
		}
		f.writeLatest(root, c.Stack, nil)
		if p, _ := c.flag("--secrets-provider"); p == "" || p == PassphraseProvider {
			f.addSalt(c)
		}
		return "Created stack '" + c.Stack + "'\n", "", 0
	case "stack export":
		latest, ok := f.latest(root, c.Stack)
		if !ok {
			return "", fmt.Sprintf("error: no stack named '%s' found\n", c.Stack), 255
		}
		if len(latest) == 0 {
			latest = json.RawMessage("null")
		}
		out, _ := json.Marshal(map[string]any{"version": 3, "deployment": latest})
		return string(out), "", 0
	case "stack import":
		var dep apitype.UntypedDeployment
		if err := json.Unmarshal(c.Stdin, &dep); err != nil {
			return "", "error: could not read the deployment: " + err.Error() + "\n", 255
		}
		f.writeLatest(root, c.Stack, dep.Deployment)
		return "Import complete.\n", "", 0
	case "stack output":
		return f.outputs(root, c), "", 0
	case "stack history":
		f.mu.Lock()
		h := f.history[c.Stack]
		f.mu.Unlock()
		if size, ok := c.flag("--page-size"); ok && size == "1" && len(h) > 1 {
			h = h[:1]
		}
		if h == nil {
			h = []map[string]any{}
		}
		out, _ := json.Marshal(h)
		return string(out), "", 0
	case "stack ls":
		var list []map[string]any
		entries, _ := os.ReadDir(filepath.Join(root, ".pulumi", "stacks", f.project))
		for _, e := range entries {
			if n, ok := strings.CutSuffix(e.Name(), ".json"); ok {
				list = append(list, map[string]any{"name": "organization/" + f.project + "/" + n})
			}
		}
		out, _ := json.Marshal(list)
		return string(out), "", 0
	case "cancel":
		os.RemoveAll(f.locksDir(root, c.Stack))
		return "The currently running update for '" + c.Stack + "' has been canceled!\n", "", 0
	case "plugin ls":
		out, _ := json.Marshal(f.plugins)
		if f.plugins == nil {
			out = []byte("[]")
		}
		return string(out), "", 0
	case "plugin install":
		if f.installErr != "" {
			return "", f.installErr, 255
		}
		return "", "", 0
	case "up", "preview", "refresh", "destroy":
		return f.operate(root, c)
	}
	f.t.Errorf("fake pulumi: unexpected command %q", c.Args)
	return "", "error: the fake pulumi does not know this command\n", 255
}

// addSalt gives the workspace's stack file a passphrase salt, as
// `pulumi stack init` does.
func (f *fakeCLI) addSalt(c *fakeCall) {
	file := filepath.Join(c.Dir, "stacks", "Pulumi."+c.Stack+".yaml")
	data, err := os.ReadFile(file)
	if err != nil || bytes.Contains(data, []byte("encryptionsalt:")) {
		return
	}
	// One salt for every stack of a test (as after a first `stack init`
	// whose salt the others copied): the passphrase key is derived once.
	f.mu.Lock()
	if f.saltPerStack {
		f.salt = ""
	}
	if f.salt == "" {
		salt := []byte("fakesalt")
		if f.saltPerStack {
			salt = []byte(fmt.Sprintf("salt-%03d", len(f.calls)))
		}
		check, err := config.NewSymmetricCrypterFromPassphrase(c.Env["PULUMI_CONFIG_PASSPHRASE"], salt).EncryptValue(context.Background(), "pulumi")
		if err != nil {
			f.mu.Unlock()
			f.t.Errorf("fake pulumi: %v", err)
			return
		}
		f.salt = "v1:" + base64.StdEncoding.EncodeToString(salt) + ":" + check
	}
	salt := f.salt
	f.mu.Unlock()
	data = append([]byte("encryptionsalt: "+salt+"\n"), data...)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		f.t.Errorf("fake pulumi: %v", err)
	}
}

func (f *fakeCLI) outputs(root string, c *fakeCall) string {
	latest, _ := f.latest(root, c.Stack)
	var d struct {
		Resources []struct {
			Type    string         `json:"type"`
			Outputs map[string]any `json:"outputs"`
		} `json:"resources"`
	}
	_ = json.Unmarshal(latest, &d)
	out := map[string]any{}
	for _, r := range d.Resources {
		if r.Type != "pulumi:pulumi:Stack" {
			continue
		}
		for k, v := range r.Outputs {
			if m, ok := v.(map[string]any); ok && m[secretSig] != nil {
				if c.has("--show-secrets") {
					var plain any
					_ = json.Unmarshal([]byte(m["plaintext"].(string)), &plain)
					v = plain
				} else {
					v = "[secret]"
				}
			}
			out[k] = v
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// operate runs an engine operation: the lock first, as pulumi takes it.
func (f *fakeCLI) operate(root string, c *fakeCall) (string, string, int) {
	eventLog, hasLog := c.flag("--event-log")
	preview := c.Verb == "preview" || c.has("--preview-only")
	if _, ok := f.latest(root, c.Stack); !ok {
		return "", fmt.Sprintf("error: no stack named '%s' found\n", c.Stack), 255
	}
	if held := f.heldBy(root, c.Stack); held != "" {
		return "", held, 255
	}
	var res fakeResult
	if f.op != nil {
		res = f.op(c)
	}
	if hasLog {
		evs := append([]apitype.EngineEvent(nil), res.Events...)
		if preview {
			evs = append(evs, apitype.EngineEvent{SummaryEvent: &apitype.SummaryEvent{ResourceChanges: res.Summary, IsPreview: true}})
		}
		if err := streamEvents(eventLog, evs); err != nil {
			f.t.Errorf("fake pulumi: %v", err)
		}
	}
	if !preview {
		if res.Deployment != nil && res.Code == 0 {
			f.writeLatest(root, c.Stack, res.Deployment)
		}
		kind := map[string]string{"up": "update", "refresh": "refresh", "destroy": "destroy"}[c.Verb]
		result := "succeeded"
		if res.Code != 0 {
			result = "failed"
		}
		changes := map[string]int{}
		for k, v := range res.Summary {
			changes[string(k)] = v
		}
		at := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
		now := at.Format(time.RFC3339)
		f.mu.Lock()
		h := f.history[c.Stack]
		f.history[c.Stack] = append([]map[string]any{{"version": len(h) + 1, "kind": kind, "result": result, "startTime": now, "endTime": now,
			"message": "", "environment": map[string]string{}, "config": map[string]any{}, "resourceChanges": changes}}, h...)
		f.mu.Unlock()
		// The file backend keeps the entry as the real CLI does
		// (pulumi's backend.UpdateInfo, times in Unix seconds, no
		// version), beside a copy of the checkpoint.
		dir := filepath.Join(root, ".pulumi", "history", f.project, c.Stack)
		entry, _ := json.Marshal(map[string]any{"kind": kind, "startTime": at.Unix(), "message": "", "environment": map[string]string{},
			"config": map[string]any{}, "result": result, "endTime": at.Unix(), "resourceChanges": changes})
		if err := os.MkdirAll(dir, 0o755); err != nil {
			f.t.Errorf("fake pulumi: %v", err)
		}
		name := fmt.Sprintf("%s-%d.history.json", c.Stack, time.Now().UnixNano())
		if err := os.WriteFile(filepath.Join(dir, name), entry, 0o644); err != nil {
			f.t.Errorf("fake pulumi: %v", err)
		}
	}
	return "", res.Stderr, res.Code
}

// heldBy is pulumi's lock conflict message when the stack has locks.
func (f *fakeCLI) heldBy(root, stack string) string {
	dir := f.locksDir(root, stack)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "error: the stack is currently locked by %d lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.\n", len(entries))
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		var l struct {
			Pid       int       `json:"pid"`
			Username  string    `json:"username"`
			Hostname  string    `json:"hostname"`
			Timestamp time.Time `json:"timestamp"`
		}
		_ = json.Unmarshal(data, &l)
		fmt.Fprintf(&b, "  file://%s: created by %s@%s (pid %d) at %s\n", filepath.ToSlash(filepath.Join(dir, e.Name())), l.Username, l.Hostname, l.Pid, l.Timestamp.Format(time.RFC3339))
	}
	return b.String()
}

// lockStack leaves a lock of pid on host in a file backend, as a pulumi
// run holding (or killed while holding) it does.
func lockStack(t *testing.T, root, project, stack, host string, pid int) {
	t.Helper()
	dir := filepath.Join(root, ".pulumi", "locks", "organization", project, stack)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"pid": pid, "username": "ops", "hostname": host, "timestamp": time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)})
	if err := os.WriteFile(filepath.Join(dir, "1a2b3c.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testFleet copies the repository's fleet configuration (Pulumi.yaml and
// the stack directory's files, no program sources) into a directory of
// the test's own and loads it.
func testFleet(t *testing.T) *fleet.Fleet {
	t.Helper()
	dir := t.TempDir()
	copyFile := func(from, to string) {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("../../Pulumi.yaml", filepath.Join(dir, "Pulumi.yaml"))
	if err := os.MkdirAll(filepath.Join(dir, "stacks"), 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("../../stacks")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".go") {
			copyFile(filepath.Join("../../stacks", e.Name()), filepath.Join(dir, "stacks", e.Name()))
		}
	}
	f, err := fleet.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// testPassphrase encrypts the test fleets' secrets.
const testPassphrase = "test-passphrase"

// fakeEngine is an engine over a copy of the repository's fleet, a file
// backend in the test's directory and the fake pulumi CLI.
type fakeEngine struct {
	*Engine
	cli   *fakeCLI
	fleet *fleet.Fleet
	root  string // the file backend's directory
	log   *bytes.Buffer
}

func newFakeEngine(t *testing.T, mod ...func(*Options)) *fakeEngine {
	t.Helper()
	t.Setenv("PULUMI_BACKEND_URL", "")
	t.Setenv("PULUMI_CONFIG_PASSPHRASE", "")
	t.Setenv("PULUMI_CONFIG_PASSPHRASE_FILE", "")
	f := testFleet(t)
	cli := newFakeCLI(t)
	root := filepath.Join(t.TempDir(), "state")
	log := &bytes.Buffer{}
	opts := Options{
		Fleet:      f,
		Program:    func(*fleet.Fleet) pulumi.RunFunc { return func(*pulumi.Context) error { return nil } },
		Backend:    "file://" + filepath.ToSlash(root),
		Passphrase: testPassphrase,
		Cloud:      &cloud.Bundle{Kind: cloud.AWS, Offline: true},
		Pulumi:     cli,
		Log:        log,
	}
	for _, m := range mod {
		m(&opts)
	}
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeEngine{Engine: e, cli: cli, fleet: f, root: root, log: log}
}

// stackFile reads a stack's file in the fleet repository.
func (fe *fakeEngine) stackFile(t *testing.T, stack string) string {
	t.Helper()
	rel, err := fe.stackFileOf(stack)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(fe.fleet.Dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// urn is a resource's URN in the fleet's project.
func urn(stack, typ, name string) string {
	return "urn:pulumi:" + stack + "::cells::" + typ + "::" + name
}

// deploymentWith is a deployment holding the stack resource with outputs
// and the given resources.
func deploymentWith(stack string, outputs map[string]any, resources ...map[string]any) map[string]any {
	all := []map[string]any{{"urn": urn(stack, "pulumi:pulumi:Stack", "cells-"+stack), "type": "pulumi:pulumi:Stack", "custom": false, "outputs": outputs}}
	all = append(all, resources...)
	return map[string]any{"manifest": map[string]any{"time": "2026-11-30T05:00:00Z"}, "resources": all}
}

// secretOutput is a secret value as a deployment stores it (the fake
// keeps its plaintext for `stack output --show-secrets`).
func secretOutput(v string) map[string]any {
	p, _ := json.Marshal(v)
	return map[string]any{secretSig: "1b47061264138c4ac30d75fd1eb44270", "plaintext": string(p), "ciphertext": "v1:AAAA:BBBB"}
}
