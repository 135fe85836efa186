package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/waves/executor"
)

// LockAnnotation marks a command that changes the fleet; its value is the
// verb the fleet lock's holder names ("up", "drain", …). Mutates sets it.
const LockAnnotation = "cellctl/fleet-lock"

// OverrideFlag is the emergency override of the fleet lock (up, destroy,
// drain): the run goes ahead while another run holds the fleet, and the
// override is logged to stderr and recorded in the backend.
const OverrideFlag = "override-lock-for-emergency"

// fleetLock is the process's hold on the fleet lock: taken once per
// process (the first mutating verb), so a verb that runs another inside it
// reuses the hold instead of refusing itself.
type fleetLock struct {
	mu    sync.Mutex
	depth int
	lock  *rollout.Lock
	store *rollout.Store
	// verb is the running mutating verb (set by Mutates): the first engine
	// the factory builds takes the lock for it (taken), once.
	verb     string
	override bool
	taken    bool
}

// HoldFleet takes the fleet lock for the running mutating verb now,
// before its first engine (a verb whose offline guards would refuse first
// calls it once its arguments are known good); a no-op outside one.
func (f *Factory) HoldFleet(ctx context.Context) error { return f.lockForEngine(ctx) }

// lockForEngine takes the fleet lock for the running mutating verb, once,
// before the factory hands out its first engine.
func (f *Factory) lockForEngine(ctx context.Context) error {
	f.lock.mu.Lock()
	verb, override, taken := f.lock.verb, f.lock.override, f.lock.taken
	f.lock.mu.Unlock()
	if verb == "" || taken {
		return nil
	}
	if _, err := f.LockFleet(ctx, verb, override); err != nil {
		return err
	}
	f.lock.mu.Lock()
	f.lock.taken = true
	f.lock.mu.Unlock()
	return nil
}

// Mutates marks cmd as a verb that changes the fleet (stacks, routing
// table, waves, secrets) and makes its RunE take the fleet lock first —
// the one place a command acquires it. A --dry-run never takes it (it
// writes nothing). With OverrideFlag defined on cmd and set, a held lock
// is logged and recorded instead of refusing. The gated changes the
// executor's machinery runs (deploy, router canary, secret rotate) take
// the same lock through its Store instead, under their record's id.
func Mutates(f *Factory, cmd *cobra.Command, verb string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[LockAnnotation] = verb
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if dry, err := c.Flags().GetBool("dry-run"); err == nil && dry {
			return run(c, args)
		}
		override, _ := c.Flags().GetBool(OverrideFlag)
		// The lock is taken when the verb first builds its engine (every
		// write goes through it), so flag, fleet and argument errors come
		// first and are not hidden behind the backend, exactly as before.
		f.lock.mu.Lock()
		f.lock.verb, f.lock.override = verb, override
		f.lock.mu.Unlock()
		defer func() {
			f.lock.mu.Lock()
			taken := f.lock.taken
			f.lock.verb, f.lock.override, f.lock.taken = "", false, false
			f.lock.mu.Unlock()
			if taken {
				f.releaseFleet()
			}
		}()
		return run(c, args)
	}
	return cmd
}

// AddOverrideFlag defines OverrideFlag on cmd.
func AddOverrideFlag(cmd *cobra.Command) {
	cmd.Flags().Bool(OverrideFlag, false, "EMERGENCY: run even while another operation (a rollout) holds the fleet lock; logged to stderr and recorded in the backend")
}

