package health

import (
	"context"
	"fmt"
	"github.com/cellctl/cellctl/internal/fleet"
	"testing"
	"time"
)

// BenchmarkRead100Cells: one reading of a 100-cell fleet over a 15-minute
// window against an in-memory CloudWatch (the view's own cost: judging,
// sorting, the fleet average; the API calls are what a real run waits on).
func BenchmarkRead100Cells(b *testing.B) {
	f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{}}
	var ids []string
	for i := 0; i < 100; i++ {
		ids = append(ids, fmt.Sprintf("cell-%03d", i))
	}
	ts := fleetOf(f, ids...)
	o := Options{Now: now, Since: 15 * time.Minute, Reader: func(context.Context, fleet.Access) (Reader, error) { return f, nil }}
	b.ReportAllocs()
	for b.Loop() {
		f.asked = f.asked[:0]
		Read(context.Background(), ts, o)
	}
}
