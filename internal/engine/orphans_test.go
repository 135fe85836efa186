package engine

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/cloud"
)

// TestPlaceOrphan: an orphan goes under the one parent its URN's type
// chain names and the one provider its siblings use; ambiguity refuses.
func TestPlaceOrphan(t *testing.T) {
	const (
		stack = "urn:pulumi:cell-a::cells::pulumi:pulumi:Stack::cells-cell-a"
		cell  = "urn:pulumi:cell-a::cells::cellctl:index:Cell::cell-a"
		prov  = "urn:pulumi:cell-a::cells::pulumi:providers:aws::default_6_83_4::0b1c"
		vpc   = "urn:pulumi:cell-a::cells::cellctl:index:Cell$aws:ec2/vpc:Vpc::cell-a-vpc"
	)
	entries := []stateEntry{
		{URN: stack, Type: "pulumi:pulumi:Stack"},
		{URN: prov, Type: "pulumi:providers:aws", Custom: true},
		{URN: cell, Type: "cellctl:index:Cell", Parent: stack},
		{URN: "urn:pulumi:cell-a::cells::cellctl:index:Cell$aws:ec2/internetGateway:InternetGateway::cell-a-igw", Type: "aws:ec2/internetGateway:InternetGateway", Custom: true, Parent: cell, Provider: prov},
	}
	o := orphan{CloudResource: cloud.CloudResource{URN: vpc, Type: "aws:ec2/vpc:Vpc", ID: "vpc-1"}}
	if why := placeOrphan(&o, entries); why != "" || o.parent != cell || o.provider != prov {
		t.Fatalf("placed %+v: %s", o, why)
	}
	// Two components of the parent's type: which one is not known.
	two := append(entries, stateEntry{URN: "urn:pulumi:cell-a::cells::cellctl:index:Cell::cell-b", Type: "cellctl:index:Cell", Parent: stack})
	o = orphan{CloudResource: cloud.CloudResource{URN: vpc, Type: "aws:ec2/vpc:Vpc", ID: "vpc-1"}}
	if why := placeOrphan(&o, two); !strings.Contains(why, "2 resources of the state could be its parent") {
		t.Errorf("ambiguous parent: %q", why)
	}
	// Siblings on two providers (the router's default and us-east-1).
	east := append(entries, stateEntry{URN: "urn:pulumi:cell-a::cells::cellctl:index:Cell$aws:lambda/function:Function::fn", Type: "aws:lambda/function:Function", Custom: true, Parent: cell, Provider: prov + "-east"})
	o = orphan{CloudResource: cloud.CloudResource{URN: vpc, Type: "aws:ec2/vpc:Vpc", ID: "vpc-1"}}
	if why := placeOrphan(&o, east); !strings.Contains(why, "2 aws providers") {
		t.Errorf("ambiguous provider: %q", why)
	}
	err := &OrphanError{Stack: "router", Orphans: []string{"aws:ec2/vpc:Vpc cell-a-vpc (vpc-1): why"}}
	if !strings.Contains(err.Error(), "pulumi import --stack router") || !strings.Contains(err.Error(), "nothing was run") {
		t.Errorf("orphan error: %v", err)
	}
}
