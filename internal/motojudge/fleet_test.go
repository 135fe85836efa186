package motojudge_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/motojudge"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/plan"
)

// shared is the package's one moto (TestMain), nil where moto_server is
// absent; every test resets it before use.
var (
	shared    *motojudge.Server
	sharedErr error
)

func TestMain(m *testing.M) {
	shared, sharedErr = motojudge.Launch()
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	os.Exit(code)
}

// motoServer returns the shared moto, skipping the test (saying why) where
// moto_server is absent.
func motoServer(t *testing.T) *motojudge.Server {
	t.Helper()
	if errors.Is(sharedErr, motojudge.ErrNoMoto) {
		t.Skip(sharedErr.Error())
	}
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// testNow is the date awsmodel's dated rules judge at: a verdict must not
// depend on the day the test runs.
func testNow() time.Time { return time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC) }

// tally counts one fleet's judgements; failures are the disagreements.
type tally struct {
	sent, accepted, agreedRefusal, motoLax, knownWrong int
	notJudged                                          map[string]int
	notJudgedWhy                                       map[string]string
	failures, notes                                    []string
}

// knownWrongFleet lists rendered resources moto refuses for a reason of
// its own, not AWS's, keyed by type and moto's code; each says why.
var knownWrongFleet = map[[2]string]string{}

// judgeFleet renders f and sends every rendered resource's create call to
// a fresh moto, in the order the programs created them (a subnet after
// its VPC), comparing each answer with awsmodel's verdict: the render
// succeeding means the mocks' API rules accepted every resource; the
// audit (Report.Rules) adds what it refuses on review.
//
// plant, when set, rewrites a resource's inputs before moto sees them
// (awsmodel's verdict stays the render's): the planted-disagreement test
// uses it to show a refusal awsmodel did not make is reported.
func judgeFleet(t *testing.T, srv *motojudge.Server, f *fleet.Fleet, stacks []string, plant func(typ, name string, in resource.PropertyMap) resource.PropertyMap) tally {
	t.Helper()
	ctx := context.Background()
	rep, err := plan.Render(ctx, f, plan.Options{Now: testNow, Stacks: stacks})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	// awsmodel's refusals by resource, and the quota codes it raises over
	// the fleet (a quota finding names the first resource counted, while
	// AWS refuses the one past the limit).
	refused := map[string]awsmodel.Violation{}
	quotaCodes := map[string]bool{}
	for _, v := range rep.Rules() {
		if strings.HasPrefix(v.Rule, "quota.") {
			quotaCodes[v.Code] = true
			continue
		}
		if r, ok := awsmodel.RuleByID(v.Rule); ok && r.AuditOnly {
			continue
		}
		refused[v.Stack+"/"+v.Type+"/"+v.Name] = v
	}
	srv.Reset(t)
	j := srv.NewJudge()
	tl := tally{notJudged: map[string]int{}, notJudgedWhy: map[string]string{}}
	refusedURNs := map[string]bool{}
	for _, s := range rep.Stacks {
		j.CreateStack(ctx, s.Account, s.Region, s.Recorded(), func(r *offline.Resource, create func(resource.PropertyMap) motojudge.Outcome) {
			// A resource standing on one moto refused would be refused
			// for that alone (its subnet "does not exist"): one finding
			// is enough.
			if blocked := dependsOnRefused(r.DependsOn, refusedURNs); blocked {
				refusedURNs[r.URN] = true
				tl.notJudged[r.Type]++
				tl.notJudgedWhy[r.Type] = "depends on a resource moto refused"
				return
			}
			inputs := r.Inputs
			if plant != nil {
				inputs = plant(r.Type, r.Name, inputs.Copy())
			}
			got := create(inputs)
			what := fmt.Sprintf("%s: %s %q", s.Name, r.Type, r.Name)
			if !got.Judged {
				tl.notJudged[r.Type]++
				tl.notJudgedWhy[r.Type] = got.NotJudged
				return
			}
			tl.sent++
			if got.Refused() {
				refusedURNs[r.URN] = true
			}
			v, modelRefuses := refused[s.Name+"/"+r.Type+"/"+r.Name]
			switch {
			case !got.Refused() && !modelRefuses:
				tl.accepted++
			case !got.Refused():
				tl.motoLax++
				tl.notes = append(tl.notes, fmt.Sprintf("moto lax: %s: awsmodel refuses (%s %s), moto accepted", what, v.Code, v.Rule))
			case modelRefuses && v.Code == got.Code, quotaCodes[got.Code]:
				tl.agreedRefusal++
			case knownWrongFleet[[2]string{r.Type, got.Code}] != "":
				tl.knownWrong++
				tl.notes = append(tl.notes, fmt.Sprintf("moto known wrong: %s: %s (%s)", what, got, knownWrongFleet[[2]string{r.Type, got.Code}]))
			case modelRefuses:
				tl.failures = append(tl.failures, fmt.Sprintf("%s: awsmodel refuses with %s (%s), moto %s", what, v.Code, v.Rule, got))
			default:
				tl.failures = append(tl.failures, fmt.Sprintf("%s: awsmodel accepts, moto %s", what, got))
			}
		})
	}
	return tl
}

