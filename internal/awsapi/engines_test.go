package awsapi

import (
	"net/url"
	"testing"
)

const emptyEngineVersions = `<DescribeDBEngineVersionsResponse xmlns="http://rds.amazonaws.com/doc/2014-10-31/"><DescribeDBEngineVersionsResult><DBEngineVersions/></DescribeDBEngineVersionsResult><ResponseMetadata><RequestId>5ec1a7ed-6f01-4a1e-8b3c-0d5e0e0e0002</RequestId></ResponseMetadata></DescribeDBEngineVersionsResponse>`

// TestPinnedMinorOfferedOnlyWhileListed: an exact minor is offered while
// DescribeDBEngineVersions lists it, and a retired one is absent (an
// empty answer), after a throttled first try.
func TestPinnedMinorOfferedOnlyWhileListed(t *testing.T) {
	ask := func(version string) func(url.Values) {
		return func(f url.Values) {
			if f.Get("Engine") != "aurora-postgresql" || f.Get("EngineVersion") != version || f.Get("DBParameterGroupFamily") != "" {
				t.Errorf("asked %v", f)
			}
		}
	}
	inv, _ := startQuery(t,
		queryReply{service: "rds", action: "DescribeDBEngineVersions", status: 400, body: queryThrottle},
		queryReply{service: "rds", action: "DescribeDBEngineVersions", body: doc(t, "rds/describe-db-engine-versions.xml"), check: ask("15.10")},
		queryReply{service: "rds", action: "DescribeDBEngineVersions", body: emptyEngineVersions, check: ask("15.8")},
	)
	if ok, err := inv.EngineVersionOffered(ctx, "aurora-postgresql", "15.10"); err != nil || !ok {
		t.Fatalf("15.10: %v %v, want offered", ok, err)
	}
	if ok, err := inv.EngineVersionOffered(ctx, "aurora-postgresql", "15.8"); err != nil || ok {
		t.Fatalf("15.8: %v %v, want not offered", ok, err)
	}
}

// TestPinnedMajorAsksForItsFamily: a major pin is offered while any minor
// of its parameter-group family is.
func TestPinnedMajorAsksForItsFamily(t *testing.T) {
	inv, _ := startQuery(t,
		queryReply{service: "rds", action: "DescribeDBEngineVersions", body: doc(t, "rds/describe-db-engine-versions.xml"), check: func(f url.Values) {
			if f.Get("DBParameterGroupFamily") != "aurora-postgresql15" || f.Get("EngineVersion") != "" {
				t.Errorf("asked %v", f)
			}
		}},
	)
	if ok, err := inv.EngineVersionOffered(ctx, "aurora-postgresql", "15"); err != nil || !ok {
		t.Fatalf("15: %v %v", ok, err)
	}
}
