// Package originsecret rotates the fleet's origin-verify secret — the
// value CloudFront sends in X-Origin-Verify and every cell's ALB rule
// requires — without a refused request at any point:
//
//  1. accept: wave by wave (waves.yaml's waves, each baked on its gate),
//     every cell's ALB rule accepts the current AND the next value (an
//     http-header condition matches any of its values);
//  2. switch: once every deployed cell accepts the next value (read from
//     the deployed state, failing closed), the router's origins send it;
//     the bake covers every cell, and a breach puts the router back;
//  3. drop: once the deployed router sends only the next value, wave by
//     wave each cell stops accepting the old one.
//
// The rotation is a step kind of the one gated-change machine: its record
// is the executor's (executor.Record, kind secret-rotation, its steps in
// Steps), saved through the executor's journal in the rollout records
// before and after every step (a failed save stops it), under the fleet
// lock's one holder, its bakes the executor's bake loop in the one
// verdict vocabulary. A rotation killed at any point resumes from its
// record — a step that was baking continues its bake; the record holds no
// secret — the values live encrypted in the stack files, and are
// recovered from the deployed state when the files are gone. It never
// interleaves with a deploy or any other change to the fleet.
package originsecret

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/waves"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/gated"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/runplan"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// Engine is what a rotation needs of the engine (internal/engine).
type Engine interface {
	RunStack(ctx context.Context, req stackrun.Request) *stackrun.Result
	EnsureOriginVerifySecret(ctx context.Context, stacks []string) ([]string, error)
	StackSecret(stack, key string) (string, bool, error)
	SetStackSecrets(ctx context.Context, stack string, values map[string]*string) (string, error)
	DeployedOriginSecret(ctx context.Context, stack string) (*engine.DeployedOrigin, error)
}

// Store is the gated-change machine's store (internal/adapters/backend): the
// records of every rollout, canary and rotation, and the fleet lock. It
// lists them: the rotation under way is the newest unfinished one.
type Store interface {
	executor.Store
	executor.Lister
}

// Legacy reads the record an older cellctl kept in a store of its own
// (LegacyKey), so a rotation it paused resumes, and removes it once the
// record is in the one store.
type Legacy interface {
	LoadLegacy(ctx context.Context) ([]byte, error) // nil, nil: none
	RemoveLegacy(ctx context.Context) error
}

// Step kinds.
const (
	Accept = executor.RotationAccept
	Switch = executor.RotationSwitch
	Drop   = executor.RotationDrop
)

// LockVerb is the fleet lock holder's verb of a rotation; the holder's id
// is the rotation's record id (s-…). One rotation at a time: a lock a
// rotation left is its successor's to take over once its process is gone.
const LockVerb = "secret rotate"

// legacyLockID is the holder id older cellctl rotations locked under.
const legacyLockID = "secret-rotate"

// Rotator runs rotations over a gated change's surroundings (gated.Env:
// Fleet, Clock, Log, and Host, PID, Alive in the fleet lock; its Runner is
// the apply path every phase's up goes through, nil: Engine) and what only
// a rotation needs.
type Rotator struct {
	gated.Env
	// Waves are the rollout waves (waves.yaml's, bakes as the deploy
	// command scales them).
	Waves  []executor.Wave
	Engine Engine
	Gate   executor.Gate
	// Store keeps the record and the fleet lock. It is the rotation's
	// own, not Env.Store, which a rotation never reads: the rotation under
	// way is found by listing the records, so this store must list them.
	// Legacy (optional) is the record of an older cellctl.
	Store  Store
	Legacy Legacy
}

// Options are one run's choices.
type Options struct {
	// Steps stops after this many steps (0: run to the end); a rerun
	// continues.
	Steps int
	// Stop, once closed, starts no new step.
	Stop <-chan struct{}
	// Resume is `cellctl rollout resume`: the one run that continues a
	// rotation an operator paused (`cellctl rollout pause`).
	Resume bool
}

// ErrPaused says the run stopped with steps to go: after Options.Steps,
// or at an operator's pause (the record's Paused says who; the rotation
// keeps the fleet's lock until `cellctl rollout resume`).
var ErrPaused = errors.New("paused")

func (r *Rotator) logf(format string, args ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, format+"\n", args...)
	}
}

func (r *Rotator) now() time.Time { return r.Clocked().Now().UTC() }

