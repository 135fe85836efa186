package executor

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrStopped says the run stopped at the operator's request (Options.Stop)
// at a safe point; the record says where, and rerunning the same deploy
// continues.
var ErrStopped = errors.New("stopped at the operator's request; rerun the same deploy to continue")

// HaltedError says the rollout stopped at a wave whose gate breached (or
// was inconclusive): which cell, which signal, which reading, which
// threshold, and whether the wave was rolled back. The deploy command maps
// it to exit 3.
type HaltedError struct {
	RolloutID string
	Wave      string
	// Breach is the first breach seen (nil for an inconclusive halt).
	Breach *Breach
	// Reason explains a halt without a breach (inconclusive).
	Reason string
	// RolledBack: the wave's cells run their recorded configuration again.
	RolledBack bool
	// RollbackErr is set when some cell could not be rolled back.
	RollbackErr error
	// SchemaBreach is what the gate read after the rollback, when a cell
	// whose migration ran breached under its old image — most likely on
	// the schema the migration left (expand/contract broken); the check
	// cannot tell that from another change made meanwhile, so the message
	// says both.
	SchemaBreach *Breach
	// SchemaUntouched: no migration of this rollout ran on the database
	// of SchemaBreach's cell (its task never started), so the message
	// does not blame a schema.
	SchemaUntouched bool
	// Next is the command the operator runs next.
	Next string
}

func (e *HaltedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rollout %s halted at wave %s: ", e.RolloutID, e.Wave)
	if e.Breach != nil {
		b.WriteString(e.Breach.String())
	} else {
		b.WriteString(e.Reason)
	}
	switch {
	case e.RollbackErr != nil:
		fmt.Fprintf(&b, "; rolling back failed: %v", e.RollbackErr)
	case e.RolledBack:
		fmt.Fprintf(&b, "; wave %s rolled back to its previous configuration", e.Wave)
		if e.SchemaBreach != nil && e.SchemaUntouched {
			fmt.Fprintf(&b, "; but after the rollback %s: %s", e.SchemaBreach, untouchedSchemaWords)
		} else if e.SchemaBreach != nil {
			fmt.Fprintf(&b, "; but after the rollback %s: the old image fails too — most likely on the schema the migration left (a migration must stay compatible with the image it replaces, or set cells:migrationRollbackCommand), unless something else changed since the wave started (its access, its dependencies: see `cellctl health`)", e.SchemaBreach)
		}
	default:
		fmt.Fprintf(&b, "; wave %s left as it is (not rolled back)", e.Wave)
	}
	if e.Next != "" {
		b.WriteString("; next: " + e.Next)
	}
	return b.String()
}

// LockedError says another run holds the fleet lock (exit 4): a rollout,
// a router canary, a rotation, or any other verb that changes the fleet.
type LockedError struct {
	Holder Holder
	// State is the holder's recorded state when known ("" otherwise): a
	// paused rollout holds the fleet between its CI jobs.
	State RolloutState
	// Kind is the holder's record's kind when it has one.
	Kind Kind
	// Next is the holder's next wave when it is paused.
	Next string
	// Paused is who paused the holder (`cellctl rollout pause`), when.
	Paused *Ask
	// Continue is the command that continues a paused holder, pasteable
	// (ContinueCommand).
	Continue string
}

func (e *LockedError) Error() string {
	switch {
	case e.Kind == KindCanary && e.Paused != nil:
		return fmt.Sprintf("a paused router canary holds the fleet: %s was paused by %s at %s; `cellctl rollout resume %s` continues it, `cellctl rollout abort %s` reverts it",
			e.Holder.ID, e.Paused.By, e.Paused.At.UTC().Format(time.RFC3339), e.Holder.ID, e.Holder.ID)
	case e.Kind == KindRotation && e.Paused != nil:
		return fmt.Sprintf("a paused secret rotation holds the fleet: %s was paused by %s at %s; `cellctl rollout resume %s` continues it",
			e.Holder.ID, e.Paused.By, e.Paused.At.UTC().Format(time.RFC3339), e.Holder.ID)
	case e.Kind == KindCanary && e.State != "" && e.State != Running:
		return fmt.Sprintf("an unfinished router canary holds the fleet: %s stopped before it finished (the staging distribution may still serve viewers); "+
			"run `cellctl router canary` to continue it, `cellctl router canary --discard` to revert it, or give it up with `cellctl deploy --abandon %s`",
			e.Holder, e.Holder.ID)
	case e.Kind == KindRotation && e.State != "" && e.State != Running:
		return fmt.Sprintf("an unfinished secret rotation holds the fleet: %s stopped before it finished; run `cellctl secret rotate` to continue it, or give it up with `cellctl deploy --abandon %s`",
			e.Holder, e.Holder.ID)
	case e.State == Interrupted:
		return fmt.Sprintf("another rollout holds the fleet: %s stopped before it finished; rerun that deploy to continue it, or give it up with `cellctl deploy --abandon %s`",
			e.Holder, e.Holder.ID)
	case e.State == Paused && e.Paused != nil:
		return fmt.Sprintf("a paused rollout holds the fleet: %s was paused by %s at %s; `cellctl rollout resume %s` continues it, `cellctl rollout abort %s` rolls it back",
			e.Holder.ID, e.Paused.By, e.Paused.At.UTC().Format(time.RFC3339), e.Holder.ID, e.Holder.ID)
	case e.State == Paused:
		cont := e.Continue
		if cont == "" {
			cont = "cellctl rollout resume " + e.Holder.ID
		}
		return fmt.Sprintf("a paused rollout holds the fleet: %s is paused before wave %s; continue it with `%s`, roll it back with `cellctl rollout abort %s`, or give it up with `cellctl deploy --abandon %s`",
			e.Holder, e.Next, cont, e.Holder.ID, e.Holder.ID)
	case e.State == Waiting:
		return fmt.Sprintf("a rollout waiting for an approval holds the fleet: %s waits before wave %s; `cellctl rollout approve %s` lets it go on, `cellctl rollout abort %s` rolls it back",
			e.Holder, e.Next, e.Holder.ID, e.Holder.ID)
	}
	return fmt.Sprintf("the fleet is held by %s; %s", e.Holder, e.Holder.Remedy())
}

// RefusedError says the options ask for something this rollout's record
// does not allow (--wave before earlier waves passed, an unknown wave, a
// halted rollout rerun without --retry). Nothing was changed.
type RefusedError struct {
	Reason string
}

func (e *RefusedError) Error() string { return e.Reason }
