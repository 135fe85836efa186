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
// Each step is recorded in the Pulumi backend (beside the rollout
// records) before and after it runs, so a rotation killed at any point
// resumes from its record; the record holds no secret — the values live
// encrypted in the stack files, and are recovered from the deployed state
// when the files are gone. The rotation holds the fleet's rollout lock:
// it never interleaves with a deploy.
package originsecret

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cellctl/cellctl/waves"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
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

// Store keeps the rotation record and takes the fleet's rollout lock.
type Store interface {
	Load(ctx context.Context) (*Record, error) // nil, nil: none
	Save(ctx context.Context, r *Record) error
	// Lock takes the fleet's rollout lock for this rotation; the returned
	// func releases it. A lock held by a rollout is an outcome.Locked error.
	Lock(ctx context.Context) (func(), error)
}

// Step kinds.
const (
	Accept = "accept"
	Switch = "switch"
	Drop   = "drop"
)

// Step states.
const (
	Pending = "pending"
	Running = "running"
	Done    = "done"
	Halted  = "halted"
)

// Record is a rotation's durable state.
type Record struct {
	ID       string     `json:"id"`
	Started  time.Time  `json:"started"`
	Updated  time.Time  `json:"updated"`
	Finished *time.Time `json:"finished,omitempty"`
	Steps    []*Step    `json:"steps"`
	// Notes are what runs noticed (a resume, a recovered value, a halt).
	Notes []string `json:"notes,omitempty"`
}

// Step is one gated deploy of the rotation.
type Step struct {
	Name     string             `json:"name"` // accept/canary, switch/router, drop/canary
	Kind     string             `json:"kind"`
	Wave     string             `json:"wave,omitempty"`
	Cells    []string           `json:"cells,omitempty"`
	State    string             `json:"state"`
	Started  *time.Time         `json:"started,omitempty"`
	Finished *time.Time         `json:"finished,omitempty"`
	Verdicts []executor.Verdict `json:"verdicts,omitempty"`
	Error    string             `json:"error,omitempty"`
}

// Complete reports whether every step is done.
func (r *Record) Complete() bool {
	for _, s := range r.Steps {
		if s.State != Done {
			return false
		}
	}
	return true
}

func (r *Record) step(name string) *Step {
	for _, s := range r.Steps {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Rotator runs rotations.
type Rotator struct {
	Fleet *fleet.Fleet
	// Waves are the rollout waves (waves.yaml's, bakes as the deploy
	// command scales them).
	Waves  []executor.Wave
	Engine Engine
	// Runner is the apply path every phase's up goes through
	// (internal/apply.Runner: the safety gates, then the engine); nil:
	// Engine.
	Runner runplan.StackRunner
	Gate   executor.Gate
	Store  Store
	Clock  executor.Clock
	Log    io.Writer
}

// Options are one run's choices.
type Options struct {
	// Steps stops after this many steps (0: run to the end); a rerun
	// continues.
	Steps int
	// Stop, once closed, starts no new step.
	Stop <-chan struct{}
}

// ErrPaused says the run stopped after Options.Steps with steps to go.
var ErrPaused = errors.New("paused")

func (r *Rotator) logf(format string, args ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, format+"\n", args...)
	}
}

func (r *Rotator) now() time.Time {
	if r.Clock == nil {
		return time.Now().UTC()
	}
	return r.Clock.Now().UTC()
}

