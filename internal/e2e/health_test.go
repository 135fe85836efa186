package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/sim"
)

// A cell deployed from the real cell template, through the real engine,
// serves metrics the product's CloudWatch reader finds on the simulator's
// AWS endpoint by the stack's own ALB and target group: the health model
// and the template agree on names, dimensions and the image.
func TestSimHealthThroughTheAWSEndpoint(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	mustRun(t, dir, "up", "cell-a")
	mustRun(t, dir, "sim", "health", "set", "--image", "registry.example.com/shop/api:1.4.2", "--error-rate", "50%", "--p99", "2s")

	simDir := filepath.Join(dir, ".cellctl", "sim")
	cloud, err := sim.Open(simDir)
	if err != nil {
		t.Fatal(err)
	}
	lbs, _ := cloud.Resources(sim.Filter{Stack: "cell-a", Type: "lb/loadBalancer"})
	tgs, _ := cloud.Resources(sim.Filter{Stack: "cell-a", Type: "lb/targetGroup"})
	if len(lbs) != 1 || len(tgs) != 1 {
		t.Fatalf("cell-a load balancers %d, target groups %d", len(lbs), len(tgs))
	}
	cell := awsapi.Cell{LoadBalancer: lbs[0].Outputs["arnSuffix"].(string), TargetGroup: tgs[0].Outputs["arnSuffix"].(string)}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	endpoint, stop, err := sim.StartAPI(ctx, simDir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cw, err := awsapi.NewCloudWatch(ctx, awsapi.Sim(endpoint, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	// Only the current minute: the simulator computes it at read time from
	// the profile set above, while the minute before may have been
	// completed (and kept) on the good image during the up.
	start := time.Now().Truncate(time.Minute)
	r, err := cw.ReadCell(ctx, cell, start, start.Add(time.Minute), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests == 0 || r.ErrorRate != 0.5 || r.P99 != 2*time.Second || !r.HasHealthy || r.HealthyMin < 1 {
		t.Errorf("cell-a reading on the bad image = %+v", r)
	}
	names := []string{"cellctl-cells-cell-a-5xx-rate", "cellctl-cells-cell-a-p99-latency", "cellctl-cells-cell-a-unhealthy-tasks"}
	alarms, err := cw.Alarms(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	if m := awsapi.MissingAlarms(names, alarms); len(m) > 0 {
		t.Fatalf("alarms the template creates are missing on the endpoint: %v (got %v)", m, alarms)
	}
	if a := alarms["cellctl-cells-cell-a-unhealthy-tasks"]; a.State != "OK" {
		t.Errorf("every task is healthy, yet %+v", a)
	}
}