// run is one Run's working state: the rotation's record, written through
// the executor's journal (every save fatal).
type run struct {
	*Rotator
	j *executor.Journal
	// steer reads the operators' requests after every save (nil: the
	// store keeps none).
	steer *executor.Steering
}

// check refuses a fleet a rotation cannot go through: no router, no
// waves, a cell in no wave.
func (r *Rotator) check() error {
	f := r.Fleet
	if f.Router == nil {
		return fmt.Errorf("the fleet has no router (%s/Pulumi.router.yaml): nothing sends the origin-verify secret", f.StackDir)
	}
	if len(r.Waves) == 0 {
		return fmt.Errorf("%s: the fleet has no waves; a rotation goes wave by wave", fleet.WavesFile)
	}
	inWave := map[string]bool{}
	for _, w := range r.Waves {
		for _, c := range w.Cells {
			inWave[c] = true
		}
	}
	for _, id := range f.CellIDs() {
		if !inWave[id] {
			return fmt.Errorf("%s: cell %s is in no wave: a rotation goes wave by wave through every cell; add it to a wave first", fleet.WavesFile, id)
		}
	}
	return nil
}

// planned is the record a run executes, its steps from the first one not
// done: the rotation under way — with the cells that joined a wave since
// it started (adopt) — or, fresh, a new one under id. It only reads:
// Run calls it once it holds the fleet lock, Plan (the dry run) without.
func (r *Rotator) planned(ctx context.Context, id string) (rec *executor.Record, fresh, legacy bool, notes []string, err error) {
	rec, legacy, err = r.current(ctx)
	if err != nil {
		return nil, false, false, nil, err
	}
	if rec == nil {
		rec, fresh = r.newRecord(id), true
	}
	return rec, fresh, legacy, r.adopt(rec), nil
}

// Plan is the dry run: the record Run would execute now (planned) —
// every step, those done first — with the notes of the cells that joined
// a wave since the rotation started. It takes no lock and writes nothing
// (no record, no stack file, no engine run). A fresh rotation's id is
// only what the plan calls it: the run mints its own.
func (r *Rotator) Plan(ctx context.Context) (*Planned, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	rec, fresh, _, notes, err := r.planned(ctx, executor.NewID(executor.KindRotation))
	if err != nil {
		return nil, err
	}
	return r.planOf(rec, !fresh, notes), nil
}

// Run starts a rotation, or resumes the one its record says is under way.
// It returns the record as saved.
func (r *Rotator) Run(ctx context.Context, o Options) (*executor.Record, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	// Which rotation this run is (read-only: nothing is written before
	// the lock is held).
	prev, _, err := r.current(ctx)
	if err != nil {
		return nil, err
	}
	// A rotation an operator paused is continued by `cellctl rollout
	// resume` only.
	if err := executor.Admit(prev, o.Resume); err != nil {
		return nil, outcome.Locked("", err)
	}
	id := executor.NewID(executor.KindRotation)
	if prev != nil {
		id = prev.ID
	}
	me := executor.Holder{ID: id, Verb: LockVerb, Host: r.Host, PID: r.PID, Started: r.now(), Nonce: nonce()}
	note, err := executor.Take(ctx, r.Store, me, func(h executor.Holder) bool {
		return h.Verb == LockVerb || h.ID == legacyLockID
	}, r.Alive)
	if err != nil {
		var le *executor.LockedError
		if errors.As(err, &le) {
			if le.Holder.Verb == LockVerb || le.Holder.ID == legacyLockID {
				return nil, outcome.Locked("", fmt.Errorf("another `cellctl secret rotate` runs: %w", err))
			}
			return nil, outcome.Locked("", fmt.Errorf("refused: a rotation deploys every cell and the router and never interleaves with another change to the fleet: %w", err))
		}
		return nil, err
	}
	// A rotation an operator paused keeps the lock.
	release := true
	defer func() {
		if release {
			_ = r.Store.Unlock(context.WithoutCancel(ctx), me)
		}
	}()
	if note != "" {
		r.logf("%s", note)
	}
	// Held: the plan read again (a rotation may have run between the read
	// and the lock), then written.
	rec, fresh, legacy, notes, err := r.planned(ctx, id)
	if err != nil {
		return nil, err
	}
	if fresh != (prev == nil) || rec.ID != id {
		return nil, errors.New("another `cellctl secret rotate` ran while this one started: run `cellctl secret rotate` again")
	}
	if fresh {
		r.logf("rotation %s: %d steps (accept the next value wave by wave, switch the router, drop the old value wave by wave)", rec.ID, len(rec.Steps))
	} else {
		r.logf("rotation %s: resuming from its record", rec.ID)
		rec.Notes = append(rec.Notes, fmt.Sprintf("%s: resumed", r.now().Format(time.RFC3339)))
	}
	for _, n := range notes {
		r.logf("%s", n)
	}
	rec.State, rec.Holder, rec.Error, rec.Paused = executor.Running, me, "", nil
	x := &run{Rotator: r, j: executor.NewJournal(r.Store, r.Clocked(), rec)}
	reqs, _ := r.Store.(executor.Requests)
	x.steer = x.j.Steer(ctx, reqs, o.Resume)
	if err := x.j.Update(ctx, nil); err != nil {
		return x.j.Snapshot(), err
	}
	if legacy && r.Legacy != nil {
		// The record is in the one store now; the older copy goes.
		if err := r.Legacy.RemoveLegacy(ctx); err != nil {
			return x.j.Snapshot(), fmt.Errorf("rotation %s: moved into the rollout records, but removing the older record (%s) failed: %w", rec.ID, LegacyKey, err)
		}
		r.logf("rotation %s: its record moved from %s into the rollout records", rec.ID, LegacyKey)
	}
	err = x.steps(ctx, o)
	rec = x.j.Snapshot()
	release = rec.Paused == nil
	if rec.State == executor.Complete {
		x.steer.Done(ctx)
	}
	return rec, err
}

