package runplan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/stackrun"
)

func TestDescribeUp(t *testing.T) {
	p := ForStacks(stackrun.OpUp, []string{"router", "cell-a", "cell-b"}, BuildOptions{Parallel: 4, Refresh: true,
		Expected: map[string]int{"cell-a": 72, "cell-b": 76, "router": 14}})
	var b strings.Builder
	if err := p.Describe(&b); err != nil {
		t.Fatal(err)
	}
	want := `plan: up 3 stacks
  in order (stop at the first failure):
    in parallel (at most 4 at once; a failure does not stop the others):
      up cell-a (refresh first; 72 resources)
      up cell-b (refresh first; 76 resources)
    up router (refresh first; 14 resources; the router is updated only after all its cells succeed)
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestDescribeDestroyWithRelease(t *testing.T) {
	p := &Plan{Operation: stackrun.OpDestroy, Root: &Seq{Steps: []Step{
		&Stack{Request: stackrun.Request{Stack: "cell-d", Op: stackrun.OpUp, Inputs: stackrun.Inputs{ReleaseProtection: true}}},
		&Stack{Request: stackrun.Request{Stack: "cell-d", Op: stackrun.OpDestroy}},
	}}}
	var b strings.Builder
	p.Describe(&b)
	want := "plan: destroy 1 stack in 2 steps\n  in order (stop at the first failure):\n" +
		"    up cell-d (releasing the protection of its stateful resources)\n    destroy cell-d\n"
	if b.String() != want {
		t.Fatalf("got:\n%s", b.String())
	}
}

func TestSingleStackPlanHasNoWrappers(t *testing.T) {
	p := ForStacks(stackrun.OpDestroy, []string{"cell-d"}, BuildOptions{Parallel: 4})
	if _, ok := p.Root.(*Stack); !ok {
		t.Fatalf("root = %T", p.Root)
	}
	var b strings.Builder
	p.Describe(&b)
	if b.String() != "plan: destroy 1 stack\n  destroy cell-d\n" {
		t.Fatalf("%q", b.String())
	}
}

func TestPlanJSON(t *testing.T) {
	p := ForStacks(stackrun.OpPreview, []string{"cell-a", "router"}, BuildOptions{Parallel: 3})
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"operation":"preview","root":{"kind":"sequence","keepGoing":true,"steps":[` +
		`{"kind":"stack","stack":"cell-a","operation":"preview"},` +
		`{"kind":"stack","stack":"router","operation":"preview"}]}}`
	if string(data) != want {
		t.Fatalf("got  %s\nwant %s", data, want)
	}
}
