package engine

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router/component"
)

// shape is how one pass rendered the router's primary.
type shape struct{ attach, hold bool }

// linkedRouter is a fake engine over a router whose state holds its
// primary distribution with the demo's settings; policy is the policy the
// primary names ("" : detached). Every pass the engine renders is
// recorded in *shapes; each up writes the primary as that pass leaves it
// (the policy attached or not, the price class the fleet renders unless
// the pass holds the deployed one), unless fail says the pass fails.
type linkedRouter struct {
	*fakeEngine
	shapes []shape
	fail   func(n int, s shape) bool // the n-th up (from 1) fails
	ups    int
	policy string // the policy in the state now
	price  string // the price class in the state now
}

const primaryID = "E1PRIMARY"

func newLinkedRouter(t *testing.T, policy string) *linkedRouter {
	lr := &linkedRouter{policy: policy, price: "PriceClass_100"}
	lr.fakeEngine = newFakeEngine(t, func(o *Options) {
		o.Program = func(f *fleet.Fleet) pulumi.RunFunc {
			lr.shapes = append(lr.shapes, shape{f.Router.AttachDeploymentPolicy, f.Router.HoldLinkedFields})
			return func(*pulumi.Context) error { return nil }
		}
	})
	for _, c := range lr.fleet.CellIDs() {
		writeCheckpoint(t, lr.root, "cells", c, deploymentWith(c, map[string]any{"albDnsName": c + ".elb"}))
	}
	writeCheckpoint(t, lr.root, "cells", "router", lr.state())
	lr.cli.op = func(c *fakeCall) fakeResult {
		if c.Verb != "up" {
			return fakeResult{}
		}
		lr.ups++
		s := lr.shapes[len(lr.shapes)-1]
		if lr.fail != nil && lr.fail(lr.ups, s) {
			return fakeResult{Code: 1, Stderr: fmt.Sprintf("error: update %d failed\n", lr.ups)}
		}
		lr.policy = ""
		if s.attach {
			lr.policy = "cdp-1"
		}
		if !s.hold {
			lr.price = lr.fleet.Router.PriceClass
		}
		return fakeResult{Deployment: lr.state()}
	}
	return lr
}

// state is the router's deployment: the stack and its primary.
func (lr *linkedRouter) state() map[string]any {
	primary := map[string]any{"urn": urn("router", distributionType, component.PrimaryDistributionName(fleet.RouterStack)), "type": distributionType, "custom": true, "id": primaryID,
		"inputs":  map[string]any{"priceClass": lr.price, "httpVersion": component.HTTPVersion, "aliases": []any{"*.app.example.com", "app.example.com"}, "enabled": true, "isIpv6Enabled": true},
		"outputs": map[string]any{"continuousDeploymentPolicyId": lr.policy, "priceClass": lr.price}}
	return deploymentWith("router", map[string]any{"continuousDeploymentPolicyId": "cdp-1", "attachedDeploymentPolicyId": lr.policy}, primary)
}

func (lr *linkedRouter) up(t *testing.T, op stackrun.Operation) *stackrun.Result {
	t.Helper()
	lr.shapes = nil
	return lr.RunStack(context.Background(), stackrun.Request{Stack: fleet.RouterStack, Op: op})
}