// steps runs the record's steps from the first one not done.
func (x *run) steps(ctx context.Context, o Options) error {
	// Every stack file holds the current value (recovered from the
	// deployed state when a file lacks it).
	if _, err := x.Engine.EnsureOriginVerifySecret(ctx, x.Fleet.StackNames()); err != nil {
		return x.stop(ctx, err)
	}
	ran := 0
	for {
		i := x.pending()
		if i < 0 {
			break
		}
		name := x.stepName(i)
		if o.Steps > 0 && ran == o.Steps {
			x.logf("rotation %s: paused after %d step(s) before %s; run `cellctl secret rotate` again to continue", x.id(), ran, name)
			if err := x.j.Update(ctx, func(rec *executor.Record) { rec.State = executor.Paused }); err != nil {
				return err
			}
			return ErrPaused
		}
		if a, err := x.steer.Pause(ctx); err != nil {
			return err
		} else if a != nil {
			x.logf("rotation %s: paused by %s at %s before %s; it keeps the fleet's lock: `cellctl rollout resume %s` continues it",
				x.id(), a.By, a.At.UTC().Format(time.RFC3339), name, x.id())
			return ErrPaused
		}
		select {
		case <-o.Stop:
			return x.stop(ctx, fmt.Errorf("rotation %s: stopped before %s; run `cellctl secret rotate` again to continue", x.id(), name))
		default:
		}
		cur, next, err := x.values(ctx)
		if err != nil {
			return x.stop(ctx, fmt.Errorf("rotation %s: %s: %w", x.id(), name, err))
		}
		if err := x.recordOrigin(ctx, cur, next); err != nil {
			return x.stop(ctx, err)
		}
		// values may have put earlier steps back to pending.
		if err := x.runStep(ctx, x.pending(), cur, next); err != nil {
			return x.stop(ctx, err)
		}
		ran++
	}
	x.logf("rotation %s: complete — every cell accepts only the new value, and CloudFront sends it", x.id())
	return x.j.Update(ctx, func(rec *executor.Record) {
		rec.State, rec.Finished = executor.Complete, x.now()
	})
}

// recordOrigin keeps the digests of the values the rotation rotates
// between in its record before a step ships them (cur is "" after the
// switch: the value it replaced stays as recorded). Every up compares a
// stack file's value with them (internal/apply): a checkout older than
// the rotation cannot put the old value back once the rotation is done.
func (x *run) recordOrigin(ctx context.Context, cur, next string) error {
	o := executor.OriginDigests{To: engine.OriginDigest(next)}
	if cur != "" {
		o.From = engine.OriginDigest(cur)
	}
	same := false
	x.j.View(func(rec *executor.Record) {
		if rec.Origin != nil && o.From == "" {
			o.From = rec.Origin.From
		}
		same = rec.Origin != nil && *rec.Origin == o
	})
	if same {
		return nil
	}
	return x.j.Update(ctx, func(rec *executor.Record) { rec.Origin = &o })
}

