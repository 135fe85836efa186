package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/gated"
	"github.com/cellctl/cellctl/router"
)

// The router step re-reads routing.json and the deployed tableVersion
// before shipping: a table published since the deploy started, or a newer
// deployed table, is refused (issue 21 item 3).
func TestRouterStepRefusesAStaleTable(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "stacks"), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "stacks", "routing.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "stacks", fleet.RoutingFile)
	write := func(version string) {
		t.Helper()
		data := strings.Replace(string(src), `"version": 1,`, `"version": `+version+`,`, 1)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("2")
	loaded, err := router.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	deployed := map[string]any{"tableVersion": 2.0}
	env := &Env{Env: gated.Env{Fleet: &fleet.Fleet{Dir: dir, StackDir: "stacks", Routing: loaded},
		Outputs: func(context.Context, string) (map[string]any, error) { return deployed, nil }}}
	ctx := context.Background()
	if err := checkTable(ctx, env); err != nil {
		t.Fatalf("an unchanged table: %v", err)
	}
	write("3") // a drain published v3 while the rollout ran
	if err := checkTable(ctx, env); err == nil || !strings.Contains(err.Error(), "is now version 3, but this deploy read version 2") {
		t.Fatalf("a table published meanwhile: %v", err)
	}
	write("2")
	deployed["tableVersion"] = 3.0
	if err := checkTable(ctx, env); err == nil || !strings.Contains(err.Error(), "serves routing table version 3, newer than") {
		t.Fatalf("a newer deployed table: %v", err)
	}
	deployed["tableVersion"] = "x"
	if err := checkTable(ctx, env); err == nil || !strings.Contains(err.Error(), "not a version number") {
		t.Fatalf("an unreadable tableVersion: %v", err)
	}
}
