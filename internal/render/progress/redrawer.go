package progress

import (
	"sync"
	"time"
)

// Redrawer is the clock of a live display: it calls redraw under mu every
// interval until Close, then once more, so the final frame stays on
// screen. The run progress (Display) and the rollout display
// (internal/render/deployview) share it, and draw through Frame.
type Redrawer struct {
	stop, done chan struct{}
}

// StartRedrawer starts the redraw loop; with tick false it starts none
// (tests draw their frames themselves) and Close returns at once.
func StartRedrawer(mu *sync.Mutex, interval time.Duration, redraw func(), tick bool) *Redrawer {
	r := &Redrawer{stop: make(chan struct{}), done: make(chan struct{})}
	if !tick {
		close(r.done)
		return r
	}
	go func() {
		defer close(r.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				mu.Lock()
				redraw()
				mu.Unlock()
				return
			case <-t.C:
				mu.Lock()
				redraw()
				mu.Unlock()
			}
		}
	}()
	return r
}

// Close stops the loop after its final redraw; calling it again is safe.
func (r *Redrawer) Close() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
}
