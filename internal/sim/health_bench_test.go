package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/awsapi"
)

// BenchmarkSimAPIPoll16Cells is one gate poll over a 16-cell fleet on the
// simulated cloud: for every cell, its three alarms (DescribeAlarms) and
// its metrics over a 30-minute window (GetMetricData), through the real
// aws-sdk-go-v2 client and the loopback endpoint. Every call advances the
// health model under the cloud's lock, as in a rehearsal.
func BenchmarkSimAPIPoll16Cells(b *testing.B) {
	clk := newClock()
	dir := b.TempDir()
	pre, _ := Open(dir)
	if err := pre.SetQuota("us-east-1", "vpc/L-F678F1CE", 50); err != nil { // VPCs per Region: 5 by default
		b.Fatal(err)
	}
	var cells []awsapi.Cell
	var names []string
	for i := 0; i < 16; i++ {
		id := fmt.Sprintf("c%02d", i)
		c := newSimCell(b, dir, clk, id, "us-east-1", fmt.Sprintf("10.%d.0.0/16", i+1), "app:v1")
		cells = append(cells, awsapi.Cell{LoadBalancer: c.lbSuffix, TargetGroup: c.tgSuffix})
		names = append(names, "cellctl-"+id+"-5xx-rate", "cellctl-"+id+"-p99-latency", "cellctl-"+id+"-unhealthy-tasks")
	}
	clk.advance(45 * time.Minute)
	base, _ := Open(dir)
	ctx := context.Background()
	endpoint, stop, err := ServeAPI(ctx, base.WithClock(clk.now))
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	cw, _ := awsapi.NewCloudWatch(ctx, awsapi.Sim(endpoint, "us-east-1"))
	for b.Loop() {
		for i, cell := range cells {
			got, err := cw.Alarms(ctx, names[3*i:3*i+3])
			if err != nil || len(got) != 3 {
				b.Fatalf("alarms %v %v", got, err)
			}
			r, err := cw.ReadCell(ctx, cell, clk.t.Add(-30*time.Minute), clk.t, time.Minute)
			if err != nil || r.Requests == 0 {
				b.Fatalf("read %+v %v", r, err)
			}
		}
	}
}
