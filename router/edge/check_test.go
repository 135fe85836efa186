package edge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/router"
)

// TestCheckConfigRefusesWhatTheHandlerRefuses holds CheckConfig to the
// same bad configs and messages as routing.js compile() (check.test.js).
func TestCheckConfigRefusesWhatTheHandlerRefuses(t *testing.T) {
	files, err := filepath.Glob("../../testdata/routing/edge-config-bad/*.json")
	if err != nil || len(files) < 8 {
		t.Fatalf("bad configs: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".want")
			if err != nil {
				t.Fatal(err)
			}
			got := CheckConfig(data)
			if got == nil {
				t.Fatal("CheckConfig accepted a config the handler refuses")
			}
			if w := "edge routing config: " + strings.SplitN(string(want), "\n", 2)[0]; got.Error() != w {
				t.Errorf("CheckConfig: %v\nwant:        %s", got, w)
			}
		})
	}
}

// TestCheckConfigAcceptsWhatIsPackaged: every golden config the handler
// runs with, and a package built from the demo table, pass.
func TestCheckConfigAcceptsWhatIsPackaged(t *testing.T) {
	for _, name := range []string{"golden_config.json", "golden_config_partial.json", "golden_config_nohost.json", "golden_config_lanes.json"} {
		data, err := os.ReadFile(filepath.Join("../../testdata/routing", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckConfig(data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	table, err := router.Load("../../stacks/routing.json")
	if err != nil {
		t.Fatal(err)
	}
	origins := map[string]string{}
	for _, id := range table.CellIDs() {
		origins[id] = id + ".cells.example.com"
	}
	files, err := Package(table, origins, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckConfig([]byte(files[ConfigFile])); err != nil {
		t.Errorf("the packaged config: %v", err)
	}
}

// TestCheckTableFile: a valid table passes; one the table rules refuse
// fails with file:line: field; one naming a cell outside the fleet fails
// at that cell's line.
func TestCheckTableFile(t *testing.T) {
	good := []byte("{\n  \"version\": 2,\n  \"buckets\": 8,\n  \"cells\": {\n    \"cell-a\": {\"state\": \"active\", \"weight\": 1, \"buckets\": [\"0-7\"]}\n  },\n  \"overrides\": []\n}\n")
	if _, err := CheckTableFile("t.json", good, TableCheck{}); err != nil {
		t.Fatalf("valid table: %v", err)
	}
	_, err := CheckTableFile("t.json", good, TableCheck{FleetCells: []string{"cell-b"}, FleetFile: func(id string) string { return "stacks/Pulumi." + id + ".yaml" }})
	if err == nil || err.Error() != "t.json:5: cells.cell-a: not a cell of this fleet (no stacks/Pulumi.cell-a.yaml): remove it from the table or add the cell" {
		t.Errorf("cell outside the fleet: %v", err)
	}
	bad := []byte(strings.Replace(string(good), `"0-7"`, `"0-6"`, 1))
	if _, err := CheckTableFile("t.json", bad, TableCheck{}); err == nil || !strings.HasPrefix(err.Error(), "t.json:") {
		t.Errorf("unassigned bucket: %v", err)
	}
	_, err = CheckTableFile("t.json", good, TableCheck{Options: Options{TenantHeader: "Host"}})
	if err == nil || !strings.Contains(err.Error(), "the edge function cannot be built from this table") {
		t.Errorf("a tenant header the edge refuses: %v", err)
	}
}
