package plan

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
)

// The fleet dashboard lists each cell's alarms by ARN; an alarm lives in
// its cell's account, so a cell in another account is named by that
// account's id, not the router's.
func TestDashboardAlarmsNameTheCellsAccount(t *testing.T) {
	fl := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	rep, err := Render(context.Background(), fl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	body := inputOf(t, stackNamed(rep, fleet.RouterStack), "aws:cloudwatch/dashboard:Dashboard", "dashboardBody")
	var doc struct {
		Widgets []struct {
			Type       string
			Properties struct{ Alarms []string }
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, w := range doc.Widgets {
		for _, a := range w.Properties.Alarms {
			parts := strings.SplitN(a, ":", 7) // arn:aws:cloudwatch:<region>:<account>:alarm:<name>
			if len(parts) != 7 {
				t.Fatalf("alarm ARN %q", a)
			}
			for _, id := range fl.CellIDs() {
				if strings.Contains(parts[6], "-"+id+"-") {
					seen[id] = parts[4]
					if c := fl.Cell(id); parts[3] != c.Region {
						t.Errorf("alarm %s is in %s, want its cell's region %s", a, parts[3], c.Region)
					}
				}
			}
		}
	}
	want := map[string]string{
		"cell-a": renderAccount(""), "cell-b": renderAccount(""),
		"cell-c": fleettest.SecondAccount, "cell-d": fleettest.SecondAccount,
	}
	for id, account := range want {
		if seen[id] != account {
			t.Errorf("%s's alarms are named in account %q, want %q (its own)", id, seen[id], account)
		}
	}
}
