package store

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/awsmodel"
)

// CheckFault refuses a fault that could never fire or is not what the
// operator meant, before it is stored: a stack that is not one of stacks
// (the fleet's stack names; nil skips that check), an operation or resource
// type the simulator does not have, a malformed name glob, or a fault that
// fails fewer than one operation. A fault that silently never matches
// makes a rehearsal pass that should have failed.
func CheckFault(f Fault, stacks []string) error {
	var problems []string
	if f.Stack != "" && stacks != nil && !slices.ContainsFunc(stacks, func(s string) bool { return MatchStack(f.Stack, s) }) {
		problems = append(problems, fmt.Sprintf("unknown cell or stack %q: the fleet's stacks are %s", f.Stack, strings.Join(stacks, ", ")))
	}
	if f.Op != "" && !slices.Contains([]string{OpCreate, OpUpdate, OpDelete, OpRead, OpAny}, f.Op) {
		problems = append(problems, fmt.Sprintf("invalid operation %q: use create, update, delete, read or *", f.Op))
	}
	if f.Type != "" && !slices.ContainsFunc(awsmodel.Types(), func(t string) bool { return matchType(f.Type, t) }) {
		problems = append(problems, fmt.Sprintf("unknown resource type %q: use a type token such as aws:rds/cluster:Cluster or a short form such as rds/cluster, rds:Cluster or rds.Cluster (a bare \"Cluster\" matches nothing)", f.Type))
	}
	if f.Name != "" {
		if _, err := path.Match(f.Name, ""); err != nil {
			problems = append(problems, fmt.Sprintf("bad name pattern %q: %v (globs use *, ? and [a-z] classes)", f.Name, err))
		}
	}
	if !f.Always && f.Times < 1 {
		problems = append(problems, fmt.Sprintf("times must be at least 1, got %d (use --always to fail every matching operation)", f.Times))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("sim fault: %s", strings.Join(problems, "; "))
}
