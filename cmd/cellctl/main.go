// Command cellctl runs a cell-based architecture on AWS: it provisions
// cells, routes tenants to them, rolls out new versions in waves and audits
// the fleet. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/cmd/cellctl/root"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
)

func main() {
	os.Exit(run())
}

// run is the only place that turns an outcome into an exit code: commands
// return (typed) errors, exitcode.Of maps them with errors.As.
func run() int {
	io := iostreams.System()
	ctx, stop := interruptContext(io)
	defer stop()
	return execute(ctx, io, os.Args[1:])
}

// execute runs the command line and returns the exit code.
func execute(ctx context.Context, io *iostreams.IOStreams, args []string) int {
	f := cmdutil.NewFactory(io)
	defer f.Close()
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	err := cmd.ExecuteContext(ctx)
	if err != nil && !outcome.Silent(err) {
		fmt.Fprintln(io.ErrOut, "error:", err)
	}
	return exitcode.Of(err)
}

// interruptContext cancels on the second interrupt when the command
// watches the first: that one asks it to finish its current step
// (cmdutil.Graceful, which says what it does then), the second cancels
// outright, as terraform does. A command that watches none is cancelled
// on the first.
func interruptContext(io *iostreams.IOStreams) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	graceful, gracefulCancel := context.WithCancel(context.Background())
	ctx = cmdutil.WithGraceful(ctx, graceful)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				// The command watching the first interrupt says what it
				// does; a command that watches none is cancelled at once.
				if what, ok := cmdutil.GracefulNotice(ctx); ok {
					fmt.Fprintf(io.ErrLines(), "interrupt: %s (interrupt again to cancel now)\n", what)
					gracefulCancel()
					continue
				}
			}
			fmt.Fprintln(io.ErrLines(), "interrupt: cancelling")
			cancel()
			return
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel(); gracefulCancel() }
}
