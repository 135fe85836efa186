// Command cellctl runs a cell-based architecture on AWS: it provisions
// cells, routes tenants to them, rolls out new versions in waves and audits
// the fleet. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/iostreams"
)

func main() {
	os.Exit(run())
}

// run is the only place that knows exit codes.
func run() int {
	io := iostreams.System()
	ctx, stop := interruptContext(io)
	defer stop()
	root := NewCmdRoot(NewFactory(io))
	err := root.ExecuteContext(ctx)
	code := exitcode.Of(err)
	if err != nil && !errors.Is(err, exitcode.ErrSilent) && err.Error() != "" {
		fmt.Fprintln(io.ErrOut, "error:", err)
	}
	return code
}

// interruptContext cancels on the second interrupt only: the first asks
// the running operation to finish its current step (commands that support
// it watch Graceful), the second cancels outright, as terraform does.
func interruptContext(io *iostreams.IOStreams) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	graceful, gracefulCancel := context.WithCancel(context.Background())
	ctx = withGraceful(ctx, graceful)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				fmt.Fprintln(io.ErrOut, "interrupt: finishing the stacks in flight; no new stack starts (interrupt again to cancel now)")
				gracefulCancel()
				continue
			}
			fmt.Fprintln(io.ErrOut, "interrupt: cancelling")
			cancel()
			return
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel(); gracefulCancel() }
}

type gracefulKey struct{}

func withGraceful(ctx context.Context, g context.Context) context.Context {
	return context.WithValue(ctx, gracefulKey{}, g)
}

// Graceful returns a context that is cancelled on the first interrupt:
// stop starting new work, let work in flight finish.
func Graceful(ctx context.Context) context.Context {
	if g, ok := ctx.Value(gracefulKey{}).(context.Context); ok {
		return g
	}
	return ctx
}
