package waves

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEExampleParses keeps the worked example in README.md true.
func TestREADMEExampleParses(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "### Waves and gates")
	if !ok {
		t.Fatal("README has no \"Waves and gates\" section")
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("no yaml example in the section")
	}
	p, err := Parse("README.md", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate([]string{"cell-a", "cell-b", "cell-c", "cell-d"}); err != nil {
		t.Fatal(err)
	}
	if w := p.Waves[2]; w.Parallel != 1 || w.Gate.PromoteIf.P99LatencyMs.Value != 600 || w.Gate.PromoteIf.HealthyTasks.Value != 2 {
		t.Errorf("wave-2 %+v", w)
	}
}
