package quota

import (
	"context"
	"errors"
	"fmt"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/sim"
)

// counting counts the HTTP requests the readers make.
type counting struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// simCloud serves an empty simulated cloud on loopback and returns it,
// with region targets whose requests are counted.
func simCloud(tb testing.TB) (*sim.Cloud, func(fleet.Access) awsapi.Target, *counting) {
	tb.Helper()
	c, err := sim.Open(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	// The demo fleet's zones exist before cellctl runs, as on AWS.
	for id, name := range map[string]string{"Z0123456789ABCDEFGHIJ": "cells.example.com", "Z0987654321ZYXWVUTSRQ": "app.example.com"} {
		if err := c.AddZone(id, name); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	endpoint, stop, err := sim.ServeAPI(ctx, c)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	cnt := &counting{next: http.DefaultTransport}
	return c, func(a fleet.Access) awsapi.Target {
		t := awsapi.Sim(endpoint, a.Region)
		t.HTTPClient = &http.Client{Transport: cnt}
		if a.Role.RoleARN != "" {
			t.Role = awsapi.Role{ARN: a.Role.RoleARN, SessionName: "cellctl"}
		}
		return t
	}, cnt
}

func demoFleet(t *testing.T) *fleet.Fleet {
	t.Helper()
	fl, err := fleet.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

func row(t *testing.T, rep *Report, region, code string) Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Region == region && r.Code == code {
			return r
		}
	}
	t.Fatalf("no %s row in %s", code, region)
	return Row{}
}

func TestAddingCellsPastALimitIsCritical(t *testing.T) {
	c, target, _ := simCloud(t)
	if err := c.SetQuota("us-east-1", "ec2/L-0263D0A3", 2); err != nil {
		t.Fatal(err)
	}
	fl := demoFleet(t)
	rep, err := Check(context.Background(), Options{Fleet: fl, Target: target, AddCells: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r := row(t, rep, "us-east-1", "ec2/L-0263D0A3"); r.Status != StatusOK || r.Adding != 2 || *r.Headroom != 2 {
		t.Errorf("2 more single-NAT cells in 2 free addresses: %+v", r)
	}
	rep, err = Check(context.Background(), Options{Fleet: fl, Target: target, AddCells: 3})
	if err != nil {
		t.Fatal(err)
	}
	r := row(t, rep, "us-east-1", "ec2/L-0263D0A3")
	if r.Status != StatusCritical || !strings.Contains(r.Reason, "0 used + 3 for the new cells = 3 > limit 2") {
		t.Errorf("3 more cells in 2 free addresses: %+v", r)
	}
	// cell-d's per-AZ NAT makes us-west-2's costliest cell 3 addresses:
	// 3 more cells need 9 of the default 5.
	if w := row(t, rep, "us-west-2", "ec2/L-0263D0A3"); w.Status != StatusCritical || w.PerCell != 3 || w.Adding != 9 || *w.Limit != 5 {
		t.Errorf("us-west-2 with 3 more per-AZ cells: %+v", w)
	}
	var findings *outcome.FindingsError
	if err := rep.Err(); !errors.As(err, &findings) || !strings.Contains(err.Error(), "request-service-quota-increase") {
		t.Errorf("a critical quota must be a finding that says what to do next: %v", err)
	}
}

func TestAnUnreachableAPIIsUnknownNeverZero(t *testing.T) {
	fl := demoFleet(t)
	target := func(a fleet.Access) awsapi.Target {
		t := awsapi.Sim("http://127.0.0.1:1", a.Region)
		t.MaxAttempts = 1
		return t
	}
	rep, err := Check(context.Background(), Options{Fleet: fl, Target: target})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if r.Status == StatusNoLimit {
			continue
		}
		if r.Status != StatusUnknown || r.Used != nil && r.Limit != nil || r.Reason == "" {
			t.Errorf("%s in %s with nothing readable: %+v, want unknown with the reason", r.Code, r.Region, r)
		}
	}
	var findings *outcome.FindingsError
	if err := rep.Err(); !errors.As(err, &findings) {
		t.Errorf("unreadable quotas that cells consume must fail the audit: %v", err)
	}
}

func TestPreflightRefusesNamingQuotaRegionAndNumbers(t *testing.T) {
	c, target, _ := simCloud(t)
	if err := c.SetQuota("us-west-2", "ec2/L-0263D0A3", 2); err != nil {
		t.Fatal(err)
	}
	fl := demoFleet(t)
	// cell-a (us-east-1) fits; cell-d (per-AZ NAT) needs 3 of 2.
	if _, err := Preflight(context.Background(), Options{Fleet: fl, Target: target, NewCells: []string{"cell-a"}}); err != nil {
		t.Errorf("cell-a fits: %v", err)
	}
	_, err := Preflight(context.Background(), Options{Fleet: fl, Target: target, NewCells: []string{"cell-d"}})
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) {
		t.Fatalf("cell-d needs 3 Elastic IPs of 2: %v", err)
	}
	for _, want := range []string{"refusing to create cell-d", "ec2/L-0263D0A3", "us-west-2", "0 used + 3 for the new cells = 3 > limit 2", "--skip-quota-check"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q must say %q", err, want)
		}
	}
}

