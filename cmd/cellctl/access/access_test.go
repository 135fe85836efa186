package access

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	evaluator "github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
)

func check(t *testing.T, format string, args []string, reqCtx []string, want string) (string, error) {
	t.Helper()
	fl := fleettest.Load(t, fleettest.Demo(t))
	io, _, out, _ := iostreams.Test()
	view, err := render.Pick(format, formats...)
	if err != nil {
		t.Fatal(err)
	}
	opts := &CheckOptions{IO: io, Fleet: func() (*fleet.Fleet, error) { return fl, nil }, View: view,
		Principal: args[0], Action: args[1], Resource: args[2], Context: reqCtx, Want: want}
	err = checkRun(context.Background(), opts)
	return out.String(), err
}

func TestCheckAnswersFromTheFleetsPolicies(t *testing.T) {
	out, err := check(t, "table", []string{"cell-a/task", "s3:PutObject", "router/bucket/cells/cell-a/x"}, nil, "allowed")
	if err != nil || !strings.HasPrefix(out, "Allowed: cell-a/task-role s3:PutObject arn:aws:s3:::") ||
		!strings.Contains(out, "Allow statement CellObjects in cell-a/task-policy (inline)") || !strings.Contains(out, "kms:GenerateDataKey") {
		t.Fatalf("err %v, out:\n%s", err, out)
	}
	// Another cell's prefix: denied, which is what --want denied expects.
	out, err = check(t, "json", []string{"cell-a/task-role", "s3:GetObject", "router/bucket/cells/cell-b/x"}, nil, "denied")
	var a Answer
	if err != nil || json.Unmarshal([]byte(out), &a) != nil || a.Verdict.Decision != evaluator.ImplicitDeny {
		t.Fatalf("err %v, out:\n%s", err, out)
	}
	// ... and a finding (exit 2) when allowed was expected.
	_, err = check(t, "table", []string{"cell-a/task-role", "s3:GetObject", "router/bucket/cells/cell-b/x"}, nil, "allowed")
	if exitcode.Of(err) != exitcode.Findings {
		t.Fatalf("want exit %d, got %v", exitcode.Findings, err)
	}
	// The list condition needs its prefix.
	if _, err = check(t, "table", []string{"cell-b/task", "s3:ListBucket", "router/bucket"}, []string{"s3:prefix=cells/cell-b/"}, "allowed"); err != nil {
		t.Fatal(err)
	}
	if _, err = check(t, "table", []string{"cell-b/task", "s3:ListBucket", "router/bucket"}, []string{"s3:prefix=cells/cell-a/"}, "denied"); err != nil {
		t.Fatal(err)
	}
}

func TestCheckNamesWhatItDoesNotKnow(t *testing.T) {
	for _, c := range []struct {
		args    []string
		context []string
		want    string
	}{
		{[]string{"cell-z/task", "s3:GetObject", "router/bucket"}, nil, `no principal "cell-z/task" in the fleet (principals: cell-a/execution-role`},
		{[]string{"cell-a/task", "s3:GetObject", "nowhere/x"}, nil, `no resource "nowhere/x" in the fleet`},
		{[]string{"cell-a/task", "s3:GetObject", "router/bucket"}, []string{"s3:prefix"}, `--context "s3:prefix": want key=value`},
	} {
		_, err := check(t, "table", c.args, c.context, "allowed")
		var f *outcome.FindingsError
		if err == nil || errors.As(err, &f) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
