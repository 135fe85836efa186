package gate

import (
	"testing"

	"github.com/cellctl/cellctl/waves"
)

// CellCapacityWarning is exported beside the gate's alarms (alarmNames
// "capacity") but is not a gate signal: a cell running hot in ALARM on it
// still promotes a healthy release, and its state is never even asked for.
func TestGateIgnoresTheCapacityAlarm(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	r.alarms["cellctl-cell-a-capacity-warning"] = StateAlarm
	tg := target("cell-a")
	tg.AlarmNames = map[string]string{}
	for k, v := range target("cell-a").AlarmNames {
		tg.AlarmNames[k] = v
	}
	tg.AlarmNames["capacity"] = "cellctl-cell-a-capacity-warning"
	p := check(r, waves.DefaultGate(), tg)
	if p.Verdict != waves.Pass {
		t.Fatalf("a healthy cell in capacity ALARM: %+v, want pass", p)
	}
	for _, rd := range p.Readings {
		if rd.Alarm == "cellctl-cell-a-capacity-warning" {
			t.Errorf("the gate read the capacity alarm: %+v", rd)
		}
	}
}
