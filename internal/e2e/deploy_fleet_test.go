package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The deploy tests start from the demo fleet deployed once (every cell
// and the router on the repository's image): the up is the expensive part
// (real pulumi runs of five stacks), so it runs once per test binary and
// each test gets its own copy of the fleet directory — stack files, the
// file backend and the simulated cloud — to deploy to.
var demoFixture = &deployedFixture{what: "the demo fleet"}

// twoCellFixture is the demo fleet cut to cell-a and cell-b (twoCellFleet:
// waves canary and wave-1), deployed once likewise: for the tests whose
// claim holds for every cell and wave alike, at half the engine runs of
// the demo fleet's four cells and three waves.
var twoCellFixture = &deployedFixture{what: "the two-cell fleet", prepare: twoCellFleet}

// deployedFixture is a fleet deployed once per test binary.
type deployedFixture struct {
	what    string
	prepare func(t testing.TB, dir string) // changes the demo fleet's files before the up

	once sync.Once
	base string
	err  string
}

// baseImage is the image the demo fleet's repository sets.
const baseImage = "registry.example.com/shop/api:1.4.2"

// demoCells are the demo fleet's cells in wave order.
var demoCells = []string{"cell-a", "cell-b", "cell-c", "cell-d"}

// deployedFleet returns a private copy of the demo fleet, deployed.
func deployedFleet(t *testing.T) string {
	t.Helper()
	return demoFixture.copy(t)
}

// deployedTwoCellFleet returns a private copy of the two-cell fleet
// (cell-a in wave canary, cell-b in wave-1, and the router), deployed.
func deployedTwoCellFleet(t *testing.T) string {
	t.Helper()
	return twoCellFixture.copy(t)
}

// copy deploys the fixture the first time and returns a private copy.
func (f *deployedFixture) copy(t *testing.T) string {
	t.Helper()
	f.once.Do(func() {
		// Beside the test binary's tools: TestMain removes it at the end.
		base, err := os.MkdirTemp(filepath.Dir(binDir), "deployed-")
		if err != nil {
			f.err = err.Error()
			return
		}
		copyFleetFiles(t, base)
		if f.prepare != nil {
			f.prepare(t, base)
		}
		addDemoZones(t, base)
		r := cellctl(t, base, "up")
		if r.code != 0 {
			f.err = "up of " + f.what + ": " + r.String()
			return
		}
		f.base = base
	})
	if f.err != "" {
		t.Fatal(f.err)
	}
	dir := filepath.Join(t.TempDir(), "fleet")
	// cp -a keeps the backend's and the simulator's files exactly (modes,
	// times); nothing in them names the directory they live in.
	if out, err := exec.Command("cp", "-a", f.base, dir).CombinedOutput(); err != nil {
		t.Fatalf("copying the deployed fleet: %v\n%s", err, out)
	}
	return dir
}

// copyFleetFiles writes the demo fleet's repository files into dir.
func copyFleetFiles(t testing.TB, dir string) {
	t.Helper()
	copyFile(t, filepath.Join(repoRoot, "Pulumi.yaml"), filepath.Join(dir, "Pulumi.yaml"))
	entries, err := os.ReadDir(filepath.Join(repoRoot, "stacks"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".json") {
			copyFile(t, filepath.Join(repoRoot, "stacks", e.Name()), filepath.Join(dir, "stacks", e.Name()))
		}
	}
}

// writeWaves replaces the fleet's waves.yaml (a test's own bakes).
func writeWaves(t testing.TB, dir, yaml string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "stacks", "waves.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantImages checks every cell runs the image given for it, both as its
// stack exports it and in the simulated cloud's task definitions.
func wantImages(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := cellImages(t, dir)
	for _, c := range demoCells {
		if got[c] != want[c] {
			t.Errorf("%s runs %q, want %q", c, got[c], want[c])
		}
	}
}

// images maps the demo cells to images: the first n get img, the rest
// other.
func images(n int, img, other string) map[string]string {
	out := map[string]string{}
	for i, c := range demoCells {
		if i < n {
			out[c] = img
		} else {
			out[c] = other
		}
	}
	return out
}

// rolloutJSON is the part of a rollout record (`rollout status -o json`)
// the tests read.
type rolloutJSON struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Holder struct {
		ID      string    `json:"id"`
		Host    string    `json:"host"`
		PID     int       `json:"pid"`
		Started time.Time `json:"started"`
	} `json:"holder"`
	Waves []struct {
		Name      string    `json:"name"`
		State     string    `json:"state"`
		BakeStart time.Time `json:"bakeStart"`
		Polls     []struct {
			At time.Time `json:"at"`
		} `json:"polls"`
		Reason string `json:"reason"`
		Breach *struct {
			Cell   string `json:"cell"`
			Signal string `json:"signal"`
		} `json:"breach"`
		Cells []struct {
			Cell      string          `json:"cell"`
			State     string          `json:"state"`
			Before    json.RawMessage `json:"before"`
			After     json.RawMessage `json:"after"`
			Updated   time.Time       `json:"updated"`
			Migration *migrationJSON  `json:"migration"`
		} `json:"cells"`
	} `json:"waves"`
}

// migrationJSON is a cell's migration task in a rollout record.
type migrationJSON struct {
	Image         string    `json:"image"`
	Task          string    `json:"task"`
	ExitCode      *int      `json:"exitCode"`
	LastLines     []string  `json:"lastLines"`
	SchemaVersion string    `json:"schemaVersion"`
	Started       time.Time `json:"started"`
	Stopped       time.Time `json:"stopped"`
	TimedOut      bool      `json:"timedOut"`
	Error         string    `json:"error"`
}

// rolloutStatus reads the record of rollout id ("" = the latest).
func rolloutStatus(t *testing.T, dir, id string) rolloutJSON {
	t.Helper()
	args := []string{"rollout", "status", "-o", "json"}
	if id != "" {
		args = append(args, id)
	}
	var rec rolloutJSON
	r := cellctl(t, dir, args...)
	decode(t, r, &rec)
	// The exit code says whether the change shipped: 3 for a halted or
	// aborted one, 0 otherwise.
	want := 0
	if rec.State == "halted" || rec.State == "aborted" {
		want = 3
	}
	if r.code != want {
		t.Fatalf("rollout status of a %s rollout: want exit %d, got %s", rec.State, want, r)
	}
	return rec
}

// waveStates is "name=state" per wave, in order.
func (r rolloutJSON) waveStates() string {
	var s []string
	for _, w := range r.Waves {
		s = append(s, w.Name+"="+w.State)
	}
	return strings.Join(s, " ")
}

// cellStates is the state of every cell in the record.
func (r rolloutJSON) cellStates() map[string]string {
	out := map[string]string{}
	for _, w := range r.Waves {
		for _, c := range w.Cells {
			out[c.Cell] = c.State
		}
	}
	return out
}

// rolloutID finds the rollout id deploy announced on stderr.
func rolloutID(t *testing.T, stderr string) string {
	t.Helper()
	for _, f := range strings.FieldsFunc(stderr, func(r rune) bool { return r == ' ' || r == '\n' || r == ':' || r == ',' || r == '`' }) {
		if len(f) == 14 && strings.HasPrefix(f, "r-") {
			return f
		}
	}
	t.Fatalf("no rollout id in:\n%s", stderr)
	return ""
}

// sortedKeys is for stable failure messages.
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
