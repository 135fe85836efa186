package stackview

import (
	"io"
	"testing"

	"github.com/cellctl/cellctl/internal/desired"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/executor"
)

// A schema a rolled-back release left, unproven under the old image, is
// shown as left by that rollout and needing a check — not as a failed
// migration, and with no version to migrate to.
func TestSchemaCellOfASchemaAhead(t *testing.T) {
	sc := &desired.Schema{SchemaState: executor.SchemaState{Cell: "cell-a", Version: "0002", Rollout: "r-bad", Failed: "boom", FailedRollout: "r-later"},
		Shipped: "0001", LeftBy: "r-bad", Problem: "left", Ahead: true}
	if got := schemaCell(render.NewStyles(io.Discard, false), sc); got != "0002 (left by rolled-back r-bad, unproven: cellctl drift --behind)" {
		t.Errorf("schema cell %q", got)
	}
}
