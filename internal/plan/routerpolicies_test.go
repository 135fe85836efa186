package plan

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
)

var updateRouterPolicies = flag.Bool("update", false, "rewrite testdata/router-policies/*.golden")

// The router's policy documents (bucket, key, access point, trust and
// role policies) are written as they were when the router built them as
// Go maps: AWS reads any spelling alike, but Pulumi compares a policy's
// text, so another spelling would be an update of every deployed router.
// The golden files were written by the map-built router (-update) before
// it moved to internal/policy's typed document.
func TestRouterPoliciesRenderAsBefore(t *testing.T) {
	for name, overlays := range map[string][]string{
		"demo":         nil,
		"two-accounts": {fleettest.TwoAccounts},
	} {
		t.Run(name, func(t *testing.T) {
			f := fleettest.Load(t, fleettest.Demo(t, overlays...))
			rep, err := Render(context.Background(), f, Options{Now: testNow})
			if err != nil {
				t.Fatal(err)
			}
			router := stackNamed(rep, fleet.RouterStack)
			if router == nil {
				t.Fatal("no router stack in the render")
			}
			var lines []string
			for _, r := range router.recorded {
				for _, key := range []string{"policy", "assumeRolePolicy"} {
					if v, ok := r.Inputs[resource.PropertyKey(key)]; ok && v.IsString() {
						lines = append(lines, fmt.Sprintf("%s %s %s\n%s\n", r.Type, r.Name, key, v.StringValue()))
					}
				}
			}
			sort.Strings(lines)
			if len(lines) < 4 {
				t.Fatalf("only %d policies in the router's render", len(lines))
			}
			got := strings.Join(lines, "\n")
			file := filepath.Join("testdata", "router-policies", name+".golden")
			if *updateRouterPolicies {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("the router's policies differ from %s:\n%s", file, firstDiff(string(want), got))
			}
		})
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d\nwant: %s\n got: %s", i+1, a, b)
		}
	}
	return "(same lines)"
}
