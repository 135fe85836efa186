package cloud

import (
	"context"
	"slices"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/sim"
	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// The keys cellctl signs with against the simulator are the ones it
// answers as the home account (any other key is refused).
func TestTheSimKeysAreTheHomeAccounts(t *testing.T) {
	for _, key := range []string{SimAccessKeyID, awsapi.Sim("http://127.0.0.1:1", "us-east-1").AccessKeyID} {
		if !slices.Contains(store.HomeAccessKeyIDs, key) {
			t.Errorf("%s is not one of the simulator's home keys %v", key, store.HomeAccessKeyIDs)
		}
	}
}

// A cell whose provider assumed a role lives in the second account; the
// engine's lookups of a stack's live resources find it there.
func TestSimLookupsSearchEveryAccount(t *testing.T) {
	fleet := t.TempDir()
	dir := SimDir(fleet)
	if err := sim.AddRole(dir, "222233334444", "cellctl-deploy", nil, ""); err != nil {
		t.Fatal(err)
	}
	h := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a", Project: "cells"}, "")
	if _, err := h.P.Configure(h.Ctx, plugin.ConfigureRequest{Inputs: resource.PropertyMap{
		"region":     resource.NewStringProperty("us-east-1"),
		"assumeRole": resource.NewObjectProperty(simtest.PM("roleArn", "arn:aws:iam::222233334444:role/cellctl-deploy")),
	}}); err != nil {
		t.Fatal(err)
	}
	q := h.Create(simtest.TQueue, "cell-a-jobs", simtest.PM())
	b, err := New(Sim, fleet, "cells")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	live, err := b.StackResources(context.Background(), "cell-a")
	if err != nil || len(live) != 1 || live[0].ID != q.ID {
		t.Fatalf("StackResources = %+v, %v", live, err)
	}
	found, err := b.ResolvePending(context.Background(), "cell-a", []string{string(h.URN(simtest.TQueue, "cell-a-jobs"))})
	if err != nil || found[string(h.URN(simtest.TQueue, "cell-a-jobs"))] != q.ID {
		t.Fatalf("ResolvePending = %v, %v", found, err)
	}
}