// stop records why the run stopped; the next run resumes at the step (a
// halted step is retried: fix the cause, run again).
func (x *run) stop(ctx context.Context, err error) error {
	if serr := x.j.Update(ctx, func(rec *executor.Record) {
		rec.State, rec.Error = executor.Interrupted, err.Error()
	}); serr != nil && !errors.Is(err, serr) {
		return errors.Join(err, serr)
	}
	return err
}

func (x *run) id() string {
	var id string
	x.j.View(func(rec *executor.Record) { id = rec.ID })
	return id
}

func (x *run) stepName(i int) string {
	var n string
	x.j.View(func(rec *executor.Record) { n = rec.Steps[i].Name })
	return n
}

func (x *run) step(i int) executor.StepRecord {
	var s executor.StepRecord
	x.j.View(func(rec *executor.Record) { s = rec.Steps[i] })
	return s
}

// current is the rotation under way: the newest rotation record that is
// not finished — or, when an older cellctl kept it in its own store, that
// record in the one record type (legacy true: it is not in the store
// yet). nil: none, a new rotation starts.
func (r *Rotator) current(ctx context.Context) (rec *executor.Record, legacy bool, err error) {
	recs, err := r.Store.List(ctx)
	if err != nil {
		var bad *backend.UnreadableError
		if !errors.As(err, &bad) {
			return nil, false, fmt.Errorf("reading the rotation records: %w", err)
		}
		if bad.Any("s-") {
			// Fail closed: an unreadable rotation is not "no rotation".
			return nil, false, fmt.Errorf("reading the rotation records: %w", err)
		}
	}
	newest := executor.Newest(recs, executor.KindRotation)
	if r.Legacy != nil {
		data, err := r.Legacy.LoadLegacy(ctx)
		if err != nil {
			return nil, false, err
		}
		if data != nil {
			old, err := migrate(data)
			if err != nil {
				return nil, false, err
			}
			switch {
			case newest != nil && newest.ID == old.ID:
				// Moved already; the older copy was not removed yet.
				legacy = true
			case old.Unfinished() && (newest == nil || !newest.Unfinished()):
				return old, true, nil
			}
		}
	}
	if newest != nil && newest.Unfinished() {
		return newest, legacy, nil
	}
	return nil, legacy, nil
}

// adopt gives a cell that joined a wave since the rotation started
// (`cellctl cell add` mid-rotation) the phase's values: it joins its
// wave's steps, and the step of its wave that already ran for the phase
// the rotation is in runs again — the accept before the router switched
// (the new cell must accept the next value before CloudFront sends it),
// the drop after (it must accept what the router sends). Rerunning a step
// is safe: the other cells already hold its values. It returns what it
// changed, to log.
func (r *Rotator) adopt(rec *executor.Record) (notes []string) {
	in := map[string]bool{}
	for _, s := range rec.Steps {
		for _, c := range s.Cells {
			in[c] = true
		}
	}
	switched := false
	if sw := rec.Step(Switch + "/" + fleet.RouterStack); sw != nil && sw.State == executor.WaveDone {
		switched = true
	}
	for _, w := range r.Waves {
		for _, c := range w.Cells {
			if in[c] {
				continue
			}
			for i := range rec.Steps {
				s := &rec.Steps[i]
				if s.Wave != w.Name || s.Kind == Switch {
					continue
				}
				s.Cells = append(s.Cells, c)
				if s.State == executor.WaveDone && (s.Kind == Drop || !switched) {
					s.State = executor.WavePending
					rec.Notes = append(rec.Notes, fmt.Sprintf("%s: %s joined wave %s during the rotation: running the step again for it", s.Name, c, w.Name))
					notes = append(notes, fmt.Sprintf("%s: %s joined wave %s during the rotation: running this step again so it gets the rotation's values", s.Name, c, w.Name))
				}
			}
		}
	}
	return notes
}