// BenchmarkQuotaAPICalls counts the AWS requests of one audit: they
// depend on the quotas and regions, not on how many cells there are.
func BenchmarkQuotaAPICalls(b *testing.B) {
	for _, n := range []int{4, 16, 64} {
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			fl := generatedFleet(b, n)
			_, target, cnt := simCloud(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Check(context.Background(), Options{Fleet: fl, Target: target}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "calls/run")
		})
	}
}

// TestPreflightRefusesARetiredAuroraMinor: up's preflight asks RDS
// (DescribeDBEngineVersions, here the simulator's API) whether the pinned
// minor is still offered, and refuses a retired one before anything is
// created.
func TestPreflightRefusesARetiredAuroraMinor(t *testing.T) {
	c, target, _ := simCloud(t)
	fl := demoFleet(t)
	fl.Cell("cell-a").AuroraEngineVersion = "15.8"
	if _, err := Preflight(context.Background(), Options{Fleet: fl, Target: target, NewCells: []string{"cell-a"}}); err != nil {
		t.Fatalf("15.8 is offered: %v", err)
	}
	if err := c.RetireEngineVersion("aurora-postgresql", "15.8", false); err != nil {
		t.Fatal(err)
	}
	_, err := Preflight(context.Background(), Options{Fleet: fl, Target: target, NewCells: []string{"cell-a"}})
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) {
		t.Fatalf("a retired minor must be refused: %v", err)
	}
	for _, want := range []string{"refusing to create cell-a", "cell-a pins aurora-postgresql 15.8", "us-east-1", "Cannot find version 15.8 for aurora-postgresql", "pin a listed minor or the major (\"15\")"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q must say %q", err, want)
		}
	}
}

func TestAHugeLimitIsHeadroomNeverZero(t *testing.T) {
	c, target, _ := simCloud(t)
	fl := demoFleet(t)
	for _, limit := range []float64{1e20, 1e300, math.MaxFloat64} {
		if err := c.SetQuota("us-east-1", "ec2/L-0263D0A3", limit); err != nil {
			t.Fatal(err)
		}
		rep, err := Check(context.Background(), Options{Fleet: fl, Target: target})
		if err != nil {
			t.Fatal(err)
		}
		r := row(t, rep, "us-east-1", "ec2/L-0263D0A3")
		if r.Status != StatusOK || r.Headroom == nil || *r.Headroom != MaxHeadroom || !strings.Contains(r.Note, "capped") {
			t.Errorf("limit %g: %+v, want ok with the headroom capped at %d (an overflow read 0)", limit, r, MaxHeadroom)
		}
	}
}

