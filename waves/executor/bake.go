package executor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cellctl/cellctl/waves"
)

// BakeSpec is one bake: the cells (or the router) a gated step changed,
// judged over [Start, now) every Poll until Duration has passed.
type BakeSpec struct {
	// Step names what bakes, for the gate (a wave's name picks the wave's
	// own gate) and for messages.
	Step  string
	Cells []string
	// Start is the moment the step's change finished — on a resumed run,
	// the recorded one, so a bake resumed after a crash still judges the
	// time nobody was watching.
	Start    time.Time
	Duration time.Duration
	Poll     time.Duration
}

// BakeResult is how a bake that ran to its end (or to a breach) came out.
type BakeResult struct {
	// Decision is waves.Pass, waves.Breached or waves.Inconclusive; the
	// caller applies its on_inconclusive policy to an inconclusive end.
	Decision waves.Decision
	// Breach is the first breach in cell order (Decision Breached).
	Breach *Breach
	// Reason says why an inconclusive bake was inconclusive.
	Reason string
	// Verdicts are the last poll's.
	Verdicts []Verdict
}

// Baker runs the one bake loop of every gated change — a wave's cells, a
// router canary's phase, a rotation step: wait a poll, read the gate over
// the window since the bake started, record the poll, stop at the first
// breach, judge the last poll when the bake is over. The gate fails closed
// (judge), and a poll that cannot be recorded stops the bake: a record
// that no longer says where the change is must not be skipped.
type Baker struct {
	Gate  Gate
	Clock Clock
	// Stop, when closed, ends the bake at the next wait (ErrStopped).
	Stop <-chan struct{}
	// Steer is a second Stop: closed when an operator asked the change to
	// pause or abort (`cellctl rollout pause|abort`).
	Steer <-chan struct{}
	// Waiting, when set, is told before each wait the time left and the
	// last poll's verdicts (progress).
	Waiting func(left time.Duration, last []Verdict)
	// Record saves a poll before it is acted on; an error ends the bake.
	Record func(Poll) error
}

// Bake runs one bake. An error says the bake did not finish: ctx was
// cancelled, Stop was closed (wrapping ErrStopped), or a poll could not be
// recorded; the message says how much was left.
func (b Baker) Bake(ctx context.Context, s BakeSpec) (BakeResult, error) {
	clock := b.Clock
	if clock == nil {
		clock = RealClock{}
	}
	var last []Verdict
	for {
		left := s.Duration - clock.Now().Sub(s.Start)
		if left > 0 {
			if b.Waiting != nil {
				b.Waiting(left, last)
			}
			// Checked first: select picks among ready cases at random.
			if err := ctx.Err(); err != nil {
				return BakeResult{}, fmt.Errorf("%s interrupted while baking (%s left): %w", s.Step, left.Round(time.Second), err)
			}
			if stopped(b.Stop) || stopped(b.Steer) {
				return BakeResult{}, fmt.Errorf("%s stopped while baking (%s left): %w", s.Step, left.Round(time.Second), ErrStopped)
			}
			wait := left
			if s.Poll > 0 {
				wait = min(s.Poll, left)
			}
			select {
			case <-ctx.Done():
				return BakeResult{}, fmt.Errorf("%s interrupted while baking (%s left): %w", s.Step, left.Round(time.Second), ctx.Err())
			case <-b.Stop:
				return BakeResult{}, fmt.Errorf("%s stopped while baking (%s left): %w", s.Step, left.Round(time.Second), ErrStopped)
			case <-b.Steer:
				return BakeResult{}, fmt.Errorf("%s stopped while baking (%s left): %w", s.Step, left.Round(time.Second), ErrStopped)
			case <-clock.After(wait):
			}
		}
		now := clock.Now().UTC()
		verdicts, gateErr := b.Gate.Check(ctx, GateQuery{Wave: s.Step, Cells: s.Cells, Start: s.Start, End: now})
		if gateErr != nil && ctx.Err() != nil {
			return BakeResult{}, fmt.Errorf("%s interrupted while baking: %w", s.Step, ctx.Err())
		}
		verdicts = judge(s.Cells, verdicts, gateErr)
		last = verdicts
		poll := Poll{At: now, Verdicts: verdicts}
		if gateErr != nil {
			poll.Error = gateErr.Error()
		}
		if b.Record != nil {
			if err := b.Record(poll); err != nil {
				return BakeResult{}, err
			}
		}
		if br := firstBreach(verdicts); br != nil {
			return BakeResult{Decision: waves.Breached, Breach: br, Verdicts: verdicts}, nil
		}
		if clock.Now().Sub(s.Start) < s.Duration {
			continue
		}
		if reason := inconclusive(verdicts); reason != "" {
			return BakeResult{Decision: waves.Inconclusive, Reason: reason, Verdicts: verdicts}, nil
		}
		return BakeResult{Decision: waves.Pass, Verdicts: verdicts}, nil
	}
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// judge makes the gate's answer total and fail-closed: a read error
// breaches every cell, and a cell the gate said nothing about breaches.
func judge(cells []string, got []Verdict, gateErr error) []Verdict {
	by := map[string]Verdict{}
	for _, v := range got {
		by[v.Cell] = v
	}
	out := make([]Verdict, 0, len(cells))
	for _, c := range cells {
		v, ok := by[c]
		switch {
		case gateErr != nil:
			v = Verdict{Cell: c, Decision: waves.Breached, Readings: v.Readings,
				Breach: &Breach{Cell: c, Signal: SignalGate, Reading: "unreadable: " + gateErr.Error()}}
		case !ok:
			v = Verdict{Cell: c, Decision: waves.Breached, Breach: &Breach{Cell: c, Signal: SignalGate, Reading: "the gate returned no verdict for the cell"}}
		case v.Decision == waves.Breached && v.Breach == nil:
			v.Breach = &Breach{Cell: c, Signal: SignalGate, Reading: "breach without details"}
		case v.Decision != waves.Pass && v.Decision != waves.Breached && v.Decision != waves.Inconclusive:
			v = Verdict{Cell: c, Decision: waves.Breached, Readings: v.Readings,
				Breach: &Breach{Cell: c, Signal: SignalGate, Reading: fmt.Sprintf("unknown decision %q", v.Decision)}}
		}
		if v.Breach != nil && v.Breach.Cell == "" {
			b := *v.Breach
			b.Cell = c
			v.Breach = &b
		}
		out = append(out, v)
	}
	return out
}

func firstBreach(vs []Verdict) *Breach {
	for _, v := range vs {
		if v.Decision == waves.Breached {
			return v.Breach
		}
	}
	return nil
}

func inconclusive(vs []Verdict) string {
	var parts []string
	for _, v := range vs {
		if v.Decision == waves.Inconclusive {
			reason := v.Reason
			if reason == "" {
				reason = "too little traffic to judge"
			}
			parts = append(parts, v.Cell+": "+reason)
		}
	}
	return strings.Join(parts, "; ")
}
