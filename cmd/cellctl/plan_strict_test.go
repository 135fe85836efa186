package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPlanStrictOnTheDemoFleet: `cellctl plan --strict` runs every AWS
// rule over the demo fleet and finds nothing.
func TestPlanStrictOnTheDemoFleet(t *testing.T) {
	stdout, stderr, code := cellctl(t, "plan", "--dir", "../..", "--strict")
	if code != 0 || !strings.Contains(stdout, "aws rules: ok") {
		t.Fatalf("plan --strict: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = cellctl(t, "plan", "--dir", "../..", "--strict", "-o", "json", "router")
	var doc struct {
		Stacks []json.RawMessage `json:"stacks"`
		Rules  []any             `json:"rules"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil || doc.Rules == nil || len(doc.Rules) != 0 || len(doc.Stacks) != 1 {
		t.Fatalf("plan --strict -o json: exit %d, %s", code, stdout)
	}
}
