package quota

import (
	"context"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/fleet"
)

const (
	codeStorage = "lambda/L-2ACBD22F"
	concurrency = "lambda/L-B99A9384"
	edgeRPS     = "lambda-edge/requests-per-second"
)

// The router's edge function consumes Lambda's code storage where it lives
// (us-east-1) and Lambda's concurrency — and so Lambda@Edge's requests per
// second — wherever its replicas serve viewers: the audit reads them in
// the router's account, the next publish counted against the storage.
func TestTheRouterEdgeQuotasAreAudited(t *testing.T) {
	c, target, _ := simCloud(t)
	fl := demoFleet(t)
	if err := c.SetQuota("us-west-2", concurrency, 50); err != nil {
		t.Fatal(err)
	}
	// --add-cells asks about cells: the router's next version is counted
	// all the same.
	rep, err := Check(context.Background(), Options{Fleet: fl, Target: target, AddCells: 2})
	if err != nil {
		t.Fatal(err)
	}
	st := row(t, rep, "us-east-1", codeStorage)
	if st.Consumer != "router" || st.Used == nil || *st.Used != 0 || *st.Limit != 75 || st.Adding <= 0 || st.Adding > 0.01 || st.Status != StatusOK {
		t.Errorf("code storage of an empty account, the next version to come: %+v", st)
	}
	if !strings.Contains(st.Note, "the router's next publish adds a version of") {
		t.Errorf("the row must say what the next publish adds: %q", st.Note)
	}
	regions := map[string]bool{edgeRegion: true}
	for _, cell := range fl.Cells {
		regions[cell.Region] = true
	}
	for r := range regions {
		cr := row(t, rep, r, concurrency)
		rps := row(t, rep, r, edgeRPS)
		want := 1000.0
		if r == "us-west-2" {
			want = 50
		}
		if cr.Consumer != "router" || *cr.Limit != want || *cr.Used != 0 || cr.Status != StatusOK {
			t.Errorf("%s concurrency: %+v", r, cr)
		}
		if rps.Limit == nil || *rps.Limit != 10*want || rps.LimitSource != "10 × "+concurrency {
			t.Errorf("%s: Lambda@Edge requests per second are 10 × the Region's concurrency: %+v", r, rps)
		}
		if rps.Status != StatusUnknown || rps.Used != nil || !rps.Unmeasured || rps.Finding() || !strings.Contains(rps.Reason, "not measured") {
			t.Errorf("%s: requests per second are not measured, said so, never 0 and not a finding: %+v", r, rps)
		}
	}
	for _, r := range rep.Rows {
		if r.Code == codeStorage && r.Region != edgeRegion {
			t.Errorf("code storage is the edge function's Region's only: %+v", r)
		}
	}
	for _, r := range rep.Rows {
		if r.Consumer == "router" && r.Finding() {
			t.Errorf("room everywhere: %s", r.Summary())
		}
	}

	// A storage nearly full: the router's next publish does not fit.
	if err := c.SetQuota("us-east-1", codeStorage, 0.00001); err != nil {
		t.Fatal(err)
	}
	rep, err = Check(context.Background(), Options{Fleet: fl, Target: target})
	if err != nil {
		t.Fatal(err)
	}
	st = row(t, rep, "us-east-1", codeStorage)
	if st.Status != StatusCritical || !st.Finding() || !strings.Contains(st.Reason, "for the router's next edge version") ||
		!strings.Contains(st.Next, "--service-code lambda --quota-code L-2ACBD22F") {
		t.Errorf("a next version past the storage: %+v", st)
	}
}

// An edge signal that cannot be read is a finding, never a pass.
func TestAnUnreadableEdgeQuotaIsAFinding(t *testing.T) {
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
	for _, code := range []string{codeStorage, concurrency} {
		r := row(t, rep, edgeRegion, code)
		if r.Status != StatusUnknown || r.Used != nil || !r.Finding() {
			t.Errorf("%s unreadable: %+v", code, r)
		}
	}
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), awsfacts.LambdaCodeStorage.Name) {
		t.Errorf("the audit must fail on the unreadable edge quotas: %v", err)
	}
}
