package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/adapters/cellspec"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/awssts"
	"github.com/cellctl/cellctl/internal/cellid"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/safefile"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/waves/executor"
)

// MaxIndex is the highest cells:index (VPC 10.N.0.0/16).
const MaxIndex = 255

// AddOptions select what `cell add` does.
type AddOptions struct {
	// ID of the new cell; "" picks the next free one (cell-a … cell-z,
	// cell-aa …).
	ID string
	// Index is cells:index; negative picks the next free one.
	Index int
	// Wave of stacks/waves.yaml to put the cell in; "": the last.
	Wave string
	// Take is the buckets the cell gets once it is up: router.TakeAuto
	// (its capacity-proportional share, moved from the most loaded
	// cells) or a number.
	Take   int
	DryRun bool
	// Account, when set, is the AWS account the cell lives in
	// (cells:account); Role the IAM role its provider and cellctl's
	// readers assume there (aws:assumeRole): an ARN, or a role name in
	// Account. A role alone implies its ARN's account. ExternalID is the
	// id the role's trust policy requires, if any.
	Account, Role, ExternalID string
	// HostedZoneID and FleetDomain, when set, are the cell's
	// cells:hostedZoneId and cells:fleetDomain: a cell in another account
	// writes its records through its own provider, so in a zone of its
	// account (a delegated subdomain of the fleet's).
	HostedZoneID, FleetDomain string
}

// Placement is where a new cell lives: its stack file's account settings.
type Placement struct {
	Account      string `json:"account,omitempty"`
	RoleARN      string `json:"roleArn,omitempty"`
	ExternalID   string `json:"externalId,omitempty"`
	HostedZoneID string `json:"hostedZoneId,omitempty"`
	FleetDomain  string `json:"fleetDomain,omitempty"`
}

// placement checks --account/--role/--external-id as AWS and the loader
// will: a 12-digit account, a role ARN (or a name, made an ARN in the
// account), and the two agreeing.
func placement(o AddOptions) (Placement, error) {
	p := Placement{Account: o.Account, ExternalID: o.ExternalID, HostedZoneID: o.HostedZoneID, FleetDomain: o.FleetDomain}
	if p.Account != "" && !accountIDRe.MatchString(p.Account) {
		return Placement{}, fmt.Errorf("--account %q: must be a 12-digit AWS account id", p.Account)
	}
	if o.Role != "" {
		arn := o.Role
		if !strings.HasPrefix(arn, "arn:") {
			if p.Account == "" {
				return Placement{}, fmt.Errorf("--role %q is a role name: give --account too, or the role's ARN (arn:aws:iam::<account>:role/%s)", o.Role, o.Role)
			}
			arn = awssts.RoleARN{Partition: "aws", Account: p.Account, Path: "/", Name: o.Role}.String()
		}
		r, err := awssts.ParseRoleARN(arn)
		if err != nil {
			return Placement{}, fmt.Errorf("--role: %w", err)
		}
		if p.Account != "" && r.Account != p.Account {
			return Placement{}, fmt.Errorf("--role %s is in account %s, but --account says %s: a cell's role is in the cell's account", arn, r.Account, p.Account)
		}
		p.Account, p.RoleARN = r.Account, arn
	}
	if (p.HostedZoneID == "") != (p.FleetDomain == "") {
		return Placement{}, errors.New("--hosted-zone-id and --fleet-domain go together: the zone's id and the domain it holds, under which the cell's name is <id>.<domain>")
	}
	if p.ExternalID != "" {
		if p.RoleARN == "" {
			return Placement{}, errors.New("--external-id is the id a role's trust policy requires: give --role too")
		}
		if err := awssts.CheckExternalID(p.ExternalID); err != nil {
			return Placement{}, fmt.Errorf("--external-id: %w", err)
		}
	}
	return p, nil
}

var accountIDRe = regexp.MustCompile(`^\d{12}$`)

// AddReport is what `cell add` did, step by step.
type AddReport struct {
	Cell      string `json:"cell"`
	Index     int    `json:"index"`
	Wave      string `json:"wave"`
	StackFile string `json:"stackFile"`
	// Placement is the account the cell lives in, when not the caller's.
	Placement *Placement `json:"placement,omitempty"`
	Steps     []string   `json:"steps"`
	Report
}

