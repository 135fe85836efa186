package plan

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/iamsim"
	"github.com/cellctl/cellctl/internal/policy"
)

// judged is one request cellctl decided, sent to the outside judge.
type judged struct {
	c    iamsim.Case
	mine access.Decision
}

// judgeCases turns every required and (written-out) forbidden path of a
// rendered fleet into the judge's cases: each path's own request and
// every call the service makes on the caller's behalf, each decided alone.
// Undecidable requests are counted, not sent: the judge would decide a
// condition cellctl refuses to guess.
func judgeCases(t *testing.T, f *fleet.Fleet, m *access.Model, name string) (cases []judged, undecidable int) {
	t.Helper()
	isCell := func(owner string) bool { return f.Cell(owner) != nil }
	paths := append(RequiredPaths(f), m.Forbidden(isCell)...)
	seen := map[string]bool{}
	var add func(req access.Request)
	throughAP := false
	add = func(req access.Request) {
		v := m.EvaluateOne(req)
		in, ok := m.InputsOf(req)
		if !ok || v.Decision == access.Undecidable {
			undecidable++
			return
		}
		c := iamsim.Case{Principal: in.Principal.ARN, Action: req.Action, Resource: in.Resource, ResourceAccount: in.ResourceAccount,
			Context: in.Context}
		for _, p := range in.Identity {
			doc, err := forJudge(p.Doc).JSON()
			if err != nil {
				t.Fatal(err)
			}
			c.IdentityPolicies = append(c.IdentityPolicies, iamsim.NamedPolicy{Name: p.Name, Policy: doc})
		}
		if in.ResourcePolicy != nil {
			judged := forJudge(in.ResourcePolicy.Doc)
			if throughAP {
				judged = withoutKeys(judged, accessPointKeys)
			}
			doc, err := judged.JSON()
			if err != nil {
				t.Fatal(err)
			}
			c.ResourcePolicy = doc
		}
		key := fmt.Sprintf("%s|%s|%s|%v", c.Principal, c.Action, c.Resource, c.Context)
		if !seen[key] {
			seen[key] = true
			c.ID = fmt.Sprintf("%s#%d %s", name, len(cases), req)
			cases = append(cases, judged{c, v.Decision})
		}
		if v.Decision == access.Allowed {
			for _, sub := range m.Implied(req) {
				add(sub)
			}
		}
	}
	for _, p := range paths {
		r := m.ResourceByLabel(p.Resource)
		if r == nil {
			t.Fatalf("%s: path %s names no resource", name, p.Name)
		}
		req := access.Request{Principal: p.Principal, Action: p.Action, Resource: r.ARN + p.Suffix, Context: p.Context}
		add(req)
		// Through an access point, the bucket's half too: the bucket
		// policy's delegation read with the keys such a request carries.
		if breq, ok := m.BucketRequest(req); ok {
			throughAP = true
			add(breq)
			throughAP = false
		}
	}
	return cases, undecidable
}

// judgeBlindKey is a condition key the judge cannot see: iam-simulate
// 0.1.173 drops kms:EncryptionContext:<key> from every request (its
// reference data names the key as the template
// kms:EncryptionContext:${EncryptionContextKey}, which it does not
// match), so a statement conditioned on it never applies there although
// AWS applies it ("kms:EncryptionContext:context-key", AWS KMS Developer
// Guide). The judge's copy of a policy goes without those conditions;
// internal/access's own tests decide them
// (TestEncryptionContextConditions).
const judgeBlindKey = "kms:EncryptionContext:"

// accessPointKeys are the keys a request through an access point
// carries (s3:DataAccessPointAccount, s3:DataAccessPointArn,
// s3:AccessPointNetworkOrigin; "Condition keys for Amazon S3", Service
// Authorization Reference, and "Delegating access control to access
// points", Amazon S3 User Guide). iam-data 0.21 lists them for the access
// point management actions only, not for s3:GetObject and the rest, so
// iam-simulate drops them from an object request ("ignored context") and
// a bucket's delegation never applies there. The bucket's half of a
// request through an access point (access.Model.BucketRequest) carries
// them and satisfies the delegation by construction; its judge's copy of
// the bucket policy goes without those conditions, and the judge decides
// the rest (principals, actions, resources, Denies). internal/access's own
// tests decide the keys (TestAccessPointRequestsNeedTheAccessPointAndTheBucket,
// whose "the delegation does not open the bucket itself" is the direct
// request without them).
var accessPointKeys = []string{"s3:DataAccessPointAccount", "s3:DataAccessPointArn", "s3:AccessPointNetworkOrigin"}

// withoutKeys is a copy of doc without the conditions on keys.
func withoutKeys(doc policy.Document, keys []string) policy.Document {
	out := doc
	out.Statement = make([]policy.Statement, len(doc.Statement))
	for i, s := range doc.Statement {
		out.Statement[i] = s
		if len(s.Condition) == 0 {
			continue
		}
		cond := policy.Conditions{}
		for op, kv := range s.Condition {
			kept := map[string]policy.Values{}
			for k, v := range kv {
				if !slices.ContainsFunc(keys, func(x string) bool { return strings.EqualFold(x, k) }) {
					kept[k] = v
				}
			}
			if len(kept) > 0 {
				cond[op] = kept
			}
		}
		out.Statement[i].Condition = cond
	}
	return out
}

