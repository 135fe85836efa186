package plan

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
)

// The execution role pulls the image: from an ECR repository in the
// cell's account its identity policy suffices; from another account's
// the repository's policy must allow too, and the render has none, so
// each pull is a finding naming the missing repository policy. An image
// from another registry has no IAM path: the model says so and no path
// is invented.
func TestTheExecutionRolePullsTheImage(t *testing.T) {
	for _, tc := range []struct {
		name, image string
		// findings: the pull paths that must be findings (0 or all).
		ecr, findings bool
	}{
		{"same account", Account + ".dkr.ecr.us-east-1.amazonaws.com/shop/api:v1", true, false},
		{"another account", "999999999999.dkr.ecr.us-east-1.amazonaws.com/shop/api:v1", true, true},
		{"another registry", "registry.example.com/shop/api:v1", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fleettest.Load(t, fleettest.Demo(t))
			for _, c := range f.Cells {
				c.Image = tc.image
			}
			r, m := renderPaths(t, f)
			pulls := 0
			for _, x := range r.Required {
				if !strings.HasPrefix(x.Path.Action, "ecr:") {
					continue
				}
				pulls++
				token := x.Path.Action == "ecr:GetAuthorizationToken"
				if want := tc.findings && !token; x.Finding != want {
					t.Errorf("%s: %s (%s), want finding %v", x.Path.Name, x.Decision, x.Reason, want)
				}
				if x.Finding && !strings.Contains(x.Reason, "has no repository policy in the render") {
					t.Errorf("%s: the finding does not name the missing repository policy: %s", x.Path.Name, x.Reason)
				}
			}
			if want := map[bool]int{true: 3 * len(f.Cells)}[tc.ecr]; pulls != want {
				t.Errorf("%d ECR pull paths, want %d", pulls, want)
			}
			images := m.Images()
			if len(images) < len(f.Cells) {
				t.Fatalf("the model records %d images, want one per task definition: %+v", len(images), images)
			}
			for _, img := range images {
				if tc.ecr != (img.Repository != "") || tc.ecr == (img.Note != "") {
					t.Errorf("image %+v: want ECR %v, and a note exactly when it is not", img, tc.ecr)
				}
			}
			var other []access.Result
			for _, x := range r.Findings() {
				if !strings.HasPrefix(x.Path.Action, "ecr:") {
					other = append(other, x)
				}
			}
			if len(other) > 0 {
				t.Errorf("other findings: %+v", other)
			}
		})
	}
}