// TestLinkedPrimaryChangeDetachesAppliesAndAttaches: a new price class on
// a primary the policy links — which CloudFront refuses — is applied by
// the unlink sequence in one up: the detach targets the primary alone
// with its locked settings held, then the change, then the attach; the
// run says so and the primary ends linked. (Before, the up rendered the
// primary attached with the new price class in one pass: the simulator
// answered IllegalUpdate.)
func TestLinkedPrimaryChangeDetachesAppliesAndAttaches(t *testing.T) {
	lr := newLinkedRouter(t, "cdp-1")
	lr.fleet.Router.PriceClass = "PriceClass_200"
	res := lr.up(t, stackrun.OpUp)
	if res.Result != stackrun.Succeeded {
		t.Fatalf("%s: %v", res.Result, res.Err)
	}
	want := []shape{{attach: false, hold: true}, {attach: false, hold: false}, {attach: true, hold: false}}
	if !reflect.DeepEqual(lr.shapes, want) {
		t.Errorf("passes rendered %+v, want detach (held), apply, attach %+v", lr.shapes, want)
	}
	ups := lr.cli.callsOf("up")
	if len(ups) != 3 {
		t.Fatalf("ups = %d, want 3", len(ups))
	}
	target, _ := ups[0].flag("--target")
	if !strings.HasSuffix(target, "::"+component.PrimaryDistributionName(fleet.RouterStack)) {
		t.Errorf("the detach targets %q, want the primary distribution alone", target)
	}
	for _, u := range ups[1:] {
		if u.has("--target") {
			t.Errorf("the %v pass is targeted: the change and the attach apply the whole stack", u.Args)
		}
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "priceClass") || !strings.Contains(notes, "detached the policy") || !strings.Contains(notes, "attached the policy cdp-1 again") {
		t.Errorf("notes %q do not tell the unlink sequence", res.Notes)
	}
	if lr.policy != "cdp-1" || lr.price != "PriceClass_200" {
		t.Errorf("the primary ends with policy %q, price class %q", lr.policy, lr.price)
	}

	// Nothing locked changes any more: one attached pass.
	res = lr.up(t, stackrun.OpUp)
	if res.Result != stackrun.Succeeded || !reflect.DeepEqual(lr.shapes, []shape{{attach: true}}) {
		t.Errorf("the next up: %s %v, passes %+v, want one attached", res.Result, res.Err, lr.shapes)
	}
}

// TestAFailedChangeAfterTheDetachAttachesThePolicyAgain: the change fails
// on the detached primary; the run attaches the policy again with the
// primary's settings held and says so — the primary is never left
// unlinked without a word.
func TestAFailedChangeAfterTheDetachAttachesThePolicyAgain(t *testing.T) {
	lr := newLinkedRouter(t, "cdp-1")
	lr.fleet.Router.PriceClass = "PriceClass_200"
	lr.fail = func(n int, s shape) bool { return n == 2 }
	res := lr.up(t, stackrun.OpUp)
	if res.Result != stackrun.Failed {
		t.Fatalf("result %s, want failed", res.Result)
	}
	want := []shape{{false, true}, {false, false}, {true, true}}
	if !reflect.DeepEqual(lr.shapes, want) {
		t.Errorf("passes %+v, want detach, apply (failed), re-attach held %+v", lr.shapes, want)
	}
	if lr.policy != "cdp-1" || lr.price != "PriceClass_100" {
		t.Errorf("the primary ends with policy %q, price %q; want re-linked on its old price class", lr.policy, lr.price)
	}
	if msg := res.Err.Error(); !strings.Contains(msg, "update 2 failed") || !strings.Contains(msg, "attached to the primary CloudFront distribution "+primaryID+" again") {
		t.Errorf("error %q does not say the change failed and the policy is attached again", msg)
	}
}