func (r *Rotator) newRecord(id string) *executor.Record {
	now := r.now()
	rec := &executor.Record{ID: id, Kind: executor.KindRotation, State: executor.Running, Started: now}
	for _, w := range r.Waves {
		rec.Steps = append(rec.Steps, executor.StepRecord{Name: Accept + "/" + w.Name, Kind: Accept, Wave: w.Name, Cells: slices.Clone(w.Cells), State: executor.WavePending})
	}
	rec.Steps = append(rec.Steps, executor.StepRecord{Name: Switch + "/" + fleet.RouterStack, Kind: Switch, State: executor.WavePending})
	for _, w := range r.Waves {
		rec.Steps = append(rec.Steps, executor.StepRecord{Name: Drop + "/" + w.Name, Kind: Drop, Wave: w.Name, Cells: slices.Clone(w.Cells), State: executor.WavePending})
	}
	return rec
}

func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// values returns the current and the next value as the stack files and
// the deployed state say. Before the switch, the current value is what
// every cell's file holds as its primary value, and the next one is the
// cells' next value, else one a deployed cell already accepts besides the
// current, else a new one — minted only while nothing deployed accepts
// another value, so no step done before is lost. After the switch the
// router's value is the next one (the current is no longer needed).
func (x *run) values(ctx context.Context) (cur, next string, err error) {
	key, nextKey := x.keys()
	switched := false
	x.j.View(func(rec *executor.Record) {
		sw := rec.Step(Switch + "/" + fleet.RouterStack)
		switched = sw != nil && sw.State == executor.WaveDone
	})
	if switched {
		v, found, err := x.Engine.StackSecret(fleet.RouterStack, key)
		if err != nil || !found {
			return "", "", fmt.Errorf("reading the router's %s: %v", key, err)
		}
		return "", v, nil
	}
	for _, id := range x.Fleet.CellIDs() {
		v, found, err := x.Engine.StackSecret(id, key)
		if err != nil {
			return "", "", err
		}
		if !found {
			return "", "", fmt.Errorf("%s has no %s", id, key)
		}
		if cur == "" {
			cur = v
		} else if v != cur {
			return "", "", fmt.Errorf("the cells' stack files hold different %s values before the router switched: "+
				"restore them from the commit of the last `cellctl secret rotate` run", key)
		}
		n, found, err := x.Engine.StackSecret(id, nextKey)
		if err != nil {
			return "", "", err
		}
		if found {
			if next != "" && n != next {
				return "", "", fmt.Errorf("the cells' stack files hold different %s values", nextKey)
			}
			next = n
		}
	}
	if next != "" {
		return cur, next, nil
	}
	for _, id := range x.Fleet.CellIDs() {
		d, err := x.Engine.DeployedOriginSecret(ctx, id)
		if err != nil {
			return "", "", fmt.Errorf("reading what %s accepts: %w", id, err)
		}
		for _, v := range d.Accepts {
			if v != cur {
				if next != "" && next != v {
					return "", "", fmt.Errorf("deployed cells accept several values besides the current one: resolve by hand")
				}
				next = v
			}
		}
	}
	if next != "" {
		err := x.j.Update(ctx, func(rec *executor.Record) {
			rec.Notes = append(rec.Notes, "the next value was recovered from the deployed cells (the stack files lacked it)")
		})
		return cur, next, err
	}
	// Nothing deployed accepts another value: any accept step recorded as
	// done has been undone since, so it runs again with the new value.
	undone := false
	x.j.View(func(rec *executor.Record) {
		for _, s := range rec.Steps {
			undone = undone || s.Kind == Accept && s.State == executor.WaveDone
		}
	})
	if undone {
		if err := x.j.Update(ctx, func(rec *executor.Record) {
			for i := range rec.Steps {
				if s := &rec.Steps[i]; s.Kind == Accept && s.State == executor.WaveDone {
					s.State = executor.WavePending
					rec.Notes = append(rec.Notes, fmt.Sprintf("%s: no deployed cell accepts a next value any more; running the step again", s.Name))
				}
			}
		}); err != nil {
			return "", "", err
		}
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", "", err
	}
	return cur, base64.RawURLEncoding.EncodeToString(buf), nil
}

// pending is the index of the first step not done, -1 when all are.
func (x *run) pending() int {
	at := -1
	x.j.View(func(rec *executor.Record) {
		for i, s := range rec.Steps {
			if s.State != executor.WaveDone {
				at = i
				return
			}
		}
	})
	return at
}

