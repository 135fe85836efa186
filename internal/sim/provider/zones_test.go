package provider_test

import (
	"testing"

	"github.com/cellctl/cellctl/internal/sim/simtest"
)

// TestRecordOutsideItsZoneIsRefused: Route 53 accepts only records under a
// zone's own domain; the simulator refuses the rest with AWS's error once
// it knows the zone's name (sim zone add).
func TestRecordOutsideItsZoneIsRefused(t *testing.T) {
	h := simtest.New(t, "router", "us-east-1")
	if err := h.Cloud.AddZone("Z0123456789ABCDEFGHIJ", "Cells.Example.com."); err != nil {
		t.Fatal(err)
	}
	_, err := h.TryCreate(tRecord, "viewer", simtest.PM("zoneId", "Z0123456789ABCDEFGHIJ", "name", "app.example.com", "type", "CNAME", "ttl", 300, "records", []any{"d.cloudfront.net"}))
	wantAWSError(t, err, "ChangeResourceRecordSets", "InvalidChangeBatch", "RRSet with DNS name app.example.com. is not permitted in zone cells.example.com.")
	// ACM's validation CNAME for *.app.example.com is just as foreign.
	_, err = h.TryCreate(tRecord, "validation", simtest.PM("zoneId", "Z0123456789ABCDEFGHIJ", "name", "_abc.app.example.com.", "type", "CNAME", "ttl", 300, "records", []any{"_x.acm-validations.aws."}))
	wantAWSError(t, err, "ChangeResourceRecordSets", "InvalidChangeBatch", "not permitted in zone cells.example.com.")
	// A name under the zone is fine, and so is the zone's own name.
	h.Create(tRecord, "cell", simtest.PM("zoneId", "Z0123456789ABCDEFGHIJ", "name", "cell-a.cells.example.com", "type", "CNAME", "ttl", 300, "records", []any{"alb.example"}))
	zs, err := h.Cloud.Zones()
	if err != nil || len(zs) != 1 || zs[0].Name != "cells.example.com" {
		t.Fatalf("zones %v %v", zs, err)
	}
	if err := h.Cloud.AddZone("Z1", "com"); err == nil {
		t.Fatal("a zone for a top-level domain was accepted")
	}
}

// TestRetiredAuroraMinorIsRefusedOnCreateOnly: once AWS stops offering a
// minor, a new cluster at it fails with AWS's error; a cluster already
// running it is untouched.
func TestRetiredAuroraMinorIsRefusedOnCreateOnly(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	args := func(id string) map[string]any {
		return map[string]any{"clusterIdentifier": id, "engine": "aurora-postgresql", "engineVersion": "15.8", "masterUsername": "cellctl", "manageMasterUserPassword": true}
	}
	h.Create(tCluster, "old", simtest.PM(flat(args("cell-a-old"))...))
	if err := h.Cloud.RetireEngineVersion("aurora-postgresql", "15.8", false); err != nil {
		t.Fatal(err)
	}
	_, err := h.TryCreate(tCluster, "new", simtest.PM(flat(args("cell-a-new"))...))
	wantAWSError(t, err, "CreateDBCluster", "InvalidParameterCombination", "Cannot find version 15.8 for aurora-postgresql")
	if vs, _ := h.Cloud.RetiredEngineVersions(); len(vs) != 1 || vs[0] != "aurora-postgresql 15.8" {
		t.Fatalf("retired: %v", vs)
	}
	if err := h.Cloud.RetireEngineVersion("aurora-postgresql", "15.8", true); err != nil {
		t.Fatal(err)
	}
	h.Create(tCluster, "new", simtest.PM(flat(args("cell-a-new"))...))
}

func flat(m map[string]any) []any {
	var out []any
	for k, v := range m {
		out = append(out, k, v)
	}
	return out
}
