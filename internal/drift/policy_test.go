package drift

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/drift/bad/*.txtar")

var fleetCells = []string{"cell-a", "cell-b", "cell-c", "cell-d"}

// Every malformed policy is refused with exactly the messages in its
// case's want section: file:line: field: what is wrong and what is
// allowed, every problem at once.
func TestMalformedPolicies(t *testing.T) {
	files, err := filepath.Glob("../../testdata/drift/bad/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var data []byte
			want := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "drift.yaml":
					data = f.Data
				case "want":
					want = i
				}
			}
			if data == nil || want < 0 {
				t.Fatal("a case needs a drift.yaml and a want section")
			}
			pol, err := ParsePolicy("stacks/drift.yaml", data, "cells", fleetCells)
			if err == nil {
				t.Fatalf("accepted: %+v", pol)
			}
			if pol != nil {
				t.Errorf("a refused policy must not be returned half-parsed: %+v", pol)
			}
			got := err.Error() + "\n"
			if *update {
				ar.Files[want].Data = []byte(got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if string(ar.Files[want].Data) != got {
				t.Errorf("messages differ (go test ./internal/drift -run TestMalformedPolicies -update rewrites them)\ngot:\n%s\nwant:\n%s", got, ar.Files[want].Data)
			}
		})
	}
}

func TestPolicyParsesExceptionsAndIgnores(t *testing.T) {
	pol, err := ParsePolicy("stacks/drift.yaml", []byte(`exceptions:
  - cell: cell-c
    key: cells:taskCpu
    reason: load test until Friday
cloud:
  ignore:
    - type: aws:ecs/service:Service
      property: desiredCount
      reason: application autoscaling sets it
    - type: aws:sqs/queue:Queue
      property: tags
      reason: the finance team tags queues
`), "cells", fleetCells)
	if err != nil {
		t.Fatal(err)
	}
	ex := pol.Excepted("cell-c", "taskCpu")
	if ex == nil || ex.Reason != "load test until Friday" || ex.Line != 2 {
		t.Fatalf("exception (namespace dropped, line kept): %+v", ex)
	}
	if pol.Excepted("cell-b", "taskCpu") != nil {
		t.Error("an exception is for its cell only")
	}
	for _, c := range []struct {
		typ, prop string
		ignored   bool
	}{
		{"aws:ecs/service:Service", "desiredCount", true},
		{"aws:ecs/service:Service", "desiredCountX", false},
		{"aws:ecs/service:Service", "taskDefinition", false},
		{"aws:ecs/cluster:Cluster", "desiredCount", false},
		{"aws:sqs/queue:Queue", "tags.owner", true},
		{"aws:sqs/queue:Queue", "tags", true},
		{"aws:sqs/queue:Queue", "tagsAll", false},
	} {
		if got := pol.Ignored(c.typ, c.prop) != nil; got != c.ignored {
			t.Errorf("Ignored(%s, %s) = %v, want %v", c.typ, c.prop, got, c.ignored)
		}
	}
}

func TestEmptyPolicy(t *testing.T) {
	pol, err := ParsePolicy("stacks/drift.yaml", nil, "cells", fleetCells)
	if err != nil || len(pol.Exceptions)+len(pol.Ignore) != 0 {
		t.Fatalf("an empty file is an empty policy: %+v %v", pol, err)
	}
	var none *Policy
	if none.Excepted("cell-a", "image") != nil || none.Ignored("t", "p") != nil {
		t.Error("a nil policy excepts and ignores nothing")
	}
}