// forJudge is a copy of doc without the conditions on judgeBlindKey keys.
func forJudge(doc policy.Document) policy.Document {
	out := doc
	out.Statement = make([]policy.Statement, len(doc.Statement))
	for i, s := range doc.Statement {
		out.Statement[i] = s
		if len(s.Condition) == 0 {
			continue
		}
		cond := policy.Conditions{}
		for op, keys := range s.Condition {
			kept := map[string]policy.Values{}
			for k, v := range keys {
				if !strings.HasPrefix(strings.ToLower(k), strings.ToLower(judgeBlindKey)) {
					kept[k] = v
				}
			}
			if len(kept) > 0 {
				cond[op] = kept
			}
		}
		out.Statement[i].Condition = cond
	}
	return out
}

// disagreements compares cellctl's decisions with the judge's.
func disagreements(cases []judged, results []iamsim.Result) []string {
	var out []string
	for i, r := range results {
		mine := cases[i].mine
		if string(mine) != string(r.Decision) {
			out = append(out, fmt.Sprintf("%s: cellctl %s, iam-simulate %s (%s)", r.ID, mine, r.Decision, r.Detail))
		}
	}
	return out
}

// differentialFleets are the fleets the judge sees: the demo, the
// two-accounts fleet, and the demo with lane queues (queue policies
// naming the task role) and migrations on cell-b.
func differentialFleets(t *testing.T) map[string]*fleet.Fleet {
	lanes := fleettest.Demo(t)
	fleettest.Edit(t, lanes, "stacks/Pulumi.cell-b.yaml", func(s string) string {
		return s + "  cells:laneQueues: true\n  cells:migrationCommand: '[\"./migrate\", \"up\"]'\n"
	})
	return map[string]*fleet.Fleet{
		"demo":         fleettest.Load(t, fleettest.Demo(t)),
		"two-accounts": fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts)),
		"lanes":        fleettest.Load(t, lanes),
	}
}

// TestPathsAgreeWithIAMSimulate holds cellctl's evaluator to one nobody
// here wrote: @cloud-copilot/iam-simulate decides every required and
// forbidden path (and each implied KMS call) of three fleets from the
// same policies, and any disagreement fails. The judge is lax in places
// (docs/TESTING.md): its Allowed is compared, never taken as proof.
func TestPathsAgreeWithIAMSimulate(t *testing.T) {
	root := fleettest.Root()
	iamsim.Require(t, root)
	names := []string{}
	fleets := differentialFleets(t)
	for n := range fleets {
		names = append(names, n)
	}
	sort.Strings(names)
	total := 0
	for _, n := range names {
		f := fleets[n]
		rep, err := Render(context.Background(), f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := rep.AccessModel(f)
		if err != nil {
			t.Fatal(err)
		}
		cases, undecidable := judgeCases(t, f, m, n)
		in := make([]iamsim.Case, len(cases))
		for i, c := range cases {
			in[i] = c.c
		}
		results, err := iamsim.Run(context.Background(), root, in)
		if err != nil {
			t.Fatal(err)
		}
		total += len(cases)
		if d := disagreements(cases, results); len(d) > 0 {
			t.Errorf("%s: %d of %d requests decided differently:\n  %s", n, len(d), len(cases), strings.Join(d, "\n  "))
			continue
		}
		t.Logf("%s: all %d requests agree with iam-simulate (%d undecidable, not sent)", n, len(cases), undecidable)
	}
	if total < 1000 {
		t.Fatalf("only %d requests judged", total)
	}
}

// The differential is not a test that cannot fail: a planted
// disagreement (the judge given a task policy without its prefix grant,
// cellctl deciding with it) is reported.
func TestPlantedDisagreementIsCaught(t *testing.T) {
	root := fleettest.Root()
	iamsim.Require(t, root)
	f := fleettest.Load(t, fleettest.Demo(t))
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := rep.AccessModel(f)
	if err != nil {
		t.Fatal(err)
	}
	cases, _ := judgeCases(t, f, m, "demo")
	var planted []judged
	for _, c := range cases {
		if c.mine == access.Allowed && c.c.Action == "s3:PutObject" {
			c.c.IdentityPolicies = nil // the judge sees no identity policy
			planted = append(planted, c)
			break
		}
	}
	if len(planted) != 1 {
		t.Fatal("no allowed s3:PutObject to plant a disagreement in")
	}
	in := []iamsim.Case{planted[0].c}
	results, err := iamsim.Run(context.Background(), root, in)
	if err != nil {
		t.Fatal(err)
	}
	if d := disagreements(planted, results); len(d) != 1 {
		t.Fatalf("a planted disagreement was not reported: %v", results)
	}
}