// runStep runs step i: its updates, then its bake. A step recorded as
// baking — its updates done when the last run stopped — continues its
// bake from the recorded start, as a rollout's wave does, without
// deploying anything again.
func (x *run) runStep(ctx context.Context, i int, cur, next string) error {
	s := x.step(i)
	if s.State == executor.WaveBaking && !s.BakeStart.IsZero() {
		x.logf("%s: was baking when the last run stopped: continuing its bake", s.Name)
		err := x.resumeBake(ctx, i, cur)
		return x.finishStep(ctx, i, err)
	}
	if err := x.j.Update(ctx, func(rec *executor.Record) {
		st := &rec.Steps[i]
		if st.State == executor.WavePending || st.Started.IsZero() {
			st.Started = x.now()
		}
		st.State, st.Error, st.BakeStart, st.Polls, st.Decision, st.Breach, st.Reason = executor.WaveUpdating, "", time.Time{}, nil, "", nil, ""
	}); err != nil {
		return err
	}
	x.logf("%s: %s", s.Name, describe(s))
	var err error
	switch s.Kind {
	case Accept:
		err = x.cells(ctx, i, map[string]*string{x.key(): &cur, x.nextKey(): &next})
	case Switch:
		err = x.switchRouter(ctx, i, cur, next)
	case Drop:
		err = x.drop(ctx, i, next)
	}
	return x.finishStep(ctx, i, err)
}

// finishStep records a step's end: done, or halted with why.
func (x *run) finishStep(ctx context.Context, i int, err error) error {
	if err != nil {
		if serr := x.j.Update(ctx, func(rec *executor.Record) {
			st := &rec.Steps[i]
			st.State, st.Error = executor.WaveHalted, err.Error()
		}); serr != nil && !errors.Is(err, serr) {
			return errors.Join(err, serr)
		}
		return err
	}
	x.logf("%s: done", x.stepName(i))
	return x.j.Update(ctx, func(rec *executor.Record) {
		st := &rec.Steps[i]
		st.State, st.Finished = executor.WaveDone, x.now()
	})
}

// resumeBake continues the bake of a step whose updates were done.
func (x *run) resumeBake(ctx context.Context, i int, cur string) error {
	s := x.step(i)
	switch s.Kind {
	case Switch:
		if err := x.bake(ctx, i, x.Waves[0], x.Fleet.CellIDs()); err != nil {
			return x.putRouterBack(ctx, s.Name, cur, err)
		}
		return nil
	default:
		return x.bake(ctx, i, x.wave(s.Wave), s.Cells)
	}
}

func (r *Rotator) keys() (string, string) {
	return r.Fleet.ConfigKey(fleet.OriginVerifyKey), r.Fleet.ConfigKey(fleet.OriginVerifyNextKey)
}

func (r *Rotator) key() string     { k, _ := r.keys(); return k }
func (r *Rotator) nextKey() string { _, k := r.keys(); return k }

func describe(s executor.StepRecord) string {
	switch s.Kind {
	case Accept:
		return fmt.Sprintf("wave %s (%s) accepts the current and the next value", s.Wave, strings.Join(s.Cells, ", "))
	case Switch:
		return "the router's CloudFront origins send the next value"
	}
	return fmt.Sprintf("wave %s (%s) stops accepting the old value", s.Wave, strings.Join(s.Cells, ", "))
}

// drop makes a wave's cells accept only the new value, once the deployed
// router sends nothing else.
func (x *run) drop(ctx context.Context, i int, next string) error {
	d, err := x.Engine.DeployedOriginSecret(ctx, fleet.RouterStack)
	if err != nil {
		return fmt.Errorf("reading what the router sends: %w", err)
	}
	if v, ok := d.Sent(); !d.Deployed || !ok || v != next {
		return errors.New("refused: the deployed router does not send the new value to every origin; dropping the old value would refuse its requests")
	}
	return x.cells(ctx, i, map[string]*string{x.key(): &next, x.nextKey(): nil})
}

