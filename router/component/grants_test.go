package component_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/component"
	"github.com/cellctl/cellctl/router/edge"
)

const typeAccessPoint = "aws:s3/accessPoint:AccessPoint"

// renderGrants renders a router whose n cells all live in other accounts
// than the bucket's, under the AWS model's rules (a policy past S3's
// limits is refused as PutBucketPolicy and PutAccessPointPolicy refuse
// it).
func renderGrants(t *testing.T, n int) (*offline.Recorder, error) {
	t.Helper()
	tableSpec := router.Spec{Version: 1, Buckets: 4 * n}
	var origins []component.Origin
	var grants []component.CellGrant
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("cell-%03d", i)
		tableSpec.Cells = append(tableSpec.Cells, router.CellSpec{ID: id, State: router.CellActive, Weight: 1, Buckets: router.Ranges{{First: 4 * i, Last: 4*i + 3}}})
		origins = append(origins, component.Origin{Cell: id, DNSName: pulumi.String(albDNS(id))})
		grants = append(grants, component.CellGrant{Cell: id, Prefix: cellmodule.StoragePrefix(id),
			TaskRoleArn: pulumi.String(fmt.Sprintf("arn:aws:iam::%012d:role/%s-task-role-0123abc", 200000000000+i, id))})
	}
	table, err := router.New(tableSpec)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := offline.Run(offline.Options{Project: "cells", Stack: fleet.RouterStack},
		awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: "123456789012", Region: "us-east-1"}),
		func(ctx *pulumi.Context) error {
			_, err := component.NewRouter(ctx, fleet.RouterStack, &component.RouterArgs{
				BucketName:         "fleet-bucket-256",
				CellGrants:         grants,
				Origins:            origins,
				TableVersion:       table.Version(),
				Code:               func(dns map[string]string) (map[string]string, error) { return edge.Package(table, dns, "") },
				OriginVerifySecret: pulumi.ToSecret(pulumi.String(testSecret)).(pulumi.StringOutput),
			})
			return err
		})
	return rec, err
}

// TestCrossAccountGrantsFitS3LimitsAt256Cells: the fleet allows 256 cells,
// each in its own account. The bucket policy does not grow with them (one
// statement delegates to the bucket account's access points) and each
// cell's grant is its own access point's policy, each far below S3's
// 20 KB; the AWS model refuses a policy past either limit, so the render
// itself is the proof.
func TestCrossAccountGrantsFitS3LimitsAt256Cells(t *testing.T) {
	rec, err := renderGrants(t, 256)
	if err != nil {
		t.Fatalf("a 256-cell cross-account router does not render: %v", err)
	}
	r := &routerRun{rec: rec}
	pol := str(in(r.one(t, typeBucketPolicy), "policy"))
	one, err := renderGrants(t, 1)
	if err != nil {
		t.Fatal(err)
	}
	if small := str(in((&routerRun{rec: one}).one(t, typeBucketPolicy), "policy")); len(small) != len(pol) {
		t.Errorf("the bucket policy grows with the cells: %d bytes for one, %d for 256", len(small), len(pol))
	}
	if size := awsmodel.S3PolicySize(pol); size > awsmodel.S3PolicyMaxBytes/4 {
		t.Errorf("bucket policy is %d bytes, want well under S3's %d", size, awsmodel.S3PolicyMaxBytes)
	}
	aps := rec.ByType(typeAccessPoint)
	if len(aps) != 256 {
		t.Fatalf("%d access points, want one per cross-account cell (256)", len(aps))
	}
	largest := 0
	byName := map[string]*offline.Resource{}
	for _, ap := range aps {
		byName[str(in(ap, "name"))] = ap
	}
	for i := 0; i < 256; i++ {
		id := fmt.Sprintf("cell-%03d", i)
		name := spec.AccessPointName("fleet-bucket-256", id)
		ap := byName[name]
		if ap == nil {
			t.Errorf("no access point %s for %s", name, id)
			continue
		}
		doc := str(in(ap, "policy"))
		largest = max(largest, awsmodel.S3PolicySize(doc))
		role := fmt.Sprintf("arn:aws:iam::%012d:role/%s-task-role-0123abc", 200000000000+i, id)
		arn := str(out(ap, "arn"))
		for _, st := range parsePolicy(t, name+"'s policy", doc) {
			if ps := st.Principal.AWS(); !slices.Equal(ps, []string{role}) {
				t.Errorf("%s's policy statement %q names %v, want only %s", name, st.Sid, ps, role)
			}
			for _, res := range st.Resource {
				if res != arn+"/object/cells/"+id+"/*" && res != arn {
					t.Errorf("%s's policy statement %q reaches %s, outside %s's prefix", name, st.Sid, res, id)
				}
			}
		}
	}
	t.Logf("256 cross-account cells: bucket policy %d bytes, largest access point policy %d bytes (limit %d each)",
		awsmodel.S3PolicySize(pol), largest, awsmodel.S3PolicyMaxBytes)
}
