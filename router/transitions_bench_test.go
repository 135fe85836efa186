package router

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchFleet is 256 cells of weights 1-4 over 65,536 buckets, with a
// uniform load or a random per-bucket one (0-99 units, a few hot buckets).
func benchFleet(b *testing.B, random bool) (*Table, *LoadFigures) {
	b.Helper()
	cells := make([]CellWeight, 256)
	for i := range cells {
		cells[i] = CellWeight{Cell: fmt.Sprintf("cell-%03d", i), Weight: 1 + i%4}
	}
	tb := tableFrom(b, cells, 65536)
	load := tb.TableLoad()
	if random {
		rng := rand.New(rand.NewPCG(7, 7))
		load.Source = "random"
		for i := range load.Buckets {
			load.Buckets[i] = int64(rng.IntN(100))
			if rng.IntN(100) == 0 {
				load.Buckets[i] = 1000 + int64(rng.IntN(5000))
			}
		}
	}
	return tb, load
}

var loadKinds = []struct {
	name   string
	random bool
}{{"uniform", false}, {"random", true}}

func BenchmarkDrain(b *testing.B) {
	for _, k := range loadKinds {
		b.Run(k.name, func(b *testing.B) {
			tb, load := benchFleet(b, k.random)
			victim, _ := tb.Cell("cell-100")
			var tr *Transition
			var err error
			for b.Loop() {
				tr, err = DrainCell(tb, "cell-100", DrainOptions{Load: load})
				if err != nil {
					b.Fatal(err)
				}
			}
			// Any drain moves all the cell's buckets, and only those.
			if tr.MovedBuckets != victim.Buckets.Count() {
				b.Fatalf("moved %d buckets, the cell owns %d", tr.MovedBuckets, victim.Buckets.Count())
			}
			b.ReportMetric(float64(tr.MovedBuckets), "moved")
			b.ReportMetric(float64(victim.Buckets.Count()), "lower-bound")
		})
	}
}

func BenchmarkUndrain(b *testing.B) {
	for _, k := range loadKinds {
		b.Run(k.name, func(b *testing.B) {
			tb, load := benchFleet(b, k.random)
			tr, err := DrainCell(tb, "cell-100", DrainOptions{Load: load})
			if err != nil {
				b.Fatal(err)
			}
			fin, err := MarkDrained(tr.To, "cell-100")
			if err != nil {
				b.Fatal(err)
			}
			s := fin.To.Spec()
			s.Cells[fin.To.cellByID["cell-100"]].State = CellActive
			_, lower, _ := takeTarget(mustNew(b, s), load, "cell-100")
			var back *Transition
			for b.Loop() {
				back, err = Undrain(fin.To, "cell-100", UndrainOptions{Load: load})
				if err != nil {
					b.Fatal(err)
				}
			}
			if back.MovedBuckets != lower || back.LowerBound != lower {
				b.Fatalf("moved %d buckets (reported bound %d), the lower bound is %d", back.MovedBuckets, back.LowerBound, lower)
			}
			b.ReportMetric(float64(back.MovedBuckets), "moved")
			b.ReportMetric(float64(lower), "lower-bound")
		})
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, k := range loadKinds {
		b.Run(k.name, func(b *testing.B) {
			tb, load := benchFleet(b, k.random)
			nc := NewCell{ID: "cell-256", Weight: 2}
			s := tb.Spec()
			s.Cells = append(s.Cells, CellSpec{ID: nc.ID, State: CellActive, Weight: nc.Weight})
			_, lower, _ := takeTarget(mustNew(b, s), load, nc.ID)
			var tr *Transition
			var err error
			for b.Loop() {
				tr, err = AddCell(tb, nc, AddOptions{Take: TakeAuto, Load: load})
				if err != nil {
					b.Fatal(err)
				}
			}
			if tr.MovedBuckets != lower || tr.LowerBound != lower {
				b.Fatalf("moved %d buckets (reported bound %d), the lower bound is %d", tr.MovedBuckets, tr.LowerBound, lower)
			}
			b.ReportMetric(float64(tr.MovedBuckets), "moved")
			b.ReportMetric(float64(lower), "lower-bound")
		})
	}
}
