// Package executortest holds the test doubles every gated-change machine's
// tests share (the executor's, the router canary's, the rotation's). It
// imports nothing of the executor, so the executor's own tests use it too.
package executortest

import (
	"sync"
	"time"
)

// Clock is virtual time (an executor.Clock) that jumps forward whenever
// the code under test waits, so an hour's bake runs in microseconds and
// deterministically.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the virtual time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// After moves the clock on by d and returns a channel that already holds
// the new time.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.t
	return ch
}

// Advance moves the clock on by d (time passing while nobody waits).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
