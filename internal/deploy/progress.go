package deploy

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/executor"
)

// Lines is live progress as one line per step (stderr; colour only when
// the styles allow it): per wave and cell — updating, baking (time left,
// last readings), passed, breached, rolling back, rolled back.
type Lines struct {
	W      io.Writer
	Styles *render.Styles
	mu     sync.Mutex
}

// Event implements executor.Progress.
func (l *Lines) Event(e executor.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.Styles
	where := e.Wave
	if e.Cell != "" {
		where += " " + e.Cell
	}
	var text string
	switch e.Kind {
	case executor.Baking:
		text = fmt.Sprintf("baking, %s left", e.Left.Round(time.Second))
		if r := readings(e.Verdicts); r != "" {
			text += ": " + r
		}
	case executor.WaveBreached:
		text = s.Bad("breached")
		if e.Breach != nil {
			text += ": " + e.Breach.String()
		}
	case executor.WavePassed, executor.RolloutComplete, executor.CellUpdated:
		text = s.Good(string(e.Kind))
	case executor.CellFailed, executor.RollingBack:
		text = s.Warn(string(e.Kind))
	default:
		text = string(e.Kind)
	}
	if e.Message != "" {
		text += ": " + e.Message
	}
	if e.Err != nil {
		text += ": " + e.Err.Error()
	}
	if where != "" {
		fmt.Fprintf(l.W, "%s  %s\n", s.Bold(strings.TrimSpace(where)), text)
		return
	}
	fmt.Fprintln(l.W, text)
}

func readings(vs []executor.Verdict) string {
	var parts []string
	for _, v := range vs {
		var rs []string
		for _, r := range v.Readings {
			rs = append(rs, r.Signal+" "+r.Value)
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", v.Cell, v.Decision, strings.Join(rs, ", ")))
	}
	return strings.Join(parts, "; ")
}
