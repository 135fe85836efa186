package awsmodel

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

func runtimeFn(runtime string) resource.PropertyMap {
	return resource.PropertyMap{"name": pv("edge"), "role": pv("arn:aws:iam::123456789012:role/edge"), "runtime": pv(runtime),
		"handler": pv("index.handler"), "code": resource.NewArchiveProperty(mustArchive(map[string]any{"index.js": mustAsset("x")}))}
}

// runtimeCases: nodejs20.x after its block dates (Lambda Developer Guide:
// new functions blocked from 2026-08-31, updates from 2026-09-30).
func runtimeCases() []ruleCase {
	return []ruleCase{
		{rule: "lambda.runtime-blocked", typ: tFunction, at: day("2026-09-01"), bad: runtimeFn("nodejs20.x"), ok: runtimeFn("nodejs24.x"),
			contains: "The runtime parameter of nodejs20.x is no longer supported for creating or updating AWS Lambda functions"},
		{rule: "lambda.runtime-blocked", typ: tFunction, at: day("2026-12-07"), op: OpUpdate, old: runtimeFn("nodejs20.x"),
			bad: runtimeFn("nodejs20.x"), ok: runtimeFn("nodejs22.x"), contains: "no longer supported"},
	}
}

// TestLambdaRuntimeBlockDates: between the two block dates a create is
// refused and an update of a deployed function is not; after the second
// both are; before the first neither is.
func TestLambdaRuntimeBlockDates(t *testing.T) {
	rule, _ := RuleByID("lambda.runtime-blocked")
	judge := func(at string, op int) string {
		return rule.check(ruleInput{typ: tFunction, in: runtimeFn("nodejs20.x"), env: DefaultEnv(), op: op, at: day(at)})
	}
	for _, c := range []struct {
		at      string
		op      int
		blocked bool
	}{
		{"2026-08-30", OpCreate, false}, {"2026-08-31", OpCreate, true},
		{"2026-09-29", OpUpdate, false}, {"2026-09-30", OpUpdate, true},
		{"2026-09-15", OpUpdate, false}, {"2026-09-15", OpCreate, true},
	} {
		if got := judge(c.at, c.op) != ""; got != c.blocked {
			t.Errorf("nodejs20.x at %s (op %d): blocked %v, want %v", c.at, c.op, got, c.blocked)
		}
	}
	if msg := rule.check(ruleInput{typ: tFunction, in: runtimeFn("nodejs20.x"), env: DefaultEnv()}); msg != "" {
		t.Errorf("no date to judge at: got %q, want no judgement", msg)
	}
}

// TestBlockedRuntimeRefusedAtTheMocksClock: the mocks report MockTime as
// every timestamp but judge a runtime at the clock JudgeAt gives them, so
// an offline render refuses what Lambda refuses on the day it runs.
func TestBlockedRuntimeRefusedAtTheMocksClock(t *testing.T) {
	m := NewMock(Env{})
	if _, _, err := m.NewResource(tFunction, "before", runtimeFn("nodejs20.x"), ""); err != nil {
		t.Fatalf("at MockTime (%s) nodejs20.x is accepted: %v", MockTime.Format("2006-01-02"), err)
	}
	m.JudgeAt(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC))
	_, _, err := m.NewResource(tFunction, "after", runtimeFn("nodejs20.x"), "")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != "InvalidParameterValueException" || ae.Operation != "CreateFunction" {
		t.Fatalf("got %v, want InvalidParameterValueException from CreateFunction", err)
	}
	_, outs, err := m.NewResource(tFunction, "supported", runtimeFn("nodejs24.x"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := str(outs, "lastModified"); !strings.HasPrefix(got, "2025-01-01") {
		t.Errorf("lastModified %q: the timestamps stay MockTime", got)
	}
}

func TestLambdaRuntimeNotice(t *testing.T) {
	rt, _ := LookupLambdaRuntime("nodejs22.x")
	at := day("2027-01-30")
	if n := rt.Notice(at.Add(-24*time.Hour), 90*24*time.Hour); n != "" {
		t.Errorf("91 days before the deprecation: got %q, want no notice", n)
	}
	n := rt.Notice(at, 90*24*time.Hour)
	for _, want := range []string{"nodejs22.x", "deprecated from 2027-04-30", "new functions blocked from 2027-06-01", "updates blocked from 2027-07-01", "Node.js"} {
		if !strings.Contains(n, want) {
			t.Errorf("notice %q lacks %q", n, want)
		}
	}
	rt, _ = LookupLambdaRuntime("nodejs20.x")
	if n := rt.Notice(day("2026-06-01"), 90*24*time.Hour); !strings.Contains(n, "deprecated since 2026-04-30") {
		t.Errorf("a passed date reads since: %q", n)
	}
}

// TestLambdaRuntimeTable: every row is cited and its dates run in order.
func TestLambdaRuntimeTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range LambdaRuntimes {
		if seen[r.ID] {
			t.Errorf("%s twice", r.ID)
		}
		seen[r.ID] = true
		if !strings.Contains(r.Doc, "Lambda Developer Guide") {
			t.Errorf("%s: no citation", r.ID)
		}
		if r.BlockCreate.Before(r.Deprecated) || r.BlockUpdate.Before(r.BlockCreate) {
			t.Errorf("%s: dates out of order: %v %v %v", r.ID, r.Deprecated, r.BlockCreate, r.BlockUpdate)
		}
	}
}
