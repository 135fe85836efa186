package executor

import (
	"testing"
	"time"
)

// Newest picks the last started record of a kind, and agrees with the
// first of that kind in NewestFirst's order.
func TestNewestOfAKind(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 12, 7, h, 0, 0, 0, time.UTC) }
	recs := []*Record{
		{ID: "s-1", Kind: KindRotation, Started: at(1)},
		{ID: "r-1", Kind: KindRollout, Started: at(4)},
		{ID: "s-3", Kind: KindRotation, Started: at(3)},
		{ID: "s-2", Kind: KindRotation, Started: at(2)},
	}
	if got := Newest(recs, KindRotation); got == nil || got.ID != "s-3" {
		t.Fatalf("newest rotation: %+v", got)
	}
	if got := Newest(recs, KindCanary); got != nil {
		t.Fatalf("no canary record, got %+v", got)
	}
	for _, r := range NewestFirst(append([]*Record(nil), recs...)) {
		if r.Kind == KindRotation {
			if r.ID != "s-3" {
				t.Fatalf("NewestFirst's first rotation is %s", r.ID)
			}
			break
		}
	}
}