// TestAPrimaryLeftDetachedIsSaidWithTheCommandThatFinishes: the change and
// the re-attach both fail; the error names the detached primary and
// `cellctl up --router`, which — run once the cause is gone — applies the
// change and attaches the policy (the state says the primary is detached:
// two passes, no detach).
func TestAPrimaryLeftDetachedIsSaidWithTheCommandThatFinishes(t *testing.T) {
	lr := newLinkedRouter(t, "cdp-1")
	lr.fleet.Router.PriceClass = "PriceClass_200"
	lr.fail = func(n int, s shape) bool { return n >= 2 }
	res := lr.up(t, stackrun.OpUp)
	if res.Result != stackrun.Failed || lr.policy != "" {
		t.Fatalf("result %s, policy %q: want failed with the primary detached", res.Result, lr.policy)
	}
	msg := res.Err.Error()
	for _, want := range []string{"update 2 failed", "attaching the policy again failed too", "the primary CloudFront distribution " + primaryID + " is detached", "cellctl up --router"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if n := strings.Count(msg, "cellctl up --router"); n != 1 {
		t.Errorf("error %q gives its advice %d times", msg, n)
	}
	lr.fail = nil
	res = lr.up(t, stackrun.OpUp)
	if res.Result != stackrun.Succeeded || !reflect.DeepEqual(lr.shapes, []shape{{false, false}, {true, false}}) {
		t.Fatalf("the rerun: %s %v, passes %+v; want apply, attach", res.Result, res.Err, lr.shapes)
	}
	if lr.policy != "cdp-1" || lr.price != "PriceClass_200" || !strings.Contains(strings.Join(res.Notes, "\n"), "was detached") {
		t.Errorf("after the rerun: policy %q, price %q, notes %q", lr.policy, lr.price, res.Notes)
	}
}

// TestARunKilledInTheSequenceIsFinishedByTheNext: each point a kill -9
// can leave — the detach not landed (still linked), landed (detached, old
// price class), the change landed (detached, new price class) — the next
// up decides its passes from the state and ends linked on the new price
// class.
func TestARunKilledInTheSequenceIsFinishedByTheNext(t *testing.T) {
	for _, tc := range []struct {
		name          string
		policy, price string
		want          []shape
	}{
		{"before the detach", "cdp-1", "PriceClass_100", []shape{{false, true}, {false, false}, {true, false}}},
		{"after the detach", "", "PriceClass_100", []shape{{false, false}, {true, false}}},
		{"after the change", "", "PriceClass_200", []shape{{false, false}, {true, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr := newLinkedRouter(t, tc.policy)
			lr.price = tc.price
			writeCheckpoint(t, lr.root, "cells", "router", lr.state())
			lr.fleet.Router.PriceClass = "PriceClass_200"
			res := lr.up(t, stackrun.OpUp)
			if res.Result != stackrun.Succeeded || !reflect.DeepEqual(lr.shapes, tc.want) {
				t.Errorf("%s %v, passes %+v, want %+v", res.Result, res.Err, lr.shapes, tc.want)
			}
			if lr.policy != "cdp-1" || lr.price != "PriceClass_200" {
				t.Errorf("policy %q, price %q", lr.policy, lr.price)
			}
		})
	}
}

// TestPreviewSaysALinkedChangeTakesTheUnlinkSequence: a preview runs one
// pass (the end of the sequence) and says which locked settings change
// and how up applies them.
func TestPreviewSaysALinkedChangeTakesTheUnlinkSequence(t *testing.T) {
	lr := newLinkedRouter(t, "cdp-1")
	lr.fleet.Router.PriceClass = "PriceClass_200"
	res := lr.up(t, stackrun.OpPreview)
	if res.Result != stackrun.Succeeded || !reflect.DeepEqual(lr.shapes, []shape{{attach: true}}) {
		t.Fatalf("%s %v, passes %+v", res.Result, res.Err, lr.shapes)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "priceClass") || !strings.Contains(notes, "unlink sequence") || !strings.Contains(notes, "cdp-1") {
		t.Errorf("preview notes %q", res.Notes)
	}
	lr.fleet.Router.PriceClass = "PriceClass_100"
	if res := lr.up(t, stackrun.OpPreview); strings.Contains(strings.Join(res.Notes, "\n"), "unlink") {
		t.Errorf("a preview with nothing locked changing mentions the sequence: %q", res.Notes)
	}
}

func TestLockedChangesCompareAsCloudFrontDoes(t *testing.T) {
	deployed := map[string]any{"priceClass": "PriceClass_100", "httpVersion": "http2", "aliases": []any{"b.example.com", "a.example.com"},
		"enabled": true, "isIpv6Enabled": true, "viewerCertificate": map[string]any{"acmCertificateArn": "arn:1", "sslSupportMethod": "sni-only"}}
	for _, tc := range []struct {
		name    string
		price   string
		domains []string
		cert    string
		want    []string
	}{
		{"same, aliases in another order", "PriceClass_100", []string{"a.example.com", "b.example.com"}, "arn:1", nil},
		{"requested certificate", "", []string{"a.example.com", "b.example.com"}, "", nil},
		{"price class", "PriceClass_All", []string{"a.example.com", "b.example.com"}, "", []string{"priceClass"}},
		{"an alias more", "PriceClass_100", []string{"a.example.com", "b.example.com", "c.example.com"}, "", []string{"aliases"}},
		{"another certificate", "PriceClass_100", []string{"a.example.com", "b.example.com"}, "arn:2", []string{"viewerCertificate"}},
		{"no viewer domains", "PriceClass_100", nil, "", []string{"aliases", "viewerCertificate"}},
	} {
		got := lockedChanges(component.PrimaryLinkedSettings(tc.price, tc.domains, tc.cert), deployed)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