// LockFleet takes the fleet lock for verb, in the backend of the fleet's
// engine, and returns its release. Another holder is an exit-4
// outcome.LockedError naming its id, verb, host, pid and start, and how to
// clear it when it is stale or unreadable — unless override, which logs the
// override (who, when, over whom) to stderr and into the backend and goes
// ahead without the lock. Nested calls in one process share one hold.
func (f *Factory) LockFleet(ctx context.Context, verb string, override bool) (release func(), err error) {
	f.lock.mu.Lock()
	defer f.lock.mu.Unlock()
	if f.lock.lock != nil {
		f.lock.depth++
		return f.releaseFleet, nil
	}
	if err := f.lockStoreLocked(ctx); err != nil {
		return nil, err
	}
	me := rollout.Me(verb, rollout.NewID(), time.Now())
	l, err := f.lock.store.Acquire(ctx, me)
	var held *rollout.HeldError
	if errors.As(err, &held) && takesOver(held.Holder) {
		// A verb killed on this host (kill -9, a lost terminal) left the
		// lock: its process is provably gone and it keeps no record to
		// resume, so the next verb takes the lock over, as it did before
		// there was one lock (the stack's own state is repaired by the
		// engine). A rollout's or a rotation's lock is theirs to resume
		// or abandon, never taken over by another verb.
		fmt.Fprintf(f.IO.ErrLines(), "note: the last `cellctl %s` (pid %d, started %s) is gone from this host: taking over its fleet lock\n",
			held.Holder.Verb, held.Holder.PID, held.Holder.Started.Format(time.RFC3339))
		if berr := f.lock.store.Break(ctx, held.Holder); berr != nil {
			return nil, berr
		}
		held = nil
		l, err = f.lock.store.Acquire(ctx, me)
	}
	switch {
	case err == nil:
		f.lock.lock, f.lock.depth = l, 1
		return f.releaseFleet, nil
	case !errors.As(err, &held):
		return nil, err
	case !override:
		var why error = held
		if held.Holder.KeepsRecord() && held.Holder.Unreadable == "" {
			// A gated change's lock is told by its record: a paused
			// rollout holds the fleet on purpose (who paused it, how to
			// resume or abort it), it is not a stale lock.
			why = executor.HeldBy(ctx, backend.New(f.lock.store), held.Holder)
		}
		return nil, outcome.Locked("", fmt.Errorf("`cellctl %s` changes the fleet and waits for no one: %w", verb, why))
	}
	who := "unknown"
	if u, uerr := user.Current(); uerr == nil {
		who = u.Username
	}
	key, rerr := f.lock.store.Override(ctx, me, held.Holder, who)
	if rerr != nil {
		// An override nobody can audit is not taken.
		return nil, fmt.Errorf("--%s: %w; nothing was changed", OverrideFlag, rerr)
	}
	fmt.Fprintf(f.IO.ErrLines(), "EMERGENCY OVERRIDE: %s@%s (pid %d) runs `cellctl %s` at %s while the fleet is held by %s; recorded in the backend as %s\n",
		who, me.Host, me.PID, verb, me.Started.Format(time.RFC3339), held.Holder, key)
	return func() {}, nil
}

// lockStoreLocked opens the fleet lock's store once; f.lock.mu is held.
func (f *Factory) lockStoreLocked(ctx context.Context) error {
	if f.lock.store != nil {
		return nil
	}
	var err error
	if f.OpenLockStore != nil {
		f.lock.store, err = f.OpenLockStore(ctx)
	} else {
		f.lock.store, err = f.openLockStore(ctx)
	}
	return err
}

// FleetHolder reads who holds the fleet lock now (nil: nobody), without
// taking it: for a verb that must not run under a live holder but takes
// no lock of its own (unlock, which clears what a killed holder left).
func (f *Factory) FleetHolder(ctx context.Context) (*rollout.Holder, error) {
	f.lock.mu.Lock()
	defer f.lock.mu.Unlock()
	if err := f.lockStoreLocked(ctx); err != nil {
		return nil, err
	}
	return f.lock.store.Holder(ctx)
}

// FleetHeld says who holds the fleet lock now, and why, in the words a
// refused verb would use ("" when nobody holds it): a gated change's lock
// is told by its record (a paused rollout holds the fleet on purpose: who
// paused it, since when, how to resume or abort it).
func (f *Factory) FleetHeld(ctx context.Context) (string, error) {
	h, err := f.FleetHolder(ctx)
	if err != nil || h == nil {
		return "", err
	}
	if h.KeepsRecord() && h.Unreadable == "" {
		f.lock.mu.Lock()
		st := f.lock.store
		f.lock.mu.Unlock()
		return executor.HeldBy(ctx, backend.New(st), *h).Error(), nil
	}
	return "the fleet is held by " + h.String(), nil
}

// takesOver reports whether a held fleet lock is a dead verb's to take
// over: held on this host by a process that is gone, by a verb that keeps
// no resumable record of its own (not a rollout, a router canary or a
// rotation: rollout.Holder.KeepsRecord).
func takesOver(h rollout.Holder) bool {
	return h.Unreadable == "" && !h.KeepsRecord() && h.GoneFromThisHost()
}

// releaseFleet gives up one nested hold; the last releases the lock.
func (f *Factory) releaseFleet() {
	f.lock.mu.Lock()
	defer f.lock.mu.Unlock()
	if f.lock.depth--; f.lock.depth > 0 || f.lock.lock == nil {
		return
	}
	if err := f.lock.lock.Release(context.Background()); err != nil {
		fmt.Fprintf(f.IO.ErrLines(), "could not release the fleet lock: %v; `cellctl deploy --abandon %s` clears it\n", err, f.lock.lock.Holder.ID)
	}
	f.lock.lock = nil
}

// openLockStore opens the fleet lock in the backend the fleet's engine
// uses (--backend, $PULUMI_BACKEND_URL or the fleet's .cellctl/state:
// engine.BackendURL, the engine's own rule), without building an engine —
// a verb that runs no pulumi (sim reset) needs no pulumi CLI to take it.
func (f *Factory) openLockStore(ctx context.Context) (*rollout.Store, error) {
	fl, err := f.Fleet()
	if err != nil {
		return nil, err
	}
	return rollout.Open(ctx, engine.BackendURL(f.Global.Backend, fl.Dir))
}
