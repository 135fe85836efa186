package progress

import (
	"sync"
	"testing"
	"time"
)

// Close always draws the final frame (the one the operator is left with),
// even before the first tick, and a second Close does not block or panic.
func TestRedrawerDrawsTheFinalFrameOnClose(t *testing.T) {
	var mu sync.Mutex
	n := 0
	r := StartRedrawer(&mu, time.Hour, func() { n++ }, true)
	r.Close()
	r.Close()
	mu.Lock()
	defer mu.Unlock()
	if n != 1 {
		t.Fatalf("redraws after Close: %d, want exactly the final one", n)
	}
	StartRedrawer(&mu, time.Hour, func() { t.Error("tick false must not draw") }, false).Close()
}