// Run starts a rotation, or resumes the one its record says is under way.
// It returns the record as saved.
func (r *Rotator) Run(ctx context.Context, o Options) (*Record, error) {
	f := r.Fleet
	if f.Router == nil {
		return nil, fmt.Errorf("the fleet has no router (%s/Pulumi.router.yaml): nothing sends the origin-verify secret", f.StackDir)
	}
	if len(r.Waves) == 0 {
		return nil, fmt.Errorf("%s: the fleet has no waves; a rotation goes wave by wave", fleet.WavesFile)
	}
	inWave := map[string]bool{}
	for _, w := range r.Waves {
		for _, c := range w.Cells {
			inWave[c] = true
		}
	}
	for _, id := range f.CellIDs() {
		if !inWave[id] {
			return nil, fmt.Errorf("%s: cell %s is in no wave: a rotation goes wave by wave through every cell; add it to a wave first", fleet.WavesFile, id)
		}
	}
	unlock, err := r.Store.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := r.Store.Load(ctx)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Complete() {
		rec = r.newRecord()
		r.logf("rotation %s: %d steps (accept the next value wave by wave, switch the router, drop the old value wave by wave)", rec.ID, len(rec.Steps))
	} else {
		r.logf("rotation %s: resuming from its record", rec.ID)
		rec.Notes = append(rec.Notes, fmt.Sprintf("%s: resumed", r.now().Format(time.RFC3339)))
		r.adopt(rec)
	}
	// Every stack file holds the current value (recovered from the
	// deployed state when a file lacks it).
	if _, err := r.Engine.EnsureOriginVerifySecret(ctx, f.StackNames()); err != nil {
		return rec, err
	}
	if err := r.save(ctx, rec); err != nil {
		return rec, err
	}
	ran := 0
	for {
		s := pending(rec)
		if s == nil {
			break
		}
		if o.Steps > 0 && ran == o.Steps {
			r.logf("rotation %s: paused after %d step(s) before %s; run `cellctl secret rotate` again to continue", rec.ID, ran, s.Name)
			return rec, ErrPaused
		}
		select {
		case <-o.Stop:
			return rec, fmt.Errorf("rotation %s: stopped before %s; run `cellctl secret rotate` again to continue", rec.ID, s.Name)
		default:
		}
		cur, next, err := r.values(ctx, rec)
		if err != nil {
			return rec, fmt.Errorf("rotation %s: %s: %w", rec.ID, s.Name, err)
		}
		// values may have put earlier steps back to pending.
		if err := r.runStep(ctx, rec, pending(rec), cur, next); err != nil {
			return rec, err
		}
		ran++
	}
	t := r.now()
	rec.Finished = &t
	r.logf("rotation %s: complete — every cell accepts only the new value, and CloudFront sends it", rec.ID)
	return rec, r.save(ctx, rec)
}

// adopt gives a cell that joined a wave since the rotation started
// (`cellctl cell add` mid-rotation) the phase's values: it joins its
// wave's steps, and the step of its wave that already ran for the phase
// the rotation is in runs again — the accept before the router switched
// (the new cell must accept the next value before CloudFront sends it),
// the drop after (it must accept what the router sends). Rerunning a step
// is safe: the other cells already hold its values.
func (r *Rotator) adopt(rec *Record) {
	in := map[string]bool{}
	for _, s := range rec.Steps {
		for _, c := range s.Cells {
			in[c] = true
		}
	}
	switched := false
	if sw := rec.step(Switch + "/" + fleet.RouterStack); sw != nil && sw.State == Done {
		switched = true
	}
	for _, w := range r.Waves {
		for _, c := range w.Cells {
			if in[c] {
				continue
			}
			for _, s := range rec.Steps {
				if s.Wave != w.Name || s.Kind == Switch {
					continue
				}
				s.Cells = append(s.Cells, c)
				if s.State == Done && (s.Kind == Drop || !switched) {
					s.State = Pending
					rec.Notes = append(rec.Notes, fmt.Sprintf("%s: %s joined wave %s during the rotation: running the step again for it", s.Name, c, w.Name))
					r.logf("%s: %s joined wave %s during the rotation: running this step again so it gets the rotation's values", s.Name, c, w.Name)
				}
			}
		}
	}
}

func (r *Rotator) newRecord() *Record {
	now := r.now()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	rec := &Record{ID: now.Format("20060102T150405Z") + "-" + fmt.Sprintf("%x", b), Started: now}
	for _, w := range r.Waves {
		rec.Steps = append(rec.Steps, &Step{Name: Accept + "/" + w.Name, Kind: Accept, Wave: w.Name, Cells: w.Cells, State: Pending})
	}
	rec.Steps = append(rec.Steps, &Step{Name: Switch + "/" + fleet.RouterStack, Kind: Switch, State: Pending})
	for _, w := range r.Waves {
		rec.Steps = append(rec.Steps, &Step{Name: Drop + "/" + w.Name, Kind: Drop, Wave: w.Name, Cells: w.Cells, State: Pending})
	}
	return rec
}

func (r *Rotator) save(ctx context.Context, rec *Record) error {
	rec.Updated = r.now()
	if err := r.Store.Save(context.WithoutCancel(ctx), rec); err != nil {
		return fmt.Errorf("saving rotation %s's record: %w", rec.ID, err)
	}
	return nil
}

func (r *Rotator) keys() (string, string) {
	return r.Fleet.ConfigKey(fleet.OriginVerifyKey), r.Fleet.ConfigKey(fleet.OriginVerifyNextKey)
}

