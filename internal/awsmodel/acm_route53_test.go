package awsmodel

import (
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// zoneCases: a record outside its hosted zone's domain is Route 53's
// InvalidChangeBatch, once the cloud knows the zone's name.
func zoneCases() []ruleCase {
	knowZone := func(t *testing.T, m *Mock) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.live[HostedZoneLookupKey("Z0123456789ABCDEFGHIJ")] = mockResource{typ: "route53:HostedZone",
			outputs: resource.PropertyMap{"name": pv("cells.example.com")}}
	}
	rec := func(name string) resource.PropertyMap {
		return resource.PropertyMap{"zoneId": pv("/hostedzone/Z0123456789ABCDEFGHIJ"), "name": pv(name), "type": pv("CNAME"), "ttl": pv(300), "records": pv([]string{"x.example.net"})}
	}
	return []ruleCase{
		{rule: "route53.record-in-zone", typ: tRecord, setup: knowZone, bad: rec("app.example.com"), ok: rec("cell-a.cells.example.com."),
			contains: "RRSet with DNS name app.example.com. is not permitted in zone cells.example.com."},
		{rule: "route53.record-in-zone", typ: tRecord, setup: knowZone, bad: rec("_abc.notcells.example.com"), ok: rec("CELLS.example.com"),
			contains: "not permitted in zone cells.example.com."},
	}
}

func TestNameInZone(t *testing.T) {
	for _, c := range []struct {
		name, zone string
		want       bool
	}{
		{"cell-a.cells.example.com", "cells.example.com", true},
		{"cells.example.com.", "Cells.Example.com", true},
		{"*.app.example.com", "app.example.com", true},
		{"app.example.com", "cells.example.com", false},
		{"xcells.example.com", "cells.example.com", false},
		{"app.example.com", "", false},
	} {
		if got := NameInZone(c.name, c.zone); got != c.want {
			t.Errorf("NameInZone(%q, %q) = %v", c.name, c.zone, got)
		}
	}
}
