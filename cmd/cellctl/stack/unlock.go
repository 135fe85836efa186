package stack

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
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

	View render.View[UnlockReport]

	Stack string
	Force bool
}

// UnlockReport is what `cellctl unlock` did: the locks it removed (none:
// the stack was not locked).
type UnlockReport struct {
	Stack   string           `json:"stack"`
	Removed []unlockedHolder `json:"removed"`
}

type unlockedHolder struct {
	User  string `json:"user"`
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	Since string `json:"since"`
}

var unlockFormats = []render.Format[UnlockReport]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r UnlockReport) error {
		if len(r.Removed) == 0 {
			_, err := fmt.Fprintf(io.Out, "%s is not locked\n", r.Stack)
			return err
		}
		for _, h := range r.Removed {
			if _, err := fmt.Fprintf(io.Out, "%s: removed the lock of pid %d on %s (%s, since %s)\n", r.Stack, h.PID, h.Host, h.User, h.Since); err != nil {
				return err
			}
		}
		return nil
	}},
	render.JSONFormat(func(r UnlockReport) any { return r }),
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
	rep := UnlockReport{Stack: opts.Stack, Removed: []unlockedHolder{}}
	for _, h := range holders {
		rep.Removed = append(rep.Removed, unlockedHolder{User: h.User, Host: h.Host, PID: h.PID, Since: h.Since})
	}
	return opts.View.Render(opts.IO, rep)
}
