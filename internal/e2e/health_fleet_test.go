package e2e

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// withCapacity publishes every cell's capacity in the copied fleet's
// baseline, so the cells get their CellCapacityWarning alarm.
func withCapacity(t *testing.T, dir string, rps int) {
	t.Helper()
	p := filepath.Join(dir, "Pulumi.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "config:\n", "config:\n  cells:capacityRequestsPerSecond: "+strconv.Itoa(rps)+"\n", 1)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// One cell made bad among four: a 5xx rate of 1.2 % against the gate's
// "< 0.5%" (the simulator counts whole responses: 7 of 600 a minute,
// 1.167 %), while the fleet-wide rate ((7 + 3 × 1) / 2400 = 0.417 %) still
// passes. `cellctl health` lists it first, exits 2, and its fleet-average
// line says the average hides it; -o json says the same as data. Read
// through the aws-sdk-go-v2 CloudWatch client from the simulator's AWS
// endpoint, over the simulator's per-minute history.
func TestHealthOneBadCellAmongFour(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	withCapacity(t, dir, 50)
	mustRun(t, dir, "up", "cell-a", "cell-b", "cell-c", "cell-d")

	r := mustRun(t, dir, "health")
	if !strings.Contains(r.stdout, "all 4 cells healthy") || !strings.Contains(r.stdout, "4 OK") {
		t.Fatalf("a healthy fleet:\n%s", r)
	}

	mustRun(t, dir, "sim", "health", "set", "--cell", "cell-c", "--error-rate", "1.2%")
	r = cellctl(t, dir, "health", "--since", "15m")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", r.code, r)
	}
	lines := strings.Split(r.stdout, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[2], "cell-c") || !strings.Contains(lines[2], "error_rate_5xx 1.167% fails < 0.5%") {
		t.Fatalf("cell-c must be the first row:\n%s", r)
	}
	for _, want := range []string{
		"worst cell     cell-c   5xx 1.167%",
		"fleet average  4 cells  5xx 0.417%",
		"the fleet average hides the worst cell — error_rate_5xx: the fleet average 0.417% passes < 0.5%, but cell-c is at 1.167%",
		"1 of 4 cells have findings (exit 2)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r)
		}
	}

	var doc struct {
		Worst  string   `json:"worst"`
		Hidden []string `json:"averageHides"`
		Cells  []struct {
			Cell string `json:"cell"`
			Now  struct {
				RequestsPerSecond *float64 `json:"requestsPerSecond"`
				ErrorRatePercent  *float64 `json:"errorRatePercent"`
				LoadPercent       *float64 `json:"loadPercent"`
				HealthyTasks      *float64 `json:"healthyTasks"`
			} `json:"now"`
			Window struct {
				RequestsPerSecond *float64 `json:"requestsPerSecond"`
			} `json:"window"`
			Alarms []struct{ Key, Name, State string } `json:"alarms"`
		} `json:"cells"`
		Fleet struct {
			ErrorRatePercent *float64 `json:"errorRatePercent"`
		} `json:"fleetAverage"`
	}
	r = cellctl(t, dir, "health", "-o", "json")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", r.code, r)
	}
	decode(t, r, &doc)
	if doc.Worst != "cell-c" || len(doc.Hidden) != 1 || doc.Fleet.ErrorRatePercent == nil || math.Abs(*doc.Fleet.ErrorRatePercent-100*10.0/2400) > 1e-9 {
		t.Errorf("json: worst %s hidden %v fleet %v", doc.Worst, doc.Hidden, doc.Fleet.ErrorRatePercent)
	}
	c := doc.Cells[len(doc.Cells)-1]
	// 600 requests a minute (the simulator's default) of 50 req/s capacity,
	// also over the backfilled window.
	if c.Now.RequestsPerSecond == nil || *c.Now.RequestsPerSecond != 10 || *c.Now.LoadPercent != 20 ||
		c.Window.RequestsPerSecond == nil || *c.Window.RequestsPerSecond != 10 || *c.Now.HealthyTasks != 2 {
		t.Errorf("json readings of %s: %+v", c.Cell, c)
	}
	keys := map[string]string{}
	for _, a := range c.Alarms {
		keys[a.Key] = a.State
	}
	if len(keys) != 4 || keys["capacity"] != "OK" {
		t.Errorf("alarms of %s: %v, want the three gate alarms and CellCapacityWarning", c.Cell, c.Alarms)
	}

	// Only the named cells.
	r = mustRun(t, dir, "health", "cell-a", "b")
	if strings.Contains(r.stdout, "cell-c") || !strings.Contains(r.stdout, "all 2 cells healthy") {
		t.Errorf("health cell-a b:\n%s", r)
	}
}