func TestAnImpossibleLimitIsUnknown(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1} {
		l := checkLimit("ec2/L-0263D0A3", limitValue{value: v, source: "applied"})
		if l.err == nil || !strings.Contains(l.err.Error(), "not a finite number") {
			t.Errorf("limit %g: %+v, want refused as unreadable", v, l)
		}
	}
	if l := checkLimit("ec2/L-0263D0A3", limitValue{value: 0, source: "applied"}); l.err != nil {
		t.Errorf("a limit of 0 is a real limit: %v", l.err)
	}
	// The simulator holds only what AWS's JSON can carry: NaN was accepted
	// and then every read failed "json: unsupported value: NaN".
	c, _, _ := simCloud(t)
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		if err := c.SetQuota("us-east-1", "ec2/L-0263D0A3", v); err == nil || !strings.Contains(err.Error(), "not a finite number") {
			t.Errorf("sim quota %g: %v, want refused", v, err)
		}
	}
}

// TestPreflightRefusesARecordOutsideItsZone: up reads each zone the new
// stacks write in (GetHostedZone, through the simulator's Route 53 API)
// and refuses, before anything is created, a record Route 53 would refuse
// in it, naming the key, the file, the zone id and name and the record.
// A zone the account does not hold is a refusal too.
func TestPreflightRefusesARecordOutsideItsZone(t *testing.T) {
	c, target, _ := simCloud(t)
	fl := demoFleet(t)
	ctx := context.Background()
	if _, err := Preflight(ctx, Options{Fleet: fl, Target: target, NewCells: []string{"cell-a"}, NewRouter: true}); err != nil {
		t.Fatalf("the demo's zones hold its records: %v", err)
	}
	// The viewer zone renamed to the cells' domain: app.example.com no
	// longer fits in it.
	if err := c.AddZone("Z0987654321ZYXWVUTSRQ", "cells.example.com"); err != nil {
		t.Fatal(err)
	}
	_, err := Preflight(ctx, Options{Fleet: fl, Target: target, NewRouter: true})
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) {
		t.Fatalf("a viewer domain outside its zone must be refused: %v", err)
	}
	for _, want := range []string{"refusing to create router", "stacks/Pulumi.router.yaml:", "cells:viewerHostedZoneId", "Z0987654321ZYXWVUTSRQ is cells.example.com",
		"app.example.com", "InvalidChangeBatch: RRSet with DNS name app.example.com. is not permitted in zone cells.example.com."} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q must say %q", err, want)
		}
	}
	// A cell whose zone is another domain's.
	if err := c.AddZone("Z0123456789ABCDEFGHIJ", "other.example.org"); err != nil {
		t.Fatal(err)
	}
	_, err = Preflight(ctx, Options{Fleet: fl, Target: target, NewCells: []string{"cell-a"}})
	if !errors.As(err, &findings) {
		t.Fatalf("a cell name outside its zone must be refused: %v", err)
	}
	for _, want := range []string{"refusing to create cell-a", "Pulumi.yaml:", "cells:hostedZoneId", "Z0123456789ABCDEFGHIJ is other.example.org", "cell-a.cells.example.com"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q must say %q", err, want)
		}
	}
	// A zone the account does not hold: NoSuchHostedZone, refused.
	fl.Cell("cell-a").HostedZoneID = "Z0000000000000000000"
	_, err = Preflight(ctx, Options{Fleet: fl, Target: target, NewCells: []string{"cell-a"}})
	if !errors.As(err, &findings) || !strings.Contains(err.Error(), "hosted zone Z0000000000000000000 does not exist") || !strings.Contains(err.Error(), "NoSuchHostedZone") {
		t.Fatalf("an unknown zone must be refused: %v", err)
	}
}

