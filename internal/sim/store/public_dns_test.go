package store

import (
	"testing"

	"github.com/cellctl/cellctl/internal/awsmodel"
)

// DNS is public: a certificate of the second account validates by a
// record in the home account's zone (a cell writing its records through
// cells:dnsAssumeRole), as ACM resolves the name wherever it is hosted.
func TestARecordInAnotherAccountsZoneIsFound(t *testing.T) {
	home, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := home.AddRole("222233334444", "cellctl-deploy", nil, ""); err != nil {
		t.Fatal(err)
	}
	second, err := home.Account("222233334444")
	if err != nil {
		t.Fatal(err)
	}
	key := awsmodel.RecordLookupKey("_abc.cell-c.cells.example.com.", "CNAME")
	lookup := func(c *Cloud) (found bool) {
		if err := c.Update(func(st *State, _ *Control) error {
			_, _, found = c.NewView(st).Lookup(key)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return found
	}
	if lookup(second) {
		t.Fatal("found a record nobody wrote")
	}
	if err := home.Update(func(st *State, _ *Control) error {
		r := &Record{Project: "shop", Stack: "cell-c", Type: "aws:route53/record:Record", Name: "cell-c-cert-validation",
			ID: "Z0123456789ABCDEFGHIJ__abc.cell-c.cells.example.com_CNAME", Region: "us-east-1",
			Outputs: map[string]any{"fqdn": "_abc.cell-c.cells.example.com", "type": "CNAME"}}
		st.Resources = append(st.Resources, r)
		st.Touch(r.Key())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !lookup(second) {
		t.Error("the second account's view does not see the home zone's record")
	}
	if !lookup(home) {
		t.Error("the home view does not see its own record")
	}
	// Only records are public: the home account's other resources are not.
	if err := second.Update(func(st *State, _ *Control) error {
		if _, _, ok := second.NewView(st).Lookup("route53-zone:Z0123456789ABCDEFGHIJ"); ok {
			t.Error("the second account sees the home account's zone as its own")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