func dependsOnRefused(deps []string, refused map[string]bool) bool {
	for _, d := range deps {
		if refused[d] {
			return true
		}
	}
	return false
}

func (tl tally) report(t *testing.T, name string) {
	t.Helper()
	for _, n := range tl.notes {
		t.Log(n)
	}
	var types []string
	total := 0
	for typ, n := range tl.notJudged {
		types = append(types, fmt.Sprintf("%s ×%d (%s)", typ, n, tl.notJudgedWhy[typ]))
		total += n
	}
	sort.Strings(types)
	for _, typ := range types {
		t.Logf("not judged: %s", typ)
	}
	t.Logf("moto judge, %s fleet: %d creates sent, %d accepted by both, %d refused by both, %d moto lax, %d known wrong, %d not judged",
		name, tl.sent, tl.accepted, tl.agreedRefusal, tl.motoLax, tl.knownWrong, total)
	for _, f := range tl.failures {
		t.Error(f)
	}
}

// TestRenderedFleetsAgreeWithMoto sends every create call of three
// rendered fleets to moto. moto refusing what awsmodel accepted is a
// rule awsmodel lacks (or a moto bug, to be listed with its reason).
func TestRenderedFleetsAgreeWithMoto(t *testing.T) {
	srv := motoServer(t)
	fleets := []struct {
		name string
		f    func() *fleet.Fleet
	}{
		{"demo", func() *fleet.Fleet { return fleettest.Load(t, fleettest.Demo(t)) }},
		{"two-accounts", func() *fleet.Fleet { return fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts)) }},
		{"30 cells over five regions", func() *fleet.Fleet {
			return regionalFleet(t, 30, "us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2")
		}},
	}
	for _, fl := range fleets {
		t.Run(fl.name, func(t *testing.T) {
			judgeFleet(t, srv, fl.f(), nil, nil).report(t, fl.name)
		})
	}
}

// TestPlantedDisagreementIsCaught: the differential can fail. A subnet
// moved outside its VPC after awsmodel judged the render (cell-a's first
// public subnet), and corpus verdicts deliberately mis-coded, must each be
// reported as a disagreement; moto accepting what awsmodel refuses must
// not.
func TestPlantedDisagreementIsCaught(t *testing.T) {
	srv := motoServer(t)
	planted := "cell-a-public-1a"
	tl := judgeFleet(t, srv, fleettest.Load(t, fleettest.Demo(t)), []string{"cell-a"},
		func(typ, name string, in resource.PropertyMap) resource.PropertyMap {
			if name == planted {
				in["cidrBlock"] = resource.NewStringProperty("192.168.0.0/24")
			}
			return in
		})
	if len(tl.failures) != 1 || !strings.Contains(tl.failures[0], planted) || !strings.Contains(tl.failures[0], "InvalidSubnet.Range") {
		t.Fatalf("the planted subnet outside its VPC: failures %q, want one naming %s and InvalidSubnet.Range", tl.failures, planted)
	}

	// The corpus's rule, over a real moto answer.
	j, _, ids := setup(t, srv)
	in := resource.NewPropertyMapFromMap(subnet("10.99.0.0/24", "us-east-1a")(ids))
	moto := j.Create(context.Background(), "us-east-1", tSubnet, in, nil, "", "")
	if moto.Code != "InvalidSubnet.Range" {
		t.Fatalf("moto on a subnet outside its VPC: %s", moto)
	}
	for _, tc := range []struct {
		model verdict
		want  string
	}{
		{verdict{}, disagree}, // awsmodel "accepts"
		{verdict{refused: true, code: "InvalidSubnet.Conflict"}, disagree},
		{verdict{refused: true, code: "InvalidSubnet.Range"}, agreed},
		{verdict{refused: true}, agreed}, // refused before AWS
	} {
		if got, why := compare("planted", tc.model, moto); got != tc.want {
			t.Errorf("awsmodel %+v vs moto %s: %s (%s), want %s", tc.model, moto, got, why, tc.want)
		}
	}
	if got, _ := compare("planted", verdict{refused: true, code: "X"}, motojudge.Outcome{Judged: true}); got != motoLax {
		t.Errorf("moto accepting what awsmodel refuses: %s, want %s (moto's acceptance is no evidence)", got, motoLax)
	}
}

// regionalFleet is a valid fleet of n single-NAT cells spread over
// regions, in one wave.
func regionalFleet(t *testing.T, n int, regions ...string) *fleet.Fleet {
	return fleettest.Generate(t, fleettest.Generated{Cells: n, Regions: regions, Bucket: "moto-judge-fleet", OneWave: true})
}
