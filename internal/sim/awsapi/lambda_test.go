package awsapi

import (
	"context"
	"testing"

	readers "github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/sim/simtest"
)

// The product's Lambda client against the simulator's Lambda API: the
// versions the router's publishes left, the code storage they take, and
// DeleteFunction with a qualifier refusing a version a distribution runs
// as Lambda refuses a replicated function.
func TestTheLambdaAPIListsSizesAndDeletesEdgeVersions(t *testing.T) {
	h := simtest.New(t, "router", "us-east-1")
	role := h.Create(simtest.TRole, "edge-role", simtest.PM("assumeRolePolicy", simtest.AssumeRole))
	fn := h.Create(simtest.TFn, "router-edge", simtest.EdgeFunction(simtest.S(role.Out, "arn"), "v1"))
	for _, table := range []string{"v2", "v3", "v4"} {
		var err error
		if fn, err = h.TryUpdate(fn, simtest.EdgeFunction(simtest.S(role.Out, "arn"), table)); err != nil {
			t.Fatal(err)
		}
	}
	arn := simtest.S(fn.Out, "arn")
	h.Create(simtest.TDistribution, "router-cdn", simtest.DistInputs(arn+":3"))

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	endpoint, stop, err := Serve(ctx, h.Cloud)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	l, err := readers.NewLambda(ctx, readers.Sim(endpoint, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	l.PageSize = 2

	vs, err := l.Versions(ctx, fn.ID)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for i, v := range vs {
		if v.Version != []string{"1", "2", "3", "4"}[i] || v.ARN != arn+":"+v.Version || v.CodeSize <= 0 {
			t.Errorf("version %d = %+v", i, v)
		}
		total += v.CodeSize
	}
	if len(vs) != 4 {
		t.Fatalf("versions %+v", vs)
	}
	cs, err := l.CodeStorage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// $LATEST and the four versions each store their code.
	if cs.UsedBytes != total+vs[3].CodeSize || cs.LimitBytes != int64(awsfacts.LambdaCodeStorage.Default*awsfacts.GiB) || cs.Functions != 1 {
		t.Errorf("code storage %+v, versions total %d", cs, total)
	}

	if err := l.DeleteVersion(ctx, fn.ID, "3"); !readers.IsReplicated(err) {
		t.Errorf("deleting the version a distribution runs: %v, want a replicated-function refusal", err)
	}
	if err := l.DeleteVersion(ctx, arn, "1"); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteVersion(ctx, fn.ID, "1"); !readers.IsNotFound(err) {
		t.Errorf("deleting it again: %v, want ResourceNotFoundException", err)
	}
	if err := l.DeleteVersion(ctx, fn.ID, "$LATEST"); err == nil {
		t.Error("the client must never delete the function itself")
	}
	vs, _ = l.Versions(ctx, fn.ID)
	if len(vs) != 3 || vs[0].Version != "2" {
		t.Errorf("after deleting version 1: %+v", vs)
	}
	after, _ := l.CodeStorage(ctx)
	if after.UsedBytes >= cs.UsedBytes {
		t.Errorf("deleting a version freed nothing: %d → %d", cs.UsedBytes, after.UsedBytes)
	}
	if files, err := h.Cloud.FunctionCodeVersion("router-edge", "3"); err != nil || files["config.json"] == "" {
		t.Errorf("the version the distribution runs must stay readable: %v", err)
	}
}
