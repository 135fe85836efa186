package motojudge_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/motojudge"
	"github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/router"
)

// testNow is the date awsmodel's dated rules judge at: a verdict must not
// depend on the day the test runs.
func testNow() time.Time { return time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC) }

// regionalFleet is n cells spread over regions (internal/plan's quota
// tests lay out the same fleet).
func regionalFleet(t *testing.T, n int, regions ...string) *fleet.Fleet {
	t.Helper()
	fsys := fstest.MapFS{}
	fsys["Pulumi.yaml"] = &fstest.MapFile{Data: []byte(`name: cells
runtime: go
stackConfigDir: stacks
config:
  cells:image: registry.example.com/app:1.0.0
  cells:fleetBucket: moto-judge-fleet
  cells:fleetDomain: cells.example.com
  cells:hostedZoneId: Z0123456789ABCDEFGHIJ
  cells:natMode: single
  aws:region: us-east-1
`)}
	var ids []string
	var weights []router.CellWeight
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("cell-%03d", i)
		ids = append(ids, id)
		weights = append(weights, router.CellWeight{Cell: id, Weight: 1})
		fsys["stacks/Pulumi."+id+".yaml"] = &fstest.MapFile{Data: []byte(fmt.Sprintf("config:\n  cells:index: %d\n  aws:region: %s\n", i, regions[i%len(regions)]))}
	}
	fsys["stacks/Pulumi.router.yaml"] = &fstest.MapFile{Data: []byte("config:\n  aws:region: us-east-1\n")}
	fsys["stacks/waves.yaml"] = &fstest.MapFile{Data: []byte("waves:\n  - name: all\n    cells: [" + strings.Join(ids, ", ") + "]\n")}
	assign := router.Place(weights, 4096)
	spec := router.Spec{Version: 1, Buckets: 4096}
	for _, w := range weights {
		spec.Cells = append(spec.Cells, router.CellSpec{ID: w.Cell, State: router.CellActive, Weight: 1, Buckets: assign.Ranges(w.Cell)})
	}
	table, err := router.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	fsys["stacks/routing.json"] = &fstest.MapFile{Data: table.Marshal()}
	f, err := fleet.LoadFS(fsys, "generated")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fleetFinding is one disagreement (or one note) about a rendered
// resource.
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
func judgeFleet(t *testing.T, srv *motojudge.Server, f *fleet.Fleet) tally {
	t.Helper()
	ctx := context.Background()
	rep, err := plan.Render(ctx, f, plan.Options{Now: testNow})
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
	for _, s := range rep.Stacks {
		regions := map[string]string{}
		for _, r := range s.Recorded() {
			if r.Type == awsmodel.ProviderType {
				if v, ok := r.Inputs["region"]; ok && v.IsString() {
					regions[r.URN] = v.StringValue()
				}
			}
		}
		for _, r := range s.Recorded() {
			if !r.Custom || !strings.HasPrefix(r.Type, "aws:") {
				continue
			}
			region := s.Region
			if i := strings.LastIndex(r.Provider, "::"); i >= 0 && regions[r.Provider[:i]] != "" {
				region = regions[r.Provider[:i]]
			}
			arn := ""
			if v, ok := r.Outputs["arn"]; ok && v.IsString() {
				arn = v.StringValue()
			}
			got := j.CreateIn(ctx, s.Account, region, r.Type, r.Inputs, r.Outputs, r.ID, arn)
			what := fmt.Sprintf("%s: %s %q", s.Name, r.Type, r.Name)
			if !got.Judged {
				tl.notJudged[r.Type]++
				tl.notJudgedWhy[r.Type] = got.NotJudged
				continue
			}
			tl.sent++
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
		}
	}
	return tl
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
	srv := motojudge.Start(t)
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
			judgeFleet(t, srv, fl.f()).report(t, fl.name)
		})
	}
}
