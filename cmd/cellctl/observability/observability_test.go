package observability

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/iostreams"
)

func factory(output string) (*cmdutil.Factory, *bytes.Buffer) {
	io, _, stdout, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Dir, f.Global.Output, f.Global.Cloud, f.Global.Parallel = "../../..", output, cmdutil.CloudAWS, 1
	return f, stdout
}

func TestExportNeedsADirectory(t *testing.T) {
	f, _ := factory(cmdutil.FormatTable)
	cmd := NewCmdObservability(f, func(*ExportOptions) error { t.Fatal("ran"); return nil })
	cmd.SetArgs([]string{"export"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--prometheus DIR is required") {
		t.Fatalf("error %v", err)
	}
}

// The demo fleet's export: both files, thresholds from its waves.yaml gate
// ("< 0.5%" → fires at >= 0.005), the fleet's name in the dashboard.
func TestExportOfTheDemoFleet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "prom")
	f, stdout := factory(cmdutil.FormatTable)
	cmd := NewCmdObservability(f, nil)
	cmd.SetArgs([]string{"export", "--prometheus", dir, "--cell-label", "cell_id"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile(filepath.Join(dir, "cellctl-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rules), `cell:error_rate:5m{cell_id=~"cell-a|cell-b|cell-c|cell-d"} >= 0.005`) {
		t.Errorf("rules:\n%s", rules)
	}
	dash, _ := os.ReadFile(filepath.Join(dir, "cellctl-grafana-dashboard.json"))
	if !strings.Contains(string(dash), `"uid": "cellctl-cells"`) {
		t.Errorf("dashboard uid")
	}
	if !strings.Contains(stdout.String(), "wrote "+filepath.Join(dir, "cellctl-rules.yml")) {
		t.Errorf("stdout %s", stdout)
	}
}