// cells stores values in the step's cells' stack files and deploys them
// (bounded by the wave's max_parallel), then bakes the wave on its gate.
func (x *run) cells(ctx context.Context, i int, values map[string]*string) error {
	s := x.step(i)
	for _, c := range s.Cells {
		if _, err := x.Engine.SetStackSecrets(ctx, c, values); err != nil {
			return err
		}
	}
	// A cell never deployed keeps the values in its file for its first
	// up; a rotation deploys no new cell.
	var deployed []string
	for _, c := range s.Cells {
		d, err := x.Engine.DeployedOriginSecret(ctx, c)
		if err != nil {
			return fmt.Errorf("reading what %s accepts: %w", c, err)
		}
		if d.Deployed {
			deployed = append(deployed, c)
		} else {
			x.logf("%s: %s is not deployed: its stack file has the values for its first up", s.Name, c)
		}
	}
	if len(deployed) == 0 {
		return nil
	}
	w := x.wave(s.Wave)
	g, gctx := errgroup.WithContext(ctx)
	if w.Parallel > 0 {
		g.SetLimit(w.Parallel)
	}
	for _, c := range deployed {
		g.Go(func() error { return x.up(gctx, c) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := x.baking(ctx, i, deployed); err != nil {
		return err
	}
	return x.bake(ctx, i, w, deployed)
}

// baking records that the step's updates are done and its bake starts
// now, over cells: a rerun continues this bake instead of deploying again.
func (x *run) baking(ctx context.Context, i int, cells []string) error {
	return x.j.Update(ctx, func(rec *executor.Record) {
		st := &rec.Steps[i]
		st.State, st.BakeStart, st.Cells = executor.WaveBaking, x.now(), mergeCells(st.Cells, cells)
	})
}

func mergeCells(a, b []string) []string {
	out := slices.Clone(a)
	for _, c := range b {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// switchRouter points the router's origins at the next value, once every
// deployed cell accepts it; a breach during the bake puts the current
// value back.
func (x *run) switchRouter(ctx context.Context, i int, cur, next string) error {
	s := x.step(i)
	var refusing []string
	for _, id := range x.Fleet.CellIDs() {
		d, err := x.Engine.DeployedOriginSecret(ctx, id)
		if err != nil {
			return fmt.Errorf("reading what %s accepts: %w", id, err)
		}
		if d.Deployed && !slices.Contains(d.Accepts, next) {
			refusing = append(refusing, id)
		}
	}
	if router, err := x.Engine.DeployedOriginSecret(ctx, fleet.RouterStack); err != nil {
		return fmt.Errorf("reading what the router sends: %w", err)
	} else {
		// A router deployed before the fleet origin had one origin per
		// cell; one the fleet no longer has cannot be checked. The fleet
		// origin reaches the routed cells, all checked above.
		for origin := range router.Sends {
			if origin == cellmodule.RouterOriginID {
				continue
			}
			if c := x.Fleet.Cell(origin); c == nil && !slices.Contains(refusing, origin) {
				refusing = append(refusing, origin+" (not in the fleet)")
			}
		}
	}
	if len(refusing) > 0 {
		slices.Sort(refusing)
		return fmt.Errorf("refused: %s do not accept the next value in their deployed ALB rules; switching the router would refuse their requests — "+
			"a cell of waves.yaml's waves gets the values when `cellctl secret rotate` runs again; a cell in no wave must join one first (waves.yaml), then run `cellctl secret rotate`", strings.Join(refusing, ", "))
	}
	if _, err := x.Engine.SetStackSecrets(ctx, fleet.RouterStack, map[string]*string{x.key(): &next}); err != nil {
		return err
	}
	if err := x.up(ctx, fleet.RouterStack); err != nil {
		return err
	}
	if err := x.baking(ctx, i, nil); err != nil {
		return err
	}
	if bakeErr := x.bake(ctx, i, x.Waves[0], x.Fleet.CellIDs()); bakeErr != nil {
		return x.putRouterBack(ctx, s.Name, cur, bakeErr)
	}
	return nil
}

// putRouterBack restores the current value on the router after its bake
// on the next one failed.
func (x *run) putRouterBack(ctx context.Context, step, cur string, bakeErr error) error {
	if cur == "" {
		return bakeErr
	}
	x.logf("%s: %v — putting the router back on the current value", step, bakeErr)
	if _, err := x.Engine.SetStackSecrets(ctx, fleet.RouterStack, map[string]*string{x.key(): &cur}); err != nil {
		return fmt.Errorf("%w; putting the router back failed too: %v", bakeErr, err)
	}
	if err := x.up(ctx, fleet.RouterStack); err != nil {
		return fmt.Errorf("%w; putting the router back failed too: %v", bakeErr, err)
	}
	return bakeErr
}

func (r *Rotator) wave(name string) executor.Wave {
	for _, w := range r.Waves {
		if w.Name == name {
			return w
		}
	}
	return executor.Wave{Name: name}
}

func (r *Rotator) up(ctx context.Context, stack string) error {
	var runner runplan.StackRunner = r.Engine
	if r.Runner != nil {
		runner = r.Runner
	}
	res, err := apply.Apply(ctx, runner, stackrun.Request{Stack: stack, Op: stackrun.OpUp})
	if res != nil && res.Locked() {
		return res.Err
	}
	return err
}

// bake runs the step's bake with the executor's bake loop
// (executor.Baker) from the step's recorded start: a breach, an
// unreadable gate (fail closed) or an inconclusive end under
// on_inconclusive: halt stops the rotation. Every poll is saved in the
// step's record before it is acted on; a record that cannot be saved
// stops the rotation.
func (x *run) bake(ctx context.Context, i int, w executor.Wave, cells []string) error {
	s := x.step(i)
	start := s.BakeStart
	if start.IsZero() {
		start = x.now()
	}
	// A bake is the long part of a step (the canary's is 30 minutes on the
	// demo waves): say when it starts and, at most once a minute of its
	// clock, how much is left, so a rotation is never silent for long.
	end := start.Add(w.Bake)
	x.logf("%s: baking %s on the gate of %s (a poll every %s)", s.Name, bakeLeft(end.Sub(x.now())), strings.Join(cells, ", "), w.Gate.Poll)
	said := x.now()
	b := executor.Baker{Gate: x.Gate, Clock: x.Clocked(), Record: func(p executor.Poll) error {
		if p.At.Sub(said) >= time.Minute && p.At.Before(end) {
			said = p.At
			x.logf("%s: baking, %s left (%s)", s.Name, bakeLeft(end.Sub(p.At)), pollSummary(p))
		}
		return x.j.Update(ctx, func(rec *executor.Record) {
			st := &rec.Steps[i]
			st.Polls = append(st.Polls, p)
		})
	}}
	res, err := b.Bake(ctx, executor.BakeSpec{Step: w.Name, Cells: cells, Start: start, Duration: w.Bake, Poll: w.Gate.Poll})
	if err != nil {
		return fmt.Errorf("%s: %w; run `cellctl secret rotate` again to resume at this step", s.Name, err)
	}
	if err := x.j.Update(ctx, func(rec *executor.Record) {
		st := &rec.Steps[i]
		st.Decision, st.Breach, st.Reason = res.Decision, res.Breach, res.Reason
	}); err != nil {
		return err
	}
	switch {
	case res.Decision == waves.Breached:
		why := res.Breach.String()
		if res.Breach.Signal == executor.SignalGate {
			why += " (a gate it cannot read is a breach: gates fail closed)"
		}
		return outcome.Halted(s.Name, fmt.Errorf("%s: %s; fix the cause, then `cellctl secret rotate` resumes at this step", s.Name, why))
	case res.Decision == waves.Inconclusive && w.Gate.OnInconclusive != waves.InconclusivePromote:
		return outcome.Halted(s.Name, fmt.Errorf("%s: the bake ended inconclusive (%s; on_inconclusive: halt); check the cells' traffic, then `cellctl secret rotate` resumes at this step", s.Name, res.Reason))
	}
	return nil
}

// bakeLeft is a bake's remaining time as a person reads it.
func bakeLeft(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d >= time.Minute:
		return d.Round(time.Second).String()
	default:
		return d.Round(100 * time.Millisecond).String()
	}
}

// pollSummary says what one gate poll read: the error, the first cell
// that did not pass, or that every cell passed.
func pollSummary(p executor.Poll) string {
	if p.Error != "" {
		return "the gate could not read: " + p.Error
	}
	for _, v := range p.Verdicts {
		switch {
		case v.Decision == waves.Breached && v.Breach != nil:
			return "last poll: " + v.Breach.String()
		case v.Decision != waves.Pass:
			return fmt.Sprintf("last poll: %s %s %s", v.Cell, v.Decision, v.Reason)
		}
	}
	return fmt.Sprintf("last poll: %d cell(s) pass", len(p.Verdicts))
}
