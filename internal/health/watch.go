package health

import (
	"context"
	"fmt"
	"time"
)

// Err is the report's outcome: nil when no cell has findings, otherwise an
// error counting them (the command wraps it as findings, exit 2).
func (r Report) Err() error {
	switch {
	case r.Findings == 0 && r.Canary == nil:
		return nil
	case r.Findings == 0:
		return fmt.Errorf("the router has a finding: %s", r.Canary.Finding)
	case r.Canary != nil:
		return fmt.Errorf("%d of %d cells have findings; worst: %s; and the router has one: %s", r.Findings, len(r.Cells), r.Worst, r.Canary.Finding)
	}
	return fmt.Errorf("%d of %d cells have findings; worst: %s", r.Findings, len(r.Cells), r.Worst)
}

// Watch reads the fleet every interval until ctx ends and hands each
// complete report to draw (internal/render/healthview draws it: the table
// in place on a terminal, a line per update otherwise). It returns the
// last complete report (its Err decides the exit code). ctx should end on
// the first interrupt (cmdutil.Graceful).
func Watch(ctx context.Context, interval time.Duration, read func(context.Context) Report, draw func(Report), after func(time.Duration) <-chan time.Time) Report {
	if after == nil {
		after = time.After
	}
	var last Report
	for n := 0; ; n++ {
		r := read(ctx)
		if ctx.Err() != nil {
			// Interrupted mid-read: what was cut short is not a reading.
			if n == 0 {
				return r
			}
			return last
		}
		last = r
		draw(last)
		select {
		case <-ctx.Done():
			return last
		case <-after(interval):
		}
	}
}
