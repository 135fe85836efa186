package gate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/signal"
)

// Clock is the time source of a bake; tests pass a fake one so a 30-minute
// bake runs in microseconds.
type Clock interface {
	Now() time.Time
	// After waits like time.After.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// RealClock is the wall clock.
var RealClock Clock = realClock{}

// Decision is what the rollout does after a bake.
type Decision string

const (
	// Promote: the wave passed; the next one may start.
	Promote Decision = "promote"
	// RollBack: a cell breached and the gate's on_breach is
	// halt_and_rollback_wave: restore the wave's cells, then halt.
	RollBack Decision = "rollback"
	// Halt: stop the rollout and leave the wave as it is (on_breach: halt,
	// or an inconclusive bake with on_inconclusive: halt).
	Halt Decision = "halt"
)

// Result is the outcome of a bake.
type Result struct {
	Decision Decision `json:"decision"`
	// Verdict is the gate's judgement: pass, breach or inconclusive.
	Verdict Verdict `json:"verdict"`
	// Reason says which cell, signal, reading and threshold decided.
	Reason string `json:"reason"`
	// Decisive are the polls that decided (the breaching or inconclusive
	// cells' last polls; every cell's last poll on a pass).
	Decisive []Poll `json:"decisive"`
	// Polls is every poll of every cell, in order.
	Polls []Poll `json:"polls"`
}

// Bake polls a wave's cells every gate poll interval until the bake ends or
// a cell breaches. All durations come from the gate and the wave, the clock
// is injected: nothing here sleeps on the wall clock by itself.
type Bake struct {
	Reader Reader
	Gate   waves.Gate
	// Duration is the wave's bake.
	Duration time.Duration
	Clock    Clock
	// Parallel bounds concurrent reads per poll (0: 8).
	Parallel int
	// Signals are the signals judged (nil: the cell signals, see
	// Checker.Signals); a router canary bakes signal.Edge.
	Signals []signal.Signal
	// OnPoll receives each cell's poll as soon as it is judged, so the
	// executor can append it to the rollout record and show progress. An
	// error stops the bake (a record that cannot be written must not be
	// skipped).
	OnPoll func(Poll) error
}

// Run bakes targets from start (the moment the wave's last update ended;
// on a resumed rollout, the recorded start). Each poll reads the window
// [start, now). It returns early on the first breach. A zero bake still
// polls once.
func (b *Bake) Run(ctx context.Context, targets []Target, start time.Time) (Result, error) {
	clock := b.Clock
	if clock == nil {
		clock = RealClock
	}
	poll := b.Gate.Poll
	if poll <= 0 {
		poll = waves.DefaultPoll
	}
	end := start.Add(b.Duration)
	checker := &Checker{Reader: b.Reader, Gate: b.Gate, Signals: b.Signals}
	var res Result
	for {
		now := clock.Now()
		next := nextTick(start, end, now, poll)
		if wait := next.Sub(now); wait > 0 {
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-clock.After(wait):
			}
		}
		at := clock.Now()
		if at.After(end) && next.Equal(end) {
			// Read exactly the bake: a late wake-up must not widen the
			// final window beyond what the operator configured.
			at = end
		}
		polls, err := b.pollAll(ctx, checker, targets, start, at)
		res.Polls = append(res.Polls, polls...)
		if err != nil {
			return res, err
		}
		var breached []Poll
		for _, p := range polls {
			if p.Verdict == Breach {
				breached = append(breached, p)
			}
		}
		if len(breached) > 0 {
			res.Verdict, res.Decisive = Breach, breached
			res.Decision = RollBack
			if b.Gate.OnBreach == waves.Halt {
				res.Decision = Halt
			}
			res.Reason = summarize(breached)
			return res, nil
		}
		if !at.Before(end) {
			return conclude(res, polls, b.Gate), nil
		}
	}
}

// nextTick is the next poll time after now: every poll interval from
// start, and the end of the bake itself.
func nextTick(start, end, now time.Time, poll time.Duration) time.Time {
	if !now.Before(end) {
		return now
	}
	k := now.Sub(start)/poll + 1
	if k < 1 {
		k = 1
	}
	next := start.Add(k * poll)
	if next.After(end) {
		return end
	}
	return next
}

func (b *Bake) pollAll(ctx context.Context, c *Checker, targets []Target, start, at time.Time) ([]Poll, error) {
	polls := make([]Poll, len(targets))
	g, gctx := errgroup.WithContext(ctx)
	limit := b.Parallel
	if limit <= 0 {
		limit = 8
	}
	g.SetLimit(limit)
	for i, t := range targets {
		g.Go(func() error {
			polls[i] = c.Check(gctx, t, start, at)
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, p := range polls {
		if b.OnPoll != nil {
			if err := b.OnPoll(p); err != nil {
				return polls, fmt.Errorf("recording the gate's poll of %s: %w", p.Cell, err)
			}
		}
	}
	return polls, nil
}

// conclude judges the final poll of a bake that saw no breach.
func conclude(res Result, final []Poll, g waves.Gate) Result {
	var unsure []Poll
	for _, p := range final {
		if p.Verdict == Inconclusive {
			unsure = append(unsure, p)
		}
	}
	if len(unsure) == 0 {
		res.Verdict, res.Decision, res.Decisive = Pass, Promote, final
		res.Reason = fmt.Sprintf("%d cell(s) passed every signal", len(final))
		return res
	}
	res.Verdict, res.Decisive = Inconclusive, unsure
	res.Reason = summarize(unsure)
	if g.OnInconclusive == waves.InconclusivePromote {
		res.Decision = Promote
		res.Reason += " (on_inconclusive: promote)"
	} else {
		res.Decision = Halt
		res.Reason += " (on_inconclusive: halt)"
	}
	return res
}

func summarize(polls []Poll) string {
	sort.SliceStable(polls, func(i, j int) bool { return polls[i].Cell < polls[j].Cell })
	parts := make([]string, len(polls))
	for i, p := range polls {
		parts[i] = p.Summary()
	}
	return strings.Join(parts, "; ")
}
