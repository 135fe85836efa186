package store

import (
	"strings"
	"testing"
)

func TestCheckFault(t *testing.T) {
	stacks := []string{"cell-a", "cell-b", "router"}
	for _, ok := range []Fault{
		{Times: 1},
		{Stack: "cell-a", Op: OpCreate, Type: "rds/cluster", Name: "cell-a-*", Times: 2},
		{Stack: "b", Type: "aws:sqs/queue:Queue", Always: true},
		{Stack: "router", Type: "cloudfront/distribution", Times: 1},
	} {
		if err := CheckFault(ok, stacks); err != nil {
			t.Errorf("%+v refused: %v", ok, err)
		}
	}
	for _, c := range []struct {
		f    Fault
		want string
	}{
		{Fault{Stack: "cell-z", Times: 1}, `unknown cell or stack "cell-z": the fleet's stacks are cell-a, cell-b, router`},
		{Fault{Type: "rds/clusterz", Times: 1}, `unknown resource type "rds/clusterz"`},
		{Fault{Type: "aws:rds/cluster:Clustr", Times: 1}, `unknown resource type "aws:rds/cluster:Clustr"`},
		{Fault{Name: "cell-a-[", Times: 1}, `bad name pattern "cell-a-[": syntax error in pattern`},
		// matchType has no bare-name form: such a fault would never fire.
		{Fault{Type: "Distribution", Times: 1}, `unknown resource type "Distribution"`},
		{Fault{Times: 0}, "times must be at least 1, got 0 (use --always"},
		{Fault{Times: -3}, "times must be at least 1, got -3"},
		{Fault{Op: "explode", Times: 1}, `invalid operation "explode"`},
	} {
		err := CheckFault(c.f, stacks)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.f, err, c.want)
		}
	}
}
