package health

import (
	"context"
	"github.com/cellctl/cellctl/internal/fleet"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/cloud"
)

// TestWatchThroughTheSimulatorsEndpoint runs --watch's loop with readers
// built as the command builds them (from the cloud bundle, under each
// update's own context): every update still reaches the endpoint. The
// first update's context once stopped the simulator's API, so the second
// read every cell as unreadable ("connection refused").
func TestWatchThroughTheSimulatorsEndpoint(t *testing.T) {
	b, err := cloud.New(cloud.Sim, t.TempDir(), "cells")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	reader := func(ctx context.Context, access fleet.Access) (Reader, error) {
		region := access.Region
		a, err := b.AWS(ctx)
		if err != nil {
			return nil, err
		}
		return awsapi.NewCloudWatch(ctx, awsapi.Target{Region: region, Endpoint: a.Endpoint, AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey, MaxAttempts: 1})
	}
	ts := []Target{target("cell-a", 0)}
	var reports []Report
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tick := func(time.Duration) <-chan time.Time {
		if len(reports) >= 3 {
			// Stop: no further tick, so no update reads with the cancelled
			// context (Watch's select would otherwise pick either).
			cancel()
			return nil
		}
		ch := make(chan time.Time, 1)
		ch <- time.Now()
		return ch
	}
	Watch(ctx, time.Second, func(ctx context.Context) Report {
		r := Read(ctx, ts, Options{Now: time.Now(), Since: 15 * time.Minute, Reader: reader})
		reports = append(reports, r)
		return r
	}, func(Report) {}, tick)
	if len(reports) < 3 {
		t.Fatalf("%d updates", len(reports))
	}
	for i, r := range reports {
		f := strings.Join(r.Cells[0].Findings, "|")
		if strings.Contains(f, "connection refused") || strings.Contains(f, "cannot read CloudWatch") || strings.Contains(f, "metrics unreadable") {
			t.Fatalf("update %d could not reach the simulator's API: %s", i+1, f)
		}
	}
}
