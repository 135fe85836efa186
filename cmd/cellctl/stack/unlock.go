package stack

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/rollout"
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
	// FleetHolder reads who holds the fleet lock (nil: nobody) without
	// taking it: unlock clears what a killed holder left, so it must run
	// while a dead rollout still holds the fleet.
	FleetHolder func(ctx context.Context) (*rollout.Holder, error)

	View render.View[UnlockReport]

	Stack string
	Force bool
}

// NewCmdUnlock builds `cellctl unlock`.
func NewCmdUnlock(f *cmdutil.Factory, runF func(*UnlockOptions) error) *cobra.Command {
	opts := &UnlockOptions{IO: f.IO, Fleet: f.Fleet, Engine: func(fl *fleet.Fleet) (Unlocker, error) { return f.Engine(fl, nil) }, FleetHolder: f.FleetHolder}
	cmd := &cobra.Command{
		Use:   "unlock STACK",
		Short: "Remove a stale stack lock left by a killed operation",
		Long: `A killed cellctl or pulumi process can leave its stack locked; the next
operation then exits 4 and names the stale lock. unlock removes it when the
holder ran on this machine and is no longer running. A holder on another
machine cannot be checked from here: --force removes its lock on your word.
A lock whose holder still runs on this machine is never removed, nor is any
lock with --force while a process on this machine holds the fleet lock (its
pulumi is likely the holder). Equivalent to ` + "`pulumi cancel`" + `.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Stack = args[0]
			var err error
			if opts.View, err = render.Pick(f.Global.Output, unlockFormats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return unlockRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "remove the lock of a holder on another machine, which cellctl cannot check")
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
	if opts.Force {
		if err := forceAllowed(ctx, opts); err != nil {
			return err
		}
	}
	eng, err := opts.Engine(fl)
	if err != nil {
		return err
	}
	holders, err := eng.Unlock(ctx, opts.Stack, opts.Force)
	if err != nil {
		return err
	}
	rep := UnlockReport{Stack: opts.Stack, Removed: []unlockedHolder{}}
	for _, h := range holders {
		rep.Removed = append(rep.Removed, unlockedHolder{User: h.User, Host: h.Host, PID: h.PID, Since: h.Since})
	}
	return opts.View.Render(opts.IO, rep)
}

// forceAllowed refuses --force while a process on this machine holds the
// fleet lock: that verb is running, and the stack's lock is most likely
// its pulumi's (on a backend whose stack locks cannot be read, the fleet
// lock is all cellctl can check). A fleet holder on another machine cannot
// be checked: say so and go ahead on --force's word. A backend that cannot
// be read refuses: --force is not a guess.
func forceAllowed(ctx context.Context, opts *UnlockOptions) error {
	h, err := opts.FleetHolder(ctx)
	if err != nil {
		return outcome.Locked(opts.Stack, fmt.Errorf("--force: reading the fleet lock: %w; nothing was removed", err))
	}
	switch {
	case h == nil, h.Unreadable != "", h.GoneFromThisHost():
		return nil
	case h.RunningOnThisHost():
		return outcome.Locked(opts.Stack, fmt.Errorf("--force refused: the fleet is held by %s, which is still running on this host, "+
			"so %s's lock is most likely its own pulumi's; wait for it to finish (or stop it), then rerun; "+
			"without --force, unlock removes a lock whose holder is gone", h, opts.Stack))
	}
	fmt.Fprintf(opts.IO.ErrOut, "note: the fleet is held by %s on another host; cellctl cannot check whether it still runs: removing %s's lock on --force's word\n", h, opts.Stack)
	return nil
}
