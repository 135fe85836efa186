package spec_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/adapters/cellspec"
	"github.com/cellctl/cellctl/waves/executor"
)

// The migration settings survive the rollout record (waves/executor/
// cellspec), so a rollback restores the command and timeout the cell ran
// before the wave; changing the command is a setting diff, not a skip.
func TestMigrationsSurviveTheRolloutRecord(t *testing.T) {
	c := spec.Baseline()
	c.ID, c.Index, c.Region, c.Image = "cell-b", 2, "eu-west-1", "registry.example.com/app:v1"
	c.MigrationCommand = []string{"./migrate", "up"}
	c.MigrationRollbackCommand = []string{"./migrate", "down"}
	c.MigrationTimeoutSeconds = 600
	cfg, err := cellspec.FromSpec(c)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var back executor.CellConfig
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, err := cellspec.ToSpec(back)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip:\n got %+v %v\nwant %+v", got, err, c)
	}
	d := c
	d.MigrationCommand = []string{"./migrate", "up", "--to", "v2"}
	next, _ := cellspec.FromSpec(d)
	if cfg.Equal(next) {
		t.Error("a changed migration command is equal: the cell would be skipped")
	}
}
