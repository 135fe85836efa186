package engine

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/sdk/v3/go/auto"
)

// MinPulumiVersion is the oldest pulumi CLI whose commands cellctl's
// Automation API calls use (refresh previews need 3.105).
var MinPulumiVersion = semver.MustParse("3.105.0")

// PinnedPulumiVersion is the CLI the repository's tools module builds.
const PinnedPulumiVersion = "v3.274.1"

// ErrNoPulumi says what to install when no usable CLI is found.
var ErrNoPulumi = errors.New("the pulumi CLI (≥ 3.105) is required: run `make pulumi` to build the pinned " +
	PinnedPulumiVersion + " into bin/, or install it from https://www.pulumi.com/docs/install/ and put it on PATH")

// FindPulumi locates a pulumi CLI: next to the cellctl executable first (the
// repository's bin/ holds the pinned build), then in extraDirs, then PATH.
func FindPulumi(extraDirs ...string) (string, error) {
	var candidates []string
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), "pulumi"))
	}
	for _, d := range extraDirs {
		candidates = append(candidates, filepath.Join(d, "pulumi"))
	}
	if p, err := exec.LookPath("pulumi"); err == nil {
		candidates = append(candidates, p)
	}
	var tooOld []string
	for _, c := range candidates {
		if st, err := os.Stat(c); err != nil || st.IsDir() {
			continue
		}
		v, err := pulumiVersion(c)
		if err != nil {
			tooOld = append(tooOld, fmt.Sprintf("%s (%v)", c, err))
			continue
		}
		if v.LT(MinPulumiVersion) {
			tooOld = append(tooOld, fmt.Sprintf("%s is v%s", c, v))
			continue
		}
		return c, nil
	}
	if len(tooOld) > 0 {
		return "", fmt.Errorf("%w; found only: %s", ErrNoPulumi, strings.Join(tooOld, "; "))
	}
	return "", ErrNoPulumi
}

// versions remembers each CLI's version for the life of the process: a
// command opens the engine more than once, and every `pulumi version` is a
// start of the CLI (about a quarter of a CPU-second, most of it the CLI's
// package initialisation).
var versions sync.Map // versionKey → semver.Version

type versionKey struct {
	path  string
	size  int64
	mtime time.Time
}

// pulumiVersion is the version the CLI at path reports. A build that
// records its linker flags (the pinned build, and release builds) carries
// the value `pulumi version` prints (the -X of sdk/v3/go/common/version.Version)
// in its build information, read without starting it; any other build is
// asked.
func pulumiVersion(path string) (semver.Version, error) {
	st, err := os.Stat(path)
	if err != nil {
		return semver.Version{}, err
	}
	key := versionKey{path: path, size: st.Size(), mtime: st.ModTime()}
	if v, ok := versions.Load(key); ok {
		return v.(semver.Version), nil
	}
	s, ok := linkedVersion(path)
	if !ok {
		cmd := exec.Command(path, "version")
		cmd.Env = append(os.Environ(), "PULUMI_SKIP_UPDATE_CHECK=true")
		out, err := cmd.Output()
		if err != nil {
			return semver.Version{}, fmt.Errorf("`pulumi version` failed: %v", err)
		}
		s = strings.TrimSpace(string(out))
	}
	s = strings.TrimPrefix(s, "v")
	if s == "" {
		return semver.Version{}, errors.New("it reports no version (a source build without -ldflags -X …version.Version; rebuild with `make pulumi`)")
	}
	v, err := semver.ParseTolerant(s)
	if err != nil {
		return semver.Version{}, fmt.Errorf("unparsable version %q", s)
	}
	versions.Store(key, v)
	return v, nil
}

// versionVar is the variable the pulumi CLI prints as its version.
const versionVar = "github.com/pulumi/pulumi/sdk/v3/go/common/version.Version="

