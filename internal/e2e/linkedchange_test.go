package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linkedPrimary is the router's primary distribution's price class and
// the continuous deployment policy it is attached to ("": none), read
// from the simulated cloud.
func linkedPrimary(t *testing.T, dir string) (priceClass, policy string) {
	t.Helper()
	st := readEdge(t, dir)
	return st.primaryPriceClass, st.primaryPolicy
}

// TestLinkedPrimaryTakesANewPriceClass: after the first up the router's
// primary distribution is linked to its staging distribution by the
// continuous deployment policy, and CloudFront refuses a new price class
// on a linked distribution. A new cells:priceClass applied with the
// ordinary `cellctl up` goes through the unlink sequence — detach the
// policy, change the primary, attach it again — and ends with the primary
// on the new price class and linked again.
func TestLinkedPrimaryTakesANewPriceClass(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	pc, policy := linkedPrimary(t, dir)
	if pc != "PriceClass_100" || policy == "" {
		t.Fatalf("after up: primary on %q linked to %q; want PriceClass_100, linked", pc, policy)
	}
	routerFile := filepath.Join(dir, "stacks", "Pulumi.router.yaml")
	data, err := os.ReadFile(routerFile)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "cells:priceClass: PriceClass_100", "cells:priceClass: PriceClass_200", 1)
	if edited == string(data) {
		t.Fatalf("%s sets no cells:priceClass: PriceClass_100", routerFile)
	}
	if err := os.WriteFile(routerFile, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	r := mustRun(t, dir, "up", "--router")
	t.Logf("the up:\n%s", r)
	if !strings.Contains(r.stdout+r.stderr, "detached") {
		t.Errorf("the up does not say it detached the policy and attached it again:\n%s", r)
	}
	pc, after := linkedPrimary(t, dir)
	if pc != "PriceClass_200" {
		t.Errorf("the primary runs price class %q, want PriceClass_200", pc)
	}
	if after != policy {
		t.Errorf("the primary is attached to %q after the change, want its policy %q again", after, policy)
	}
	// Nothing left to do: the next up changes nothing.
	r = mustRun(t, dir, "up", "--router", "-o", "json")
	if strings.Contains(r.stdout, "detached") {
		t.Errorf("a second up ran the unlink sequence again:\n%s", r)
	}
}
