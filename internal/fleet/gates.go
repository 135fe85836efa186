package fleet

import (
	"github.com/cellctl/cellctl/waves/signal"
)

// alarmKeys are the older per-cell threshold keys, by the signal they set.
var alarmKeys = map[signal.Name]string{
	signal.ErrorRate5xx: "alarm5xxRatePercent",
	signal.P99LatencyMs: "alarmP99LatencyMs",
}

// applyGates hands each cell the promote_if thresholds of its wave's gate,
// so the cell's CloudWatch alarms are built from the very thresholds the
// gate promotes on (spec.Cell.Thresholds). A cell that also sets the older
// alarm key of a signal to a different threshold is an error naming both
// places: one of them would silently lose.
func (l *loader) applyGates(f *Fleet) {
	if f.Waves == nil {
		return
	}
	for _, c := range f.Cells {
		i := f.Waves.WaveOf(c.ID)
		if i < 0 {
			continue // Validate reported it
		}
		w := f.Waves.Waves[i]
		c.Gate = w.Gate.PromoteIf
		legacy := signal.FromAlarmKeys(c.Alarm5xxRatePercent, c.AlarmP99LatencyMs)
		for _, s := range signal.All {
			th := w.Gate.PromoteIf.Get(s.Name)
			key, hasKey := alarmKeys[s.Name]
			if !th.IsSet() || !hasKey || legacy.Get(s.Name) == th {
				continue
			}
			full := f.ConfigKey(key)
			file, line, set := c.File, c.Lines[full], false
			if _, set = c.Lines[full]; !set {
				line, set = f.BaselineLines[full]
				file = ProjectFile
			}
			if !set {
				continue // the key's default, not a choice anyone made
			}
			l.errs.Add(file, line, full, "%s %s disagrees with the gate of wave %q (%s:%d: promote_if.%s %q); the gate sets both the alarm and the promotion threshold: remove %s",
				full, s.Format(legacy.Get(s.Name)), w.Name, f.Waves.File, w.Gate.PromoteIfLines[s.Name], s.Name, s.Format(th), full)
		}
	}
}