// linkedVersion reads the version linked into a Go build of the CLI from
// its recorded -ldflags; ok is false when the binary records none.
func linkedVersion(path string) (string, bool) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", false
	}
	for _, s := range info.Settings {
		if s.Key != "-ldflags" {
			continue
		}
		_, rest, found := strings.Cut(s.Value, versionVar)
		if !found {
			return "", false
		}
		end := strings.IndexAny(rest, " \t'\"")
		if end >= 0 {
			rest = rest[:end]
		}
		return rest, rest != ""
	}
	return "", false
}

// command runs the pulumi CLI for the Automation API. It mirrors the SDK's
// own runner (non-interactive, own process group so a terminal Ctrl-C
// reaches only cellctl, SIGINT then kill on cancel) with one difference
// that matters when cellctl is killed: the CLI writes to files, not pipes.
// Its program and (simulated) provider die with cellctl, so the update
// fails on its own and pulumi saves the checkpoint and releases the lock;
// a pipe would instead kill it with SIGPIPE, leaving a stale lock. (A
// parent-death signal is no better: Linux sends it once per exiting thread
// of a Go process, and pulumi's second SIGINT means "terminate now".)
type command struct {
	path    string
	version semver.Version
}

// NewCommand returns a PulumiCommand for the CLI at path.
func NewCommand(path string) (auto.PulumiCommand, error) {
	v, err := pulumiVersion(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if v.LT(MinPulumiVersion) {
		return nil, fmt.Errorf("%s is v%s: %w", path, v, ErrNoPulumi)
	}
	return &command{path: path, version: v}, nil
}

func (c *command) Version() semver.Version { return c.version }

func (c *command) Run(ctx context.Context, workdir string, stdin io.Reader, extraOut, extraErr []io.Writer,
	extraEnv []string, args ...string,
) (string, string, int, error) {
	if !slices.Contains(args, "--non-interactive") {
		args = append([]string{"--non-interactive"}, args...)
	}
	cmd := exec.CommandContext(ctx, c.path, args...)
	cmd.Dir = workdir
	env := append(os.Environ(), extraEnv...)
	env = append(env, "PULUMI_AUTOMATION_API=true")
	cmd.Env = env
	// Files, not pipes: if cellctl dies, a pulumi writing to a broken pipe
	// would die of SIGPIPE before it releases the stack lock. The files
	// are unlinked as soon as they are open: the child writes and cellctl
	// reads through the open descriptors, so a `stack export
	// --show-secrets` never has a name on disk, and a kill -9 (which skips
	// every defer) leaves nothing behind — the kernel frees the data when
	// the last descriptor closes. Between create and unlink nothing has
	// been written yet; SweepTemp removes such an empty leftover.
	stdoutFile, err := anonymousFile("cellctl-pulumi-stdout-")
	if err != nil {
		return "", "", -2, err
	}
	defer stdoutFile.Close()
	stderrFile, err := anonymousFile("cellctl-pulumi-stderr-")
	if err != nil {
		return "", "", -2, err
	}
	defer stderrFile.Close()
	cmd.Stdout, cmd.Stderr = stdoutFile, stderrFile
	cmd.Stdin = stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// pulumi treats SIGINT as "cancel gracefully": it stops starting new
		// steps, waits for the ones in flight and saves the checkpoint.
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 30 * time.Second
	code := -2
	err = cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err == nil {
		code = 0
	}
	stdout, _ := readFromStart(stdoutFile)
	stderr, _ := readFromStart(stderrFile)
	for _, w := range extraOut {
		_, _ = w.Write(stdout)
	}
	for _, w := range extraErr {
		_, _ = w.Write(stderr)
	}
	return string(stdout), string(stderr), code, err
}

// anonymousFile is a file in this process's temporary directory with no
// name left on disk: created, then unlinked at once.
func anonymousFile(prefix string) (*os.File, error) {
	dir, err := TempRoot()
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, prefix)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readFromStart reads what the child wrote through the shared descriptor.
func readFromStart(f *os.File) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}