// Quotas stop at the account: with cell-c and cell-d in a second account,
// each (account, region) is its own row read with that account's access,
// counting only its own cells — cell-c alone in 222233334444's us-east-1
// has its own headroom, whatever the home account's us-east-1 holds. A
// role that cannot be assumed leaves that account's rows unknown (a
// finding), never the home account's.
func TestQuotasAreReadPerAccountAndRegion(t *testing.T) {
	c, target, _ := simCloud(t)
	fl := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	const eips = "ec2/L-0263D0A3"
	if err := c.SetQuota("us-east-1", eips, 2); err != nil {
		t.Fatal(err)
	}

	rep, err := Check(context.Background(), Options{Fleet: fl, Target: target, AddCells: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The home account is named by its id (STS says whose credentials
	// read it), in the report and its rows: "" named nothing in -o json.
	homeID, err := c.HomeAccount()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Accounts, []string{homeID, fleettest.SecondAccount}) {
		t.Errorf("accounts = %q, want [%s %s]", rep.Accounts, homeID, fleettest.SecondAccount)
	}
	home := accountRow(t, rep, homeID, "us-east-1", eips)
	if home.Cells != 2 || home.Status != StatusOK || *home.Headroom != 2 {
		t.Errorf("home us-east-1 (cell-a, cell-b): %+v", home)
	}
	second := accountRow(t, rep, fleettest.SecondAccount, "us-east-1", eips)
	if second.Status != StatusUnknown || !second.Finding() || !strings.Contains(second.Summary(), "in account 222233334444, us-east-1") {
		t.Errorf("second account before its role exists: %+v", second)
	}

	if _, err := c.AddRole(fleettest.SecondAccount, "cellctl-deploy", nil, ""); err != nil {
		t.Fatal(err)
	}
	other, err := c.Account(fleettest.SecondAccount)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.SetQuota("us-east-1", eips, 7); err != nil {
		t.Fatal(err)
	}
	rep, err = Check(context.Background(), Options{Fleet: fl, Target: target, AddCells: 1})
	if err != nil {
		t.Fatal(err)
	}
	second = accountRow(t, rep, fleettest.SecondAccount, "us-east-1", eips)
	if second.Cells != 1 || second.Status != StatusOK || *second.Limit != 7 || *second.Headroom != 7 {
		t.Errorf("cell-c alone in the second account's us-east-1: %+v", second)
	}
	if home := accountRow(t, rep, homeID, "us-east-1", eips); *home.Limit != 2 || home.Cells != 2 {
		t.Errorf("the home account's limit is its own: %+v", home)
	}
	west := accountRow(t, rep, fleettest.SecondAccount, "us-west-2", eips)
	if west.Cells != 1 || west.PerCell != 3 {
		t.Errorf("cell-d (per-AZ NAT) in the second account's us-west-2: %+v", west)
	}
	for _, r := range rep.Rows {
		// The router lives in the home account: its edge function's
		// replicas run in every Region of the fleet, so its Lambda rows
		// are read there; no cell quota is.
		if r.Account == "" && r.Region == "us-west-2" && r.Consumer != "router" {
			t.Fatalf("the home account has no cell in us-west-2, yet a row was read: %+v", r)
		}
	}
	if n := len(accountRows(rep, fleettest.SecondAccount, string(ScopeAccount))); n == 0 {
		t.Error("the second account's account-wide quotas were not read")
	}
	if err := rep.Err(); err != nil {
		t.Errorf("with both accounts readable: %v", err)
	}
}

func accountRows(rep *Report, account, region string) []Row {
	var out []Row
	for _, r := range rep.Rows {
		if r.Account == account && r.Region == region {
			out = append(out, r)
		}
	}
	return out
}

func accountRow(t *testing.T, rep *Report, account, region, code string) Row {
	t.Helper()
	for _, r := range accountRows(rep, account, region) {
		if r.Code == code {
			return r
		}
	}
	t.Fatalf("no %s row in account %q, %s", code, account, region)
	return Row{}
}

// TestSecurityGroupRulesAdviceFromTheWorstGroup: a security group's
// rules do not add up across cells, so the increase to ask for is sized
// from the fullest group after the change — the template's (PerCell), a
// new cell's (Adding) or one already in the account (Used) — never from
// the used count alone (an empty account read 0 and advised
// --desired-value 0 against a template group of 55 rules).
func TestSecurityGroupRulesAdviceFromTheWorstGroup(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		used, perCell, adding float64
		status                Status
		want                  string
	}{
		{used: 0, perCell: 55, status: StatusWarn, want: "--desired-value 69"},  // 55 / 0.8
		{used: 2, perCell: 55, status: StatusWarn, want: "--desired-value 69"},  // moto's 2 rules of a default group
		{used: 58, perCell: 55, status: StatusWarn, want: "--desired-value 73"}, // a group in the account is fuller
		{used: 0, perCell: 55, adding: 61, status: StatusCritical, want: "--desired-value 77"},
		{used: 10, perCell: 20, status: StatusOK},
	} {
		r := &Row{Code: "vpc/L-0EA8095F", Scope: ScopeGroup, LimitSource: "default", Limit: f(60), Used: f(c.used), PerCell: c.perCell, Adding: c.adding}
		judge(r, nil, "us-east-1")
		if r.Status != c.status || !strings.Contains(r.Next, c.want) || c.want == "" && r.Next != "" {
			t.Errorf("used %g, template %g, adding %g: status %s, next %q; want %s with %q", c.used, c.perCell, c.adding, r.Status, r.Next, c.status, c.want)
		}
	}
}

// TestAdviceLeavesRoomForAnotherCell: a regional quota is judged by the
// next cell too — no room for one more cell of the costliest kind is a
// warning even below 80 % (3 of 5 Elastic IPs with 3 per cell read "ok,
// headroom 0"), and the increase advised puts the usage, with one more
// cell, strictly under the warning line (4 of 5 VPCs advised 5: the limit
// it already had).
func TestAdviceLeavesRoomForAnotherCell(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		code                 string
		limit, used, perCell float64
		adding               float64
		status               Status
		headroom             int
		want                 string
	}{
		{code: "ec2/L-0263D0A3", limit: 5, used: 3, perCell: 3, status: StatusWarn, headroom: 0, want: "--desired-value 8"},                // (3+3)/0.8 = 7.5
		{code: "vpc/L-F678F1CE", limit: 5, used: 4, perCell: 1, status: StatusWarn, headroom: 1, want: "--desired-value 7"},                // (4+1)/0.8 = 6.25
		{code: "vpc/L-F678F1CE", limit: 5, used: 4, perCell: 1, adding: 2, status: StatusCritical, headroom: 1, want: "--desired-value 8"}, // (4+2)/0.8 = 7.5
		{code: "vpc/L-F678F1CE", limit: 5, used: 2, perCell: 1, status: StatusOK, headroom: 3},
	} {
		r := &Row{Code: c.code, Scope: ScopeRegion, LimitSource: "default", Limit: f(c.limit), Used: f(c.used), PerCell: c.perCell, Adding: c.adding}
		judge(r, nil, "us-west-2")
		if r.Status != c.status || r.Headroom == nil || *r.Headroom != c.headroom || !strings.Contains(r.Next, c.want) || c.want == "" && r.Next != "" {
			t.Errorf("%s %g/%g, %g per cell, adding %g: status %s (%s), headroom %v, next %q; want %s, headroom %d, %q",
				c.code, c.used, c.limit, c.perCell, c.adding, r.Status, r.Reason, r.Headroom, r.Next, c.status, c.headroom, c.want)
		}
	}
}

// generatedFleet is a valid fleet of n single-NAT cells over two regions,
// each with its region's certificate.
func generatedFleet(tb testing.TB, n int) *fleet.Fleet {
	return fleettest.Generate(tb, fleettest.Generated{Cells: n, Regions: []string{"us-east-1", "us-west-2"},
		Baseline: "  cells:certificateArn: arn:aws:acm:us-east-1:123456789012:certificate/bench\n",
		CellConfig: func(_ int, region string) string {
			return "  cells:certificateArn: arn:aws:acm:" + region + ":123456789012:certificate/bench\n"
		}})
}
