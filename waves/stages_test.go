package waves

import (
	"os"
	"reflect"
	"testing"
	"time"
)

// TestSeedPipelineIsTheSameRollout: the first seed's pipeline shape
// (testdata/waves/seed/pipeline.yaml) reads as the same waves, bakes,
// gates and policies as its waves.yaml spelling, in the same order, plus
// the delays only the pipeline shape can say.
func TestSeedPipelineIsTheSameRollout(t *testing.T) {
	read := func(name string) *Plan {
		t.Helper()
		data, err := os.ReadFile("../testdata/waves/seed/" + name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := p.Validate([]string{"cell-a", "cell-b", "cell-c", "cell-d"}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return p
	}
	stages, waves := read("pipeline.yaml"), read("equivalent.waves.yaml")
	if len(stages.Waves) != len(waves.Waves) {
		t.Fatalf("%d stages, %d waves", len(stages.Waves), len(waves.Waves))
	}
	wantDelay := []time.Duration{0, 10 * time.Minute, 30 * time.Minute}
	for i := range waves.Waves {
		s, w := stages.Waves[i], waves.Waves[i]
		if s.Name != w.Name || !reflect.DeepEqual(s.Cells, w.Cells) || s.Bake != w.Bake || s.Parallel != w.Parallel {
			t.Errorf("stage %d is %s %v bake %s, the wave is %s %v bake %s", i, s.Name, s.Cells, s.Bake, w.Name, w.Cells, w.Bake)
		}
		if !reflect.DeepEqual(s.Gate.PromoteIf, w.Gate.PromoteIf) || s.Gate.OnBreach != w.Gate.OnBreach ||
			s.Gate.OnInconclusive != w.Gate.OnInconclusive || s.Gate.MinRequests != w.Gate.MinRequests || s.Gate.Poll != w.Gate.Poll ||
			!reflect.DeepEqual(s.Gate.Signals, w.Gate.Signals) {
			t.Errorf("stage %s's gate %+v differs from the wave's %+v", s.Name, s.Gate, w.Gate)
		}
		if s.Delay != wantDelay[i] {
			t.Errorf("stage %s: delay %s, want %s", s.Name, s.Delay, wantDelay[i])
		}
		if w.Delay != 0 {
			t.Errorf("wave %s has a delay %s: waves.yaml has no spelling of one", w.Name, w.Delay)
		}
	}
	if got := stages.Waves[2].Gate.OnBreach; got != Halt {
		t.Errorf("rollback_on_failure: false gave on_breach %s, want halt", got)
	}
}
