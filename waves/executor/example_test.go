package executor

import (
	"context"
	"errors"
	"fmt"
	"github.com/cellctl/cellctl/waves"
	"time"
)

// The deploy command builds a Plan from waves.yaml and the fleet's desired
// cell configurations, wires the adapters, and calls Run; it prints the
// summary whatever happened and maps the error to an exit code.
func ExampleExecutor_Run() {
	before := map[string]CellConfig{"cell-a": {Image: "app:v1"}, "cell-b": {Image: "app:v1"}}
	cells := newCells(before)
	ex := &Executor{
		Updater: cells,                                        // engine seam: up of one cell stack with its config as data
		Gate:    &fakeGate{answer: healthByImage(cells, nil)}, // gate evaluator over CloudWatch
		Store:   newStore(),                                   // rollout records + lock in the Pulumi backend
		Clock:   newClock(),
	}
	wave := func(name, cell string) Wave {
		return Wave{Name: name, Cells: []string{cell}, Bake: 30 * time.Minute,
			Gate: waves.Gate{Poll: 30 * time.Second, OnBreach: waves.HaltAndRollbackWave, OnInconclusive: waves.InconclusiveHalt}}
	}
	plan := Plan{
		Waves:   []Wave{wave("canary", "cell-a"), wave("rest", "cell-b")},
		Desired: map[string]CellConfig{"cell-a": {Image: "app:v2"}, "cell-b": {Image: "app:v2"}},
	}
	out, err := ex.Run(context.Background(), plan, Options{Host: "ci-1", PID: 42, Through: "canary"})
	for _, row := range out.Summary {
		fmt.Println(row.Cell, row.Wave, row.Image, row.State)
	}
	var halted *HaltedError
	var locked *LockedError
	switch {
	case errors.As(err, &halted):
		fmt.Println("exit 3:", halted)
	case errors.As(err, &locked):
		fmt.Println("exit 4:", locked)
	case err != nil:
		fmt.Println("exit 1:", err)
	default:
		fmt.Println("exit 0, rollout", out.Record.State)
	}
	// Output:
	// cell-a canary app:v2 new
	// cell-b rest app:v1 untouched
	// exit 0, rollout paused
}