// AddCell creates a cell in one command: it writes the cell's stack file,
// puts it in a wave, validates the fleet, deploys the cell, and only once
// the cell is up (its ECS service at steady state behind its ALB) gives it
// buckets and publishes the router. Until that last step the cell has no
// traffic, so a failure anywhere leaves the fleet serving exactly as
// before; the error says how to continue (run the same command again: a
// cell whose stack file exists but which is not in the routing table is
// continued) or undo.
func AddCell(ctx context.Context, env *Env, o AddOptions) (*AddReport, error) {
	fl, t, err := loadTable(env)
	if err != nil {
		return nil, err
	}
	rep := &AddReport{Report: Report{DryRun: o.DryRun}}
	step := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		rep.Steps = append(rep.Steps, s)
		env.logf("%s", s)
	}

	id := o.ID
	if id == "" {
		id = nextID(fl, t)
	} else if err := cellid.Check(id); err != nil {
		return nil, fmt.Errorf("cannot add %q: %w", id, err)
	}
	rep.Cell = id
	where, err := placement(o)
	if err != nil {
		return nil, fmt.Errorf("cannot add %q: %w", id, err)
	}
	if where != (Placement{}) {
		rep.Placement = &where
	}
	if cs, ok := t.Cell(id); ok {
		return nil, fmt.Errorf("cannot add %q: it is already in the routing table (%s, %d buckets); undrain it instead", id, cs.State, cs.Buckets.Count())
	}
	stackRel := filepath.Join(fl.StackDir, "Pulumi."+id+".yaml")
	stackPath := filepath.Join(fl.Dir, stackRel)
	rep.StackFile = stackRel
	undo := fmt.Sprintf("%s has no traffic (it is not in stacks/%s). To continue, fix the cause and run `cellctl cell add %s` again; "+
		"to undo, `cellctl destroy %s --release-protected`, then delete %s and remove %s from stacks/%s",
		id, fleet.RoutingFile, id, id, stackRel, id, fleet.WavesFile)

	existing := fl.Cell(id)
	if existing != nil {
		// A previous `cell add` stopped after writing the files.
		if o.Index >= 0 && o.Index != existing.Index {
			return nil, fmt.Errorf("cannot add %q with --index %d: %s exists with cells:index %d; continue without --index, or delete it first", id, o.Index, stackRel, existing.Index)
		}
		if a := existing.Access(); where != (Placement{}) && (a.Account != where.Account || a.Role.RoleARN != where.RoleARN) {
			return nil, fmt.Errorf("cannot add %q in account %s: %s exists in account %s; continue without --account/--role, or delete it first",
				id, where.Account, stackRel, a.AccountLabel())
		}
		rep.Index = existing.Index
		if w := fl.Waves.WaveOf(id); w >= 0 {
			rep.Wave = fl.Waves.Waves[w].Name
		}
		step("%s exists and %s is not routed yet: continuing the add", stackRel, id)
	} else {
		idx, err := pickIndex(fl, o.Index)
		if err != nil {
			return nil, fmt.Errorf("cannot add %q: %w", id, err)
		}
		rep.Index = idx
	}

	// The transition is computed now, to refuse early (--take too big, no
	// donor) and for the dry run; the run computes it again on the table
	// as it is once the cell is up.
	planned, err := router.AddCell(t, router.NewCell{ID: id}, router.AddOptions{Take: o.Take})
	if err != nil {
		return nil, err
	}

	// The fleet with the new cell, as data: its stack file and the waves
	// edit are loaded over the repository without being written, so the
	// validation and every gate below judge exactly what the run will
	// write, and a refusal leaves the repository byte-identical.
	var files map[string][]byte
	var filesText string
	wavesPath := filepath.Join(fl.Dir, fl.StackDir, fleet.WavesFile)
	wavesRel := filepath.Join(fl.StackDir, fleet.WavesFile)
	next := fl
	if existing == nil {
		wavesData, err := os.ReadFile(wavesPath)
		if err != nil {
			return nil, fmt.Errorf("cannot add %q: %w", id, err)
		}
		newWaves, wave, err := addToWave(wavesData, o.Wave, id)
		if err != nil {
			return nil, fmt.Errorf("cannot add %q to a wave of stacks/%s: %w", id, fleet.WavesFile, err)
		}
		rep.Wave = wave
		files = map[string][]byte{
			filepath.ToSlash(stackRel): stackFile(fl, id, rep.Index, where),
			filepath.ToSlash(wavesRel): newWaves,
		}
		if env.LoadWith == nil {
			return nil, fmt.Errorf("cannot add %q: this command cannot load the fleet with the new cell before writing it", id)
		}
		if next, err = env.LoadWith(files); err != nil {
			return nil, fmt.Errorf("the fleet is not valid with %s, nothing was written:\n%w", id, err)
		}
		if next.Cell(id) == nil {
			return nil, fmt.Errorf("cannot add %q: the fleet loaded with %s has no cell %s, nothing was written", id, stackRel, id)
		}
		in := ""
		if where.Account != "" {
			in = ", in account " + where.Account
			if where.RoleARN != "" {
				in += " through " + where.RoleARN
			}
		}
		filesText = fmt.Sprintf("%s (cells:index %d: VPC 10.%d.0.0/16%s) and add %s to wave %q of stacks/%s", stackRel, rep.Index, rep.Index, in, id, wave, fleet.WavesFile)
		step("validated the fleet with %s (%s and the %s edit, not written yet)", id, stackRel, wavesRel)
	}

	// Every preflight, in a dry run too, before the first file is
	// written: the table the deployed router serves, then apply's gates
	// for the cell's up over the fleet with it (offline render, isolation
	// and path audits, access to its account, immutable index and region,
	// quotas and hosted zones). A dry run reads, as the run does; it
	// writes nothing.
	eng, err := env.Engine(next)
	if err != nil {
		return nil, err
	}
	if err := base(ctx, env, eng, t, &rep.Report); err != nil {
		return nil, err
	}
	aenv := &apply.Env{
		Fleet: next, Engine: func() (apply.Engine, error) { return eng, nil },
		Parallel: env.Parallel, Log: env.Log, Events: env.Events, Stop: env.Stop,
		Bootstrap: env.Bootstrap,
	}
	if env.QuotaCheck != nil {
		// A new cell is where quota runs out: the same preflight as up.
		aenv.QuotaCheck = func(ctx context.Context, cells []string) error { return env.QuotaCheck(ctx, next, cells) }
	}
	if _, err := apply.Check(ctx, aenv, eng, []stackrun.Request{{Stack: id, Op: stackrun.OpUp}}, false); err != nil {
		nothing := "nothing was written"
		if existing != nil {
			nothing = "nothing was changed"
		}
		return nil, fmt.Errorf("cannot add %s, %s: %w", id, nothing, err)
	}
	quota := ""
	if env.QuotaCheck != nil {
		quota = ", its account's quotas and hosted zones"
	}
	step("preflight passed for %s: the offline render and audits of the fleet with it, access to its account%s", id, quota)

	// What the cell runs is the desired state's (env.Load and LoadWith
	// resolve it, internal/desired): what the fleet last shipped, which
	// may be newer than the repository's image. Said either way, since
	// the cell gets tenants.
	cell := next.Cell(id)
	repoImage := next.Baseline.Image
	if repo, err := fleet.LoadWith(next.Dir, files); err == nil && repo.Cell(id) != nil {
		repoImage = repo.Cell(id).Image
	}
	if cell.Image != repoImage {
		step("%s gets %s, what the fleet last shipped; the repository says %s — commit `%s: %s` to %s to make it say so",
			id, cell.Image, repoImage, next.ConfigKey("image"), cell.Image, stackRel)
	} else {
		step("%s gets %s", id, cell.Image)
	}
	// The new database gets the schema of that image before any tenant
	// reaches it — the migration a deploy's wave runs before a cell's
	// service moves, from the same image and command — once the fleet's
	// cells have a schema at all (a migration ran in one, per the
	// records). A fleet whose first up created its cells has run none: a
	// new cell migrated alone would be the only one with a schema, and
	// every other cell would look behind it.
	cfg, err := cellspec.FromSpec(cell.Cell)
	if err != nil {
		return nil, fmt.Errorf("cannot add %q: %w", id, err)
	}
	var migrator executor.Migrator
	var mplan executor.MigrationPlan
	mreq := executor.MigrationRequest{Cell: id, To: cfg}
	if env.Migrator != nil {
		migrated, err := fleetMigrated(ctx, env, next, id)
		if err != nil {
			return nil, fmt.Errorf("cannot add %q, nothing was written: %w", id, err)
		}
		if migrator = env.Migrator(next, eng); migrator != nil && migrated != "" {
			if mplan = migrator.Plan(mreq); !mplan.None() {
				step("%s's database gets the fleet's schema before any tenant: %s", id, migrated)
			}
		}
	}
	if !mplan.None() && env.Record == nil {
		return nil, fmt.Errorf("cannot add %q: its database must be migrated (%s) before it gets tenants, and this command cannot record the migration where status and deploy read a cell's schema", id, mplan)
	}

	// The plan: the add's steps in order. A dry run prints each step's
	// would; a run does each one.
	var steps []addStep
	if existing == nil {
		steps = append(steps, addStep{would: "write " + filesText, do: func(context.Context) error {
			if err := writeNew(stackPath, files[filepath.ToSlash(stackRel)]); err != nil {
				return fmt.Errorf("cannot add %q, nothing was written: %w", id, err)
			}
			if err := safefile.Write(wavesPath, files[filepath.ToSlash(wavesRel)], 0o644); err != nil {
				os.Remove(stackPath)
				return fmt.Errorf("cannot add %q, nothing was kept (%s removed): %w", id, stackRel, err)
			}
			step("wrote %s", strings.Replace(filesText, "and add", "and added", 1))
			return nil
		}})
	}
	left := fmt.Sprintf("what the engine created of stack %s", id)
	if existing == nil {
		left = fmt.Sprintf("%s and %s in wave %q of %s (written by this add), and %s", stackRel, id, rep.Wave, wavesRel, left)
	}
	steps = append(steps, addStep{would: fmt.Sprintf("deploy %s (cellctl up %s)", id, id), do: func(ctx context.Context) error {
		step("deploying %s (cellctl up %s)", id, id)
		// The gates ran above over this very fleet, quota included: the
		// up checks again (the files are on disk now) but does not read
		// the quotas twice.
		aenv.QuotaCheck = nil
		ar, err := apply.Up(ctx, aenv, apply.Options{Cells: []string{id}})
		if ar != nil && ar.Result != nil {
			rep.Stacks = append(rep.Stacks, ar.Result.Stacks...)
			if err == nil {
				err = ar.Result.Err()
			}
		}
		if err != nil {
			return fmt.Errorf("deploying %s failed: %w\nleft as they are: %s.\n%s", id, err, left, undo)
		}
		step("%s is up: its service reached steady state behind its ALB and its database users exist", id)
		return nil
	}})
	if !mplan.None() {
		recImage := ""
		if cfg.Image != repoImage {
			recImage = repoImage
		}
		steps = append(steps, addStep{would: fmt.Sprintf("migrate %s's database before it gets tenants: %s", id, mplan), do: func(ctx context.Context) error {
			return migrateNew(ctx, env, migrator, mreq, mplan, recImage, step, undo)
		}})
	}
	steps = append(steps, addStep{would: fmt.Sprintf("give %s %d buckets (%.1f%% of tenants) and publish the router (table version %d)", id, planned.MovedBuckets, planned.MovedShare*100, planned.ToVersion), do: func(ctx context.Context) error {
		fl, err := env.Load()
		if err != nil {
			return fmt.Errorf("%w\n%s", err, undo)
		}
		tr, err := router.AddCell(fl.Routing, router.NewCell{ID: id}, router.AddOptions{Take: o.Take})
		if err != nil {
			return fmt.Errorf("%w\n%s", err, undo)
		}
		next := fmt.Sprintf("%s is up and saved in stacks/%s; to continue, run `cellctl up router`; to undo, `cellctl drain %s`", id, fleet.RoutingFile, id)
		if err := change(ctx, env, fl, tr, next, &rep.Report); err != nil {
			if errors.As(err, new(*PublishError)) {
				return err
			}
			return fmt.Errorf("%w\n%s", err, undo)
		}
		step("%s takes %d buckets (%.1f%% of tenants); the router serves table version %d", id, tr.MovedBuckets, tr.MovedShare*100, tr.ToVersion)
		return nil
	}})

	if o.DryRun {
		for _, s := range steps {
			step("would %s", s.would)
		}
		rep.Transitions = append(rep.Transitions, planned)
		return rep, nil
	}
	would := make([]string, len(steps))
	for i, s := range steps {
		would[i] = s.would
	}
	if err := env.confirm(ctx, Proposal{Steps: would, Transitions: []*router.Transition{planned}}); err != nil {
		return nil, err
	}
	for _, s := range steps {
		if err := s.do(ctx); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// fleetMigrated says which of the fleet's other cells ran a migration, per
// the records ("" when none did, or the fleet keeps no records).
func fleetMigrated(ctx context.Context, env *Env, fl *fleet.Fleet, id string) (string, error) {
	if env.Records == nil {
		return "", nil
	}
	recs, err := env.Records(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the fleet's schema versions (the rollout records in the backend): %w", err)
	}
	states := executor.SchemaVersions(recs)
	var cells []string
	for _, c := range fl.CellIDs() {
		if _, ok := states[c]; ok && c != id {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return "", nil
	}
	// The versions they report, as they are (the target is the new
	// cell's image's own migration, not the newest version any cell
	// reports: a rolled-back release's may be among them).
	var versions []string
	for _, c := range cells {
		if v := states[c].Version; v != "" && !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		versions = []string{"unknown"}
	}
	return fmt.Sprintf("%s ran migrations (schema %s)", strings.Join(cells, ", "), strings.Join(versions, ", ")), nil
}

// migrateNew runs a new cell's schema migration and records it as a cell
// add's record (executor.KindCellAdd): one wave of the one cell, passed
// when the task exited 0, so status shows the cell's schema, drift reads
// it and the desired state holds the image the cell was given. A failed
// migration is recorded too (status shows it), and the cell gets no
// tenants.
//
// One migration at a time, as a rollout's: the record is saved running
// before the task starts (its RunTask token) and again once the task is
// named, so a cell add killed mid-migration leaves the task in the
// records; its rerun follows that task to its end (executor.Resumer)
// instead of starting a second one on the same database.
func migrateNew(ctx context.Context, env *Env, m executor.Migrator, req executor.MigrationRequest, p executor.MigrationPlan,
	repoImage string, step func(string, ...any), undo string) error {
	id := req.Cell
	now := time.Now().UTC()
	rec, prior, err := cellAddInFlight(ctx, env, id)
	if err != nil {
		return fmt.Errorf("reading the records for a migration an earlier `cell add %s` left: %w\n%s", id, err, undo)
	}
	if rec == nil {
		rec = &executor.Record{ID: executor.NewID(executor.KindCellAdd), Kind: executor.KindCellAdd, Started: now}
	}
	wr := executor.WaveRecord{Name: "cell add", State: executor.WaveUpdating, Started: rec.Started}
	cr := executor.CellRecord{Cell: id, State: executor.CellStateUpdating, After: req.To, RepoImage: repoImage}
	save := func(mig *executor.Migration) error {
		c, w := cr, wr
		c.Migration = mig
		w.Cells = []executor.CellRecord{c}
		rec.State, rec.Updated, rec.Waves = executor.Running, time.Now().UTC(), []executor.WaveRecord{w}
		return env.Record(ctx, rec)
	}
	var mig executor.Migration
	if prior.Unfinished() {
		res, ok := m.(executor.Resumer)
		if !ok {
			return fmt.Errorf("an earlier `cell add %s` left migration task %s running (record %s), and this migrator cannot follow it: check that it has stopped (aws ecs describe-tasks), then rerun\n%s",
				id, prior.TaskID(), rec.ID, undo)
		}
		step("following %s's migration task %s, which an earlier `cell add` left running (record %s): no second task starts on its database", id, prior.TaskID(), rec.ID)
		req.Token = prior.Token
		mig, err = res.Resume(ctx, req, *prior)
	} else {
		req.Token = "cellctl-" + rec.ID
		if prior.Starting() {
			// The earlier run died between asking for the task and naming
			// it: the same token gets that task back, if it started.
			req.Token = prior.Token
		}
		if err := save(&executor.Migration{Image: p.Image, Command: p.Command, Token: req.Token}); err != nil {
			return fmt.Errorf("keeping %s's migration in record %s before its start failed (nothing was started): %w\n%s", id, rec.ID, err, undo)
		}
		step("migrating %s's database: %s", id, p)
		started := time.Time{}
		mig, err = m.Migrate(ctx, req, func(task string) {
			started = time.Now().UTC()
			step("%s's migration task %s started", id, task[strings.LastIndex(task, "/")+1:])
			// Best effort: the token saved above already lets a rerun get
			// this task back.
			_ = save(&executor.Migration{Image: p.Image, Command: p.Command, Token: req.Token, Task: task, Started: started})
		})
		if mig.Started.IsZero() {
			mig.Started = started
		}
	}
	if mig.Image == "" {
		mig.Image, mig.Command = p.Image, p.Command
	}
	if mig.Token == "" {
		mig.Token = req.Token
	}
	if errors.Is(err, executor.ErrStopped) {
		// Interrupted: the task runs on, named in the record; the rerun
		// follows it.
		if serr := save(&mig); serr != nil {
			return fmt.Errorf("%w; keeping the running task in record %s failed too: %v\n%s", err, rec.ID, serr, undo)
		}
		return fmt.Errorf("%s's migration task %s runs on (record %s): rerun `cellctl cell add` to follow it: %w", id, mig.TaskID(), rec.ID, err)
	}
	if mig.Stopped.IsZero() {
		mig.Stopped = time.Now().UTC()
	}
	if err != nil && mig.Error == "" {
		mig.Error = err.Error()
	}
	cr.State, cr.Migration, cr.Updated = executor.CellStateUpdated, &mig, mig.Stopped
	wr.State, wr.Finished = executor.WaveDone, mig.Stopped
	rec.State, rec.Updated, rec.Finished, rec.Error = executor.Complete, mig.Stopped, mig.Stopped, ""
	if !mig.OK() {
		cr.State, cr.Error = executor.CellStateFailed, "migration failed: "+mig.Failure()
		wr.State, wr.Reason = executor.WaveHalted, cr.Error
		rec.State, rec.Error, rec.Finished = executor.HaltedState, cr.Error, time.Time{}
	}
	wr.Cells = []executor.CellRecord{cr}
	rec.Waves = []executor.WaveRecord{wr}
	if rerr := env.Record(ctx, rec); rerr != nil {
		what := "passed"
		if !mig.OK() {
			what = "failed: " + mig.Failure()
		}
		return fmt.Errorf("%s's migration %s, but keeping its record %s failed (status and deploy would not know the cell's schema): %w\n%s", id, what, rec.ID, rerr, undo)
	}
	if !mig.OK() {
		return fmt.Errorf("the migration of %s's database failed (record %s): %s\n%s", id, rec.ID, mig.Failure(), undo)
	}
	version := ""
	if mig.SchemaVersion != "" {
		version = ", schema version " + mig.SchemaVersion
	}
	step("%s's migration task %s exited 0%s (record %s)", id, mig.TaskID(), version, rec.ID)
	return nil
}

// cellAddInFlight finds the newest cell add record of cell that is still
// unfinished — its run died or was stopped during the migration — and that
// record's migration: what a rerun must follow or restart with the same
// token before anything else runs on the cell's database. (nil, nil):
// none, or no record reader.
func cellAddInFlight(ctx context.Context, env *Env, cell string) (*executor.Record, *executor.Migration, error) {
	if env.Records == nil {
		return nil, nil, nil
	}
	recs, err := env.Records(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range executor.NewestFirst(slices.Clone(recs)) {
		if r.Kind != executor.KindCellAdd || !r.Unfinished() || len(r.Waves) == 0 {
			continue
		}
		for _, c := range r.Waves[0].Cells {
			if c.Cell == cell && (c.Migration.Unfinished() || c.Migration.Starting()) {
				return r, c.Migration, nil
			}
		}
	}
	return nil, nil, nil
}

// addStep is one step of a cell add: what a dry run says it would do, and
// the doing.
type addStep struct {
	would string
	do    func(context.Context) error
}

// stackFile is a new cell's stack file: its index, everything else from
// the fleet baseline in Pulumi.yaml. The origin-verify secret is added
// (encrypted) by the first up, copied from the fleet's other stacks.
func stackFile(fl *fleet.Fleet, id string, index int, where Placement) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Added by `cellctl cell add %s`. Everything but the index comes from the\n"+
		"# fleet baseline in Pulumi.yaml; override here only what must differ.\nconfig:\n  %s: %d\n", id, fl.ConfigKey("index"), index)
	if where.Account != "" {
		// The account is data the loader checks against the role, and
		// the provider's own aws:assumeRole is what both the engine and
		// cellctl's readers use to reach it.
		fmt.Fprintf(&b, "  # This cell lives in account %s.\n  %s: %q\n", where.Account, fl.ConfigKey(fleet.AccountKey), where.Account)
	}
	if where.HostedZoneID != "" {
		fmt.Fprintf(&b, "  # Its records go in this zone (its provider writes them).\n  %s: %s\n  %s: %s\n",
			fl.ConfigKey("fleetDomain"), where.FleetDomain, fl.ConfigKey("hostedZoneId"), where.HostedZoneID)
	}
	if where.RoleARN != "" {
		fmt.Fprintf(&b, "  aws:assumeRole:\n    roleArn: %s\n", where.RoleARN)
		if where.ExternalID != "" {
			fmt.Fprintf(&b, "    externalId: %q\n", where.ExternalID)
		}
	}
	return []byte(b.String())
}

// writeNew creates path with data, refusing to replace a file.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// nextID is the first of cell-a … cell-z, cell-aa, cell-ab … that neither
// the fleet nor the routing table uses.
func nextID(fl *fleet.Fleet, t *router.Table) string {
	used := map[string]bool{}
	for _, c := range fl.CellIDs() {
		used[c] = true
	}
	for _, c := range t.CellIDs() {
		used[c] = true
	}
	for n := 0; ; n++ {
		id := "cell-" + letters(n)
		if !used[id] {
			return id
		}
	}
}

// letters is n in bijective base 26: a … z, aa, ab ….
func letters(n int) string {
	var b []byte
	for n++; n > 0; n = (n - 1) / 26 {
		b = append(b, byte('a'+(n-1)%26))
	}
	slices.Reverse(b)
	return string(b)
}

// pickIndex checks a requested index, or picks the one after the highest
// in use (the lowest free one when that is past MaxIndex).
func pickIndex(fl *fleet.Fleet, want int) (int, error) {
	used := map[int]string{}
	high := 0
	for _, c := range fl.Cells {
		used[c.Index] = c.ID
		high = max(high, c.Index)
	}
	if want >= 0 {
		if want > MaxIndex {
			return 0, fmt.Errorf("--index %d: cells:index is from 0 to %d (VPC 10.N.0.0/16); leave --index out to take the next free one", want, MaxIndex)
		}
		if other, ok := used[want]; ok {
			return 0, fmt.Errorf("--index %d is %s's (VPC 10.%d.0.0/16); free indexes: %s", want, other, want, freeIndexes(used))
		}
		return want, nil
	}
	if high+1 <= MaxIndex {
		return high + 1, nil
	}
	for i := 1; i <= MaxIndex; i++ {
		if _, ok := used[i]; !ok {
			return i, nil
		}
	}
	return 0, fmt.Errorf("every cells:index from 1 to %d is in use", MaxIndex)
}

func freeIndexes(used map[int]string) string {
	var free []string
	for i := 1; i <= MaxIndex && len(free) < 5; i++ {
		if _, ok := used[i]; !ok {
			free = append(free, fmt.Sprint(i))
		}
	}
	return strings.Join(free, ", ") + " …"
}
