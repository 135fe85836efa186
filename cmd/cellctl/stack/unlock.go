package stack

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
)

// Unlocker removes stale stack locks; its errors are
// outcome.LockedErrors (the stack stays locked: exit 4).
type Unlocker interface {
	Unlock(ctx context.Context, stack string, force bool) ([]engine.LockHolder, error)
}

// UnlockOptions are the inputs of `cellctl unlock`.
type UnlockOptions struct {
	IO     *iostreams.IOStreams
	Fleet  func() (*fleet.Fleet, error)
	Engine func(fl *fleet.Fleet) (Unlocker, error)

	Stack string
	Force bool
}

// NewCmdUnlock builds `cellctl unlock`.
func NewCmdUnlock(f *cmdutil.Factory, runF func(*UnlockOptions) error) *cobra.Command {
	opts := &UnlockOptions{IO: f.IO, Fleet: f.Fleet, Engine: func(fl *fleet.Fleet) (Unlocker, error) { return f.Engine(fl, nil) }}
	cmd := &cobra.Command{
		Use:   "unlock STACK",
		Short: "Remove a stale stack lock left by a killed operation",
		Long: `A killed cellctl or pulumi process can leave its stack locked; the next
operation then exits 4 and names the stale lock. unlock removes it, but only
when the holder ran on this machine and is no longer running, unless --force.
Equivalent to ` + "`pulumi cancel`" + `.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Stack = args[0]
			if runF != nil {
				return runF(opts)
			}
			return unlockRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "remove the lock even if its holder may still be running")
	return cmd
}

func unlockRun(ctx context.Context, opts *UnlockOptions) error {
	if err := fleet.ValidStackName(opts.Stack); err != nil {
		return err
	}
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	eng, err := opts.Engine(fl)
	if err != nil {
		return err
	}
	holders, err := eng.Unlock(ctx, opts.Stack, opts.Force)
	if err != nil {
		return err
	}
	if len(holders) == 0 {
		fmt.Fprintf(opts.IO.Out, "%s is not locked\n", opts.Stack)
		return nil
	}
	for _, h := range holders {
		fmt.Fprintf(opts.IO.Out, "%s: removed the lock of pid %d on %s (%s, since %s)\n", opts.Stack, h.PID, h.Host, h.User, h.Since)
	}
	return nil
}
