package plan

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/props"
)

// accountPerCellFleet is a fleet of n cells, each in its own account
// (the README's pitch), with the router (and the fleet bucket) in the
// home account 123456789012.
func accountPerCellFleet(t *testing.T, n int) *fleet.Fleet {
	return fleettest.Generate(t, fleettest.Generated{Cells: n, OneWave: true,
		RouterConfig: "  cells:account: \"123456789012\"\n",
		CellConfig: func(i int, _ string) string {
			account := fmt.Sprintf("%012d", 300000000000+i)
			return fmt.Sprintf("  cells:account: %q\n  aws:assumeRole:\n    roleArn: arn:aws:iam::%s:role/cellctl-deploy\n", account, account)
		}})
}

// TestAnAccountPerCellFleetOf256CellsRendersClean: the fleet allows 256
// cells and the README pitches an account per cell. Such a fleet renders
// (the mocks refuse a bucket or access point policy past S3's 20 KB, as
// PutBucketPolicy and PutAccessPointPolicy do) with no isolation finding,
// no AWS rule violation, every required path allowed — each cell's
// through its own access point — and every forbidden path denied.
func TestAnAccountPerCellFleetOf256CellsRendersClean(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 257 stacks")
	}
	const n = 256
	f := accountPerCellFleet(t, n)
	rep, err := Render(context.Background(), f, Options{Now: testNow})
	if err != nil {
		t.Fatalf("a %d-cell fleet with an account per cell does not render: %v", n, err)
	}
	if !rep.Isolation.OK {
		t.Fatalf("isolation audit: %d violations, first %v", len(rep.Isolation.Violations), rep.Isolation.Violations[0])
	}
	if vs := rep.Rules(); len(vs) > 0 {
		var lines []string
		for _, v := range vs {
			lines = append(lines, v.String())
		}
		t.Fatalf("%d AWS rule violations:\n  %s", len(vs), strings.Join(lines, "\n  "))
	}
	start := time.Now()
	paths, _, err := rep.Paths(f, sharedOf(t, f))
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	logFindings(t, paths)
	allowed, required, denied, forbidden := paths.Counts()
	through := 0
	for _, x := range paths.Required {
		if strings.Contains(x.ARN, ":accesspoint/") {
			through++
		}
	}
	if through != 4*n {
		t.Errorf("%d required paths go through access points, want 4 per cell (%d)", through, 4*n)
	}
	// The app of a cross-account cell is told its access point (the
	// router's account is declared): the SDKs take its ARN as a bucket.
	cell := stackNamed(rep, "cell-007")
	wantAP := "arn:aws:s3:us-east-1:123456789012:accesspoint/" + spec.AccessPointName(f.Router.FleetBucket, "cell-007")
	if env := inputOf(t, cell, "aws:ecs/taskDefinition:TaskDefinition", "containerDefinitions"); !strings.Contains(env, `"name":"BUCKET_ACCESS_POINT","value":"`+wantAP+`"`) {
		t.Errorf("cell-007's task is not given its access point %s: %s", wantAP, env)
	}
	router := stackNamed(rep, fleet.RouterStack)
	aps, biggest := 0, 0
	for _, r := range router.recorded {
		if r.Type == "aws:s3/accessPoint:AccessPoint" {
			aps++
			p, _ := props.Plain(r.Inputs)["policy"].(string)
			biggest = max(biggest, len(p))
		}
	}
	bucketPolicy := inputOf(t, router, "aws:s3/bucketPolicy:BucketPolicy", "policy")
	if aps != n {
		t.Errorf("%d access points, want %d", aps, n)
	}
	t.Logf("%d cells, an account each: 0 violations; paths %d/%d allowed, %d/%d denied, %d of them across accounts (%v, not asserted); bucket policy %d bytes, %d access points (largest policy %d bytes)",
		n, allowed, required, denied, forbidden, paths.Forbidden.CrossAccount, took.Round(time.Millisecond), len(bucketPolicy), aps, biggest)
}