// values returns the current and the next value as the stack files and
// the deployed state say. Before the switch, the current value is what
// every cell's file holds as its primary value, and the next one is the
// cells' next value, else one a deployed cell already accepts besides the
// current, else a new one — minted only while nothing deployed accepts
// another value, so no step done before is lost. After the switch the
// router's value is the next one (the current is no longer needed).
func (r *Rotator) values(ctx context.Context, rec *Record) (cur, next string, err error) {
	key, nextKey := r.keys()
	if sw := rec.step(Switch + "/" + fleet.RouterStack); sw != nil && sw.State == Done {
		v, found, err := r.Engine.StackSecret(fleet.RouterStack, key)
		if err != nil || !found {
			return "", "", fmt.Errorf("reading the router's %s: %v", key, err)
		}
		return "", v, nil
	}
	for _, id := range r.Fleet.CellIDs() {
		v, found, err := r.Engine.StackSecret(id, key)
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
		n, found, err := r.Engine.StackSecret(id, nextKey)
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
	for _, id := range r.Fleet.CellIDs() {
		d, err := r.Engine.DeployedOriginSecret(ctx, id)
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
		rec.Notes = append(rec.Notes, "the next value was recovered from the deployed cells (the stack files lacked it)")
		return cur, next, nil
	}
	// Nothing deployed accepts another value: any accept step recorded as
	// done has been undone since, so it runs again with the new value.
	for _, s := range rec.Steps {
		if s.Kind == Accept && s.State == Done {
			s.State = Pending
			rec.Notes = append(rec.Notes, fmt.Sprintf("%s: no deployed cell accepts a next value any more; running the step again", s.Name))
		}
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", "", err
	}
	return cur, base64.RawURLEncoding.EncodeToString(buf), nil
}

// pending is the first step not done.
func pending(rec *Record) *Step {
	for _, s := range rec.Steps {
		if s.State != Done {
			return s
		}
	}
	return nil
}

func (r *Rotator) runStep(ctx context.Context, rec *Record, s *Step, cur, next string) error {
	var err error
	t := r.now()
	if s.State == Pending {
		s.Started = &t
	}
	s.State, s.Error = Running, ""
	if err := r.save(ctx, rec); err != nil {
		return err
	}
	r.logf("%s: %s", s.Name, describe(s))
	switch s.Kind {
	case Accept:
		err = r.cells(ctx, rec, s, map[string]*string{r.key(): &cur, r.nextKey(): &next})
	case Switch:
		err = r.switchRouter(ctx, rec, s, cur, next)
	case Drop:
		err = r.drop(ctx, rec, s, next)
	}
	if err != nil {
		s.State, s.Error = Halted, err.Error()
		if serr := r.save(ctx, rec); serr != nil {
			return errors.Join(err, serr)
		}
		return err
	}
	done := r.now()
	s.State, s.Finished = Done, &done
	r.logf("%s: done", s.Name)
	return r.save(ctx, rec)
}

func (r *Rotator) key() string     { k, _ := r.keys(); return k }
func (r *Rotator) nextKey() string { _, k := r.keys(); return k }

func describe(s *Step) string {
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
func (r *Rotator) drop(ctx context.Context, rec *Record, s *Step, next string) error {
	d, err := r.Engine.DeployedOriginSecret(ctx, fleet.RouterStack)
	if err != nil {
		return fmt.Errorf("reading what the router sends: %w", err)
	}
	if v, ok := d.Sent(); !d.Deployed || !ok || v != next {
		return errors.New("refused: the deployed router does not send the new value to every origin; dropping the old value would refuse its requests")
	}
	return r.cells(ctx, rec, s, map[string]*string{r.key(): &next, r.nextKey(): nil})
}

// cells stores values in the step's cells' stack files and deploys them
// (bounded by the wave's max_parallel), then bakes the wave on its gate.
func (r *Rotator) cells(ctx context.Context, rec *Record, s *Step, values map[string]*string) error {
	for _, c := range s.Cells {
		if _, err := r.Engine.SetStackSecrets(ctx, c, values); err != nil {
			return err
		}
	}
	// A cell never deployed keeps the values in its file for its first
	// up; a rotation deploys no new cell.
	var deployed []string
	for _, c := range s.Cells {
		d, err := r.Engine.DeployedOriginSecret(ctx, c)
		if err != nil {
			return fmt.Errorf("reading what %s accepts: %w", c, err)
		}
		if d.Deployed {
			deployed = append(deployed, c)
		} else {
			r.logf("%s: %s is not deployed: its stack file has the values for its first up", s.Name, c)
		}
	}
	if len(deployed) == 0 {
		return nil
	}
	w := r.wave(s.Wave)
	g, gctx := errgroup.WithContext(ctx)
	if w.MaxParallel > 0 {
		g.SetLimit(w.MaxParallel)
	}
	for _, c := range deployed {
		g.Go(func() error { return r.up(gctx, c) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return r.bake(ctx, rec, s, w, deployed)
}

// switchRouter points the router's origins at the next value, once every
// deployed cell accepts it; a breach during the bake puts the current
// value back.
func (r *Rotator) switchRouter(ctx context.Context, rec *Record, s *Step, cur, next string) error {
	var refusing []string
	for _, id := range r.Fleet.CellIDs() {
		d, err := r.Engine.DeployedOriginSecret(ctx, id)
		if err != nil {
			return fmt.Errorf("reading what %s accepts: %w", id, err)
		}
		if d.Deployed && !slices.Contains(d.Accepts, next) {
			refusing = append(refusing, id)
		}
	}
	if router, err := r.Engine.DeployedOriginSecret(ctx, fleet.RouterStack); err != nil {
		return fmt.Errorf("reading what the router sends: %w", err)
	} else {
		// A router deployed before the fleet origin had one origin per
		// cell; one the fleet no longer has cannot be checked. The fleet
		// origin reaches the routed cells, all checked above.
		for origin := range router.Sends {
			if origin == cellmodule.RouterOriginID {
				continue
			}
			if c := r.Fleet.Cell(origin); c == nil && !slices.Contains(refusing, origin) {
				refusing = append(refusing, origin+" (not in the fleet)")
			}
		}
	}
	if len(refusing) > 0 {
		slices.Sort(refusing)
		return fmt.Errorf("refused: %s do not accept the next value in their deployed ALB rules; switching the router would refuse their requests — "+
			"a cell of waves.yaml's waves gets the values when `cellctl secret rotate` runs again; a cell in no wave must join one first (waves.yaml), then run `cellctl secret rotate`", strings.Join(refusing, ", "))
	}
	if _, err := r.Engine.SetStackSecrets(ctx, fleet.RouterStack, map[string]*string{r.key(): &next}); err != nil {
		return err
	}
	if err := r.up(ctx, fleet.RouterStack); err != nil {
		return err
	}
	first := r.Waves[0]
	bakeErr := r.bake(ctx, rec, s, first, r.Fleet.CellIDs())
	if bakeErr == nil {
		return nil
	}
	r.logf("%s: %v — putting the router back on the current value", s.Name, bakeErr)
	if _, err := r.Engine.SetStackSecrets(ctx, fleet.RouterStack, map[string]*string{r.key(): &cur}); err != nil {
		return fmt.Errorf("%w; putting the router back failed too: %v", bakeErr, err)
	}
	if err := r.up(ctx, fleet.RouterStack); err != nil {
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

// bake runs the wave's bake with the executor's bake loop
// (executor.Baker): a breach, an unreadable gate (fail closed) or an
// inconclusive end under on_inconclusive: halt stops the rotation. Every
// poll is saved in the step's record before it is acted on; a record that
// cannot be saved stops the rotation.
func (r *Rotator) bake(ctx context.Context, rec *Record, s *Step, w executor.Wave, cells []string) error {
	clock := r.Clock
	if clock == nil {
		clock = executor.RealClock{}
	}
	b := executor.Baker{Gate: r.Gate, Clock: clock, Stop: nil, Record: func(p executor.Poll) error {
		s.Verdicts = p.Verdicts
		return r.save(ctx, rec)
	}}
	res, err := b.Bake(ctx, executor.BakeSpec{Step: w.Name, Cells: cells, Start: clock.Now().UTC(), Duration: w.Bake, Poll: w.Poll})
	if err != nil {
		return fmt.Errorf("%s: %w; run `cellctl secret rotate` again to resume at this step", s.Name, err)
	}
	switch {
	case res.Decision == waves.Breached:
		why := res.Breach.String()
		if res.Breach.Signal == executor.SignalGate {
			why += " (a gate it cannot read is a breach: gates fail closed)"
		}
		return outcome.Halted(s.Name, fmt.Errorf("%s: %s; fix the cause, then `cellctl secret rotate` resumes at this step", s.Name, why))
	case res.Decision == waves.Inconclusive && w.OnInconclusive != waves.InconclusivePromote:
		return outcome.Halted(s.Name, fmt.Errorf("%s: the bake ended inconclusive (%s; on_inconclusive: halt); check the cells' traffic, then `cellctl secret rotate` resumes at this step", s.Name, res.Reason))
	}
	return nil
}

// MarshalRecord is the record as stored.
func MarshalRecord(r *Record) ([]byte, error) { return json.MarshalIndent(r, "", "  ") }
