package runplan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cellctl/cellctl/internal/stackrun"
)

// Describe writes the plan as indented text, one line per step: what
// `--dry-run` prints.
func (p *Plan) Describe(w io.Writer) error {
	// A stack can take more than one step (a destroy that lifts the
	// protection first is an up, then the destroy): count the stacks.
	steps := p.Stacks()
	distinct := map[string]bool{}
	for _, s := range steps {
		distinct[s.Stack] = true
	}
	n := len(distinct)
	noun := "stacks"
	if n == 1 {
		noun = "stack"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %s %d %s", p.Operation, n, noun)
	if len(steps) > n {
		fmt.Fprintf(&b, " in %d steps", len(steps))
	}
	b.WriteString("\n")
	describe(&b, p.Root, 1)
	_, err := io.WriteString(w, b.String())
	return err
}

func describe(b *strings.Builder, s Step, depth int) {
	ind := strings.Repeat("  ", depth)
	switch s := s.(type) {
	case *Seq:
		policy := "stop at the first failure"
		if s.KeepGoing {
			policy = "every step, even after a failure"
		}
		fmt.Fprintf(b, "%sin order (%s):\n", ind, policy)
		for _, c := range s.Steps {
			describe(b, c, depth+1)
		}
	case *Par:
		limit := max(s.Limit, 1)
		fmt.Fprintf(b, "%sin parallel (at most %d at once; a failure does not stop the others):\n", ind, limit)
		for _, c := range s.Steps {
			describe(b, c, depth+1)
		}
	case *Stack:
		fmt.Fprintf(b, "%s%s\n", ind, stackLine(s))
	case *Task:
		fmt.Fprintf(b, "%s%s\n", ind, s.Name)
	}
}

func stackLine(s *Stack) string {
	line := string(s.Op) + " " + s.Stack
	var notes []string
	if s.Refresh {
		notes = append(notes, "refresh first")
	}
	if s.Inputs.ReleaseProtection {
		notes = append(notes, "releasing the protection of its stateful resources")
	}
	if s.Inputs.Cell != nil {
		notes = append(notes, "deploying a given configuration, not its stack file's")
	}
	if s.Expected > 0 {
		notes = append(notes, fmt.Sprintf("%d resources", s.Expected))
	}
	if s.BlockedBy != "" {
		notes = append(notes, s.BlockedBy)
	}
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, "; ") + ")"
	}
	return line
}

// stepJSON is the -o json shape of a step.
type stepJSON struct {
	Kind      string             `json:"kind"`
	Stack     string             `json:"stack,omitempty"`
	Operation stackrun.Operation `json:"operation,omitempty"`
	Refresh   bool               `json:"refresh,omitempty"`
	Release   bool               `json:"releaseProtection,omitempty"`
	Given     bool               `json:"givenConfiguration,omitempty"`
	Expected  int                `json:"expectedResources,omitempty"`
	BlockedBy string             `json:"blockedBy,omitempty"`
	Name      string             `json:"name,omitempty"`
	Limit     int                `json:"limit,omitempty"`
	KeepGoing *bool              `json:"keepGoing,omitempty"`
	Steps     []stepJSON         `json:"steps,omitempty"`
}

func toJSON(s Step) stepJSON {
	switch s := s.(type) {
	case *Seq:
		j := stepJSON{Kind: "sequence", KeepGoing: &s.KeepGoing}
		for _, c := range s.Steps {
			j.Steps = append(j.Steps, toJSON(c))
		}
		return j
	case *Par:
		j := stepJSON{Kind: "parallel", Limit: max(s.Limit, 1)}
		for _, c := range s.Steps {
			j.Steps = append(j.Steps, toJSON(c))
		}
		return j
	case *Stack:
		return stepJSON{Kind: "stack", Stack: s.Stack, Operation: s.Op, Refresh: s.Refresh,
			Release: s.Inputs.ReleaseProtection, Given: s.Inputs.Cell != nil, Expected: s.Expected, BlockedBy: s.BlockedBy}
	case *Task:
		return stepJSON{Kind: "task", Name: s.Name}
	}
	return stepJSON{Kind: "unknown"}
}

// MarshalJSON writes the plan as a tree of steps (`--dry-run -o json`).
func (p *Plan) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Operation stackrun.Operation `json:"operation"`
		Root      stepJSON           `json:"root"`
	}{p.Operation, toJSON(p.Root)})
}
