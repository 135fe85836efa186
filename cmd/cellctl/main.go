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

// interruptContext cancels on the second interrupt only: the first asks
// the running operation to finish its current step (commands that support
// it watch Graceful), the second cancels outright, as terraform does.
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
