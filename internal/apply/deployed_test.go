package apply

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// deployedEngine is a fakeEngine whose stacks have deployed outputs.
type deployedEngine struct {
	fakeEngine
	outputs map[string]map[string]any
	readErr error
}

func (d *deployedEngine) DeployedOutputs(_ context.Context, stack string) (map[string]any, error) {
	if d.readErr != nil {
		return nil, d.readErr
	}
	if o, ok := d.outputs[stack]; ok {
		return o, nil
	}
	return nil, stackrun.ErrNotDeployed
}

func deployedEnv(t *testing.T, d *deployedEngine) *Env {
	env, _ := envFor(demoFleet(t), &d.fakeEngine)
	env.Engine = func() (Engine, error) { return d, nil }
	return env
}

func TestRenumberingADeployedCellIsRefusedBeforeAnyRun(t *testing.T) {
	d := &deployedEngine{}
	env := deployedEnv(t, d)
	b := env.Fleet.Cell("cell-b")
	// Deployed as index 9; the stack file now says cell-b's own index.
	d.outputs = map[string]map[string]any{
		"cell-a": {"index": float64(env.Fleet.Cell("cell-a").Index), "cidr": env.Fleet.Cell("cell-a").CIDR(), "region": env.Fleet.Cell("cell-a").Region},
		"cell-b": {"index": float64(9), "cidr": "10.9.0.0/16", "region": b.Region},
	}
	for _, run := range []func(context.Context, *Env, Options) (*Report, error){Up, Preview} {
		d.calls, d.runs = nil, nil
		_, err := run(context.Background(), env, Options{})
		if err == nil {
			t.Fatal("a renumbered deployed cell was not refused")
		}
		msg := err.Error()
		for _, want := range []string{"refused, nothing was run", "cell-b: " + b.File, "deployed as index 9 (10.9.0.0/16)",
			"set cells:index back to 9", "add a new cell", "migrate cell-b's tenants"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message lacks %q:\n%s", want, msg)
			}
		}
		if strings.Contains(msg, "cell-a:") {
			t.Errorf("cell-a is unchanged and not named:\n%s", msg)
		}
		if len(d.calls) != 0 {
			t.Fatalf("the engine ran despite the refusal: %v", d.calls)
		}
	}
}

func TestRegionChangeOfADeployedCellIsRefused(t *testing.T) {
	d := &deployedEngine{}
	env := deployedEnv(t, d)
	c := env.Fleet.Cell("cell-c")
	d.outputs = map[string]map[string]any{"cell-c": {"index": float64(c.Index), "cidr": c.CIDR(), "region": "ap-south-1"}}
	_, err := Up(context.Background(), env, Options{Cells: []string{"cell-c"}})
	if err == nil || !strings.Contains(err.Error(), "deployed in ap-south-1") || !strings.Contains(err.Error(), "set aws:region back to ap-south-1") {
		t.Fatalf("err = %v", err)
	}
	if len(d.calls) != 0 {
		t.Fatalf("the engine ran: %v", d.calls)
	}
}

func TestDeployedCheckFailsClosedAndPassesUnchanged(t *testing.T) {
	d := &deployedEngine{readErr: errors.New("backend unreachable")}
	env := deployedEnv(t, d)
	if _, err := Up(context.Background(), env, Options{Cells: []string{"cell-a"}}); err == nil || !strings.Contains(err.Error(), "backend unreachable") {
		t.Fatalf("an unreadable deployed stack must stop the run: %v", err)
	}
	d.readErr = nil
	a := env.Fleet.Cell("cell-a")
	d.outputs = map[string]map[string]any{"cell-a": {"index": float64(a.Index), "cidr": a.CIDR(), "region": a.Region}}
	rep, err := Up(context.Background(), env, Options{Cells: []string{"cell-a"}})
	if err != nil || names(rep.Result.Stacks) != "cell-a=succeeded" {
		t.Fatalf("an unchanged deployed cell runs: %v %+v", err, rep)
	}
}

// roleEngine is a deployedEngine that knows the role each deployed stack
// was updated through.
type roleEngine struct {
	deployedEngine
	roles map[string]string
}

func (r *roleEngine) DeployedRole(_ context.Context, stack string) (string, bool, error) {
	role, ok := r.roles[stack]
	return role, ok, nil
}

// Issue 38 item 7: where a deployed cell lives is immutable like its
// index and region: a change of account — or of role, unless the new
// role is provably in the cell's account — is refused before anything
// runs, naming the supported move.
func TestMovingADeployedCellToAnotherAccountIsRefused(t *testing.T) {
	fl := fleettest.Load(t, fleettest.Demo(t, "two-accounts"))
	c := fl.Cell("cell-c") // cells:account 222233334444, through its deploy role
	home := func(c *fleet.Cell) map[string]any {
		return map[string]any{"index": float64(c.Index), "cidr": c.CIDR(), "region": c.Region,
			"taskRoleArn": "arn:aws:iam::123456789012:role/" + c.ID + "-task-role", "queueArn": "arn:aws:sqs:" + c.Region + ":123456789012:" + c.ID}
	}
	err := compareDeployed(c, home(c))
	for _, want := range []string{"cell-c: " + c.File, "in account 222233334444, but it is deployed in account 123456789012", "add a new cell in that account", "migrate cell-c's tenants"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("an account change: want %q in %v", want, err)
		}
	}
	same := home(c)
	same["taskRoleArn"] = "arn:aws:iam::222233334444:role/cell-c-task-role"
	if err := compareDeployed(c, same); err != nil {
		t.Errorf("the cell's own account: %v", err)
	}

	// The role: renamed within the account, allowed; dropped with no
	// account declared, refused (nothing proves where the cell lands).
	if err := compareRole(c, "222233334444", "arn:aws:iam::222233334444:role/old-deploy"); err != nil {
		t.Errorf("a role renamed within the cell's account: %v", err)
	}
	a := fl.Cell("cell-a") // no account settings: the caller's credentials
	if err := compareRole(a, "123456789012", ""); err != nil {
		t.Errorf("an unchanged cell: %v", err)
	}
	if err := compareRole(a, "222233334444", "arn:aws:iam::222233334444:role/cellctl-deploy"); err == nil || !strings.Contains(err.Error(), "nothing proves the cell stays in account 222233334444") {
		t.Errorf("a role dropped with no account declared: %v", err)
	}

	// Through the apply path: refused before any run.
	d := &roleEngine{roles: map[string]string{"cell-a": "arn:aws:iam::222233334444:role/cellctl-deploy", "cell-c": "arn:aws:iam::222233334444:role/cellctl-deploy"}}
	env, _ := envFor(fl, &d.fakeEngine)
	env.Engine = func() (Engine, error) { return d, nil }
	d.outputs = map[string]map[string]any{"cell-a": home(a), "cell-c": home(c)}
	d.outputs["cell-a"]["taskRoleArn"] = "arn:aws:iam::222233334444:role/cell-a-task-role"
	delete(d.outputs["cell-a"], "queueArn")
	_, err = Up(context.Background(), env, Options{Cells: []string{"cell-a", "cell-c"}})
	if err == nil || !strings.Contains(err.Error(), "refused, nothing was run") || !strings.Contains(err.Error(), "cell-a: ") || !strings.Contains(err.Error(), "cell-c: ") {
		t.Fatalf("up of moved cells: %v", err)
	}
	if len(d.calls) != 0 {
		t.Fatalf("the engine ran: %v", d.calls)
	}
}
