package health_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	readers "github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/sim/awsapi"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// BenchmarkSimAPIPoll16Cells is one gate poll over a 16-cell fleet on the
// simulated cloud: for every cell, its three alarms (DescribeAlarms) and
// its metrics over a 30-minute window (GetMetricData), through the real
// aws-sdk-go-v2 client and the loopback endpoint. Every call advances the
// health model under the cloud's lock, as in a rehearsal.
func BenchmarkSimAPIPoll16Cells(b *testing.B) {
	clk := simtest.NewClock()
	dir := b.TempDir()
	pre, _ := store.Open(dir)
	if err := pre.SetQuota("us-east-1", "vpc/L-F678F1CE", 50); err != nil { // VPCs per Region: 5 by default
		b.Fatal(err)
	}
	var cells []readers.Cell
	var names []string
	for i := 0; i < 16; i++ {
		id := fmt.Sprintf("c%02d", i)
		c := simtest.NewSimCell(b, dir, clk, id, "us-east-1", fmt.Sprintf("10.%d.0.0/16", i+1), "app:v1")
		cells = append(cells, readers.Cell{LoadBalancer: c.LBSuffix, TargetGroup: c.TGSuffix})
		names = append(names, "cellctl-"+id+"-5xx-rate", "cellctl-"+id+"-p99-latency", "cellctl-"+id+"-unhealthy-tasks")
	}
	clk.Advance(45 * time.Minute)
	base, _ := store.Open(dir)
	ctx := context.Background()
	endpoint, stop, err := awsapi.Serve(ctx, base.WithClock(clk.Now))
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	cw, _ := readers.NewCloudWatch(ctx, readers.Sim(endpoint, "us-east-1"))
	for b.Loop() {
		for i, cell := range cells {
			got, err := cw.Alarms(ctx, names[3*i:3*i+3])
			if err != nil || len(got) != 3 {
				b.Fatalf("alarms %v %v", got, err)
			}
			r, err := cw.ReadCell(ctx, cell, clk.T.Add(-30*time.Minute), clk.T, time.Minute)
			if err != nil || r.Requests == 0 {
				b.Fatalf("read %+v %v", r, err)
			}
		}
	}
}
