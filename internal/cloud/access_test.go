package cloud

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/sim"
)

const (
	secondAccount = fleettest.SecondAccount
	deployRole    = fleettest.DeployRole
)

// twoAccountFleet is the demo fleet with testdata/fleets/two-accounts
// laid over it: cell-c and cell-d live in 222233334444 through the role
// cellctl-deploy. edit, when set, rewrites the copy before it is loaded.
func twoAccountFleet(t *testing.T, edit func(dir string)) (string, *fleet.Fleet) {
	t.Helper()
	dir := fleettest.Demo(t, fleettest.TwoAccounts)
	if edit != nil {
		edit(dir)
	}
	return dir, fleettest.Load(t, dir)
}

// A stack in another account is read as the role its stack file assumes,
// with cellctl's session name when the file names none; a stack in the
// caller's own account signs as the caller.
func TestTargetOfAssumesTheStacksRole(t *testing.T) {
	dir, fl := twoAccountFleet(t, nil)
	b, err := New(Sim, dir, "cells")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	d, err := b.TargetOf(ctx, fl.Cell("cell-d").Access())
	if err != nil {
		t.Fatal(err)
	}
	if d.Role.ARN != deployRole || d.Role.SessionName != DefaultSessionName || d.Region != "us-west-2" {
		t.Errorf("cell-d target = %+v: want role %s, session %q, region us-west-2", d, deployRole, DefaultSessionName)
	}
	a, err := b.TargetOf(ctx, fl.Cell("cell-a").Access())
	if err != nil {
		t.Fatal(err)
	}
	if a.Role.ARN != "" || a.Profile != "" {
		t.Errorf("cell-a lives in the caller's account; target = %+v", a)
	}
}

// Before the role exists in the second account, CheckAccess refuses the
// stacks that need it with STS's AccessDenied through the provider's
// message, and names only them; once the role trusts the caller, it
// passes.
func TestCheckAccessRefusesARoleThatCannotBeAssumed(t *testing.T) {
	dir, fl := twoAccountFleet(t, nil)
	b, err := New(Sim, dir, "cells")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	all := append(fl.CellIDs(), fleet.RouterStack)
	err = b.CheckAccess(ctx, fl, all)
	var ae *AccessError
	if !errors.As(err, &ae) {
		t.Fatalf("CheckAccess = %v, want an *AccessError", err)
	}
	slices.Sort(ae.Stacks)
	if !slices.Equal(ae.Stacks, []string{"cell-c", "cell-d"}) {
		t.Errorf("refused stacks = %v, want cell-c and cell-d", ae.Stacks)
	}
	for _, want := range []string{"IAM Role (" + deployRole + ") cannot be assumed", "AccessDenied", "nothing was created or changed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// The stacks in the caller's account alone need no role.
	if err := b.CheckAccess(ctx, fl, []string{"cell-a", "cell-b", fleet.RouterStack}); err != nil {
		t.Errorf("home-account stacks: %v", err)
	}

	if err := sim.AddRole(SimDir(dir), secondAccount, "cellctl-deploy", nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := b.CheckAccess(ctx, fl, all); err != nil {
		t.Errorf("with the role registered: %v", err)
	}
}

// A stack file that declares an account its credentials do not reach is
// refused before anything runs, naming both accounts.
func TestCheckAccessRefusesTheWrongAccount(t *testing.T) {
	dir, fl := twoAccountFleet(t, func(dir string) {
		fleettest.Edit(t, dir, "stacks/Pulumi.cell-b.yaml", func(s string) string {
			return strings.Replace(s, "config:\n", "config:\n  cells:account: \"999988887777\"\n", 1)
		})
	})
	b, err := New(Sim, dir, "cells")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.CheckAccess(context.Background(), fl, []string{"cell-a", "cell-b"})
	var ae *AccessError
	if !errors.As(err, &ae) || !slices.Equal(ae.Stacks, []string{"cell-b"}) {
		t.Fatalf("CheckAccess = %v, want cell-b refused", err)
	}
	for _, want := range []string{"declared in account 999988887777", "reach account 123456789012"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
