package apply

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// The backend is the fleet's memory, not the checkout: a checkout that
// was not pulled after another one changed the fleet holds older stack
// files, and shipping them would silently undo the newer change. Before an
// up ships a stack, what it is about to ship is compared with what the
// backend says was last shipped — the routing table with the deployed
// router's (version and checksum), the origin-verify secret with the
// newest rotation record (by digest) — and an older checkout is refused
// (outcome.BehindError, exit 4) with the command that catches it up.

// pullNext is what a checkout behind the fleet runs next.
const pullNext = "bring this checkout up to date (`git pull`) and run the command again"

// tableBehind refuses shipping the router with a routing table older than
// the one the deployed router serves: a lower version, or the same version
// with other content (two checkouts each made a "version N"). Republishing
// an older table would undo a drain's moves or lift a migrating tenant's
// write block mid-copy. A router never deployed, or deployed before it
// exported its table, is not compared.
func tableBehind(ctx context.Context, fl *fleet.Fleet, r DeployedReader) error {
	if fl.Routing == nil {
		return nil
	}
	outs, err := r.DeployedOutputs(ctx, fleet.RouterStack)
	if errors.Is(err, stackrun.ErrNotDeployed) || err == nil && neverCompleted(outs) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("router: cannot read the deployed router's outputs to compare its routing table with this checkout's, nothing was run: %w", err)
	}
	raw, ok := outs["tableVersion"]
	if !ok {
		return nil
	}
	v, ok := raw.(float64)
	if !ok || v != math.Trunc(v) || v < 0 {
		return fmt.Errorf("router: the deployed router's tableVersion output is %v, not a version number, so the table it serves is unknown; nothing was run", raw)
	}
	return compareTable(fl, int64(v), stringOf(outs, "tableChecksum"))
}

// compareTable is tableBehind's verdict on the deployed version and
// checksum ("" when the router predates checksums).
func compareTable(fl *fleet.Fleet, deployed int64, checksum string) error {
	local := fl.Routing
	file := fl.StackDir + "/" + fleet.RoutingFile
	switch {
	case deployed > local.Version():
		return outcome.Behind(fmt.Errorf("refused, nothing was run: the deployed router serves routing table version %d, newer than %s here (version %d): "+
			"this checkout is older than the fleet, and shipping the router would put the older table back on the edge "+
			"(undoing the drains, migrations and pins published since — a migrating tenant's writes would be accepted mid-copy). "+
			"Versions only go up: to route as an older table did, commit its content as version %d",
			deployed, file, local.Version(), deployed+1), pullNext)
	case deployed == local.Version() && checksum != "" && checksum != local.Checksum():
		return outcome.Behind(fmt.Errorf("refused, nothing was run: the deployed router serves routing table version %d %s, but %s here is another version %d (%s), "+
			"made in another checkout from the same base; shipping it would replace the published one",
			deployed, checksum, file, local.Version(), local.Checksum()), pullNext+" (merge this checkout's table change onto the published table as a new version)")
	}
	return nil
}

func stringOf(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// SecretDigester is an engine that digests a stack file's secret config
// value (engine.SecretDigest: SHA-256, never the value).
type SecretDigester interface {
	SecretDigest(ctx context.Context, stack, key string) (digest string, present bool, err error)
}

// backendOf is an engine that names its Pulumi backend (engine.Backend):
// the rotation records live beside the stacks.
type backendOf interface {
	Backend() string
}

// records reads the backend's records afresh (a rotation's own ups read
// its record as it is now): Env.Records, else the engine's backend.
func records(ctx context.Context, env *Env, eng Engine) ([]*executor.Record, error) {
	if env.Records != nil {
		return env.Records(ctx)
	}
	b, ok := eng.(backendOf)
	if !ok {
		return nil, nil
	}
	url := b.Backend()
	// Records are kept in a bucket backend only (the Pulumi Cloud holds
	// none: no rotation can have recorded anything there).
	if !strings.HasPrefix(url, "file://") && !strings.HasPrefix(url, "s3://") {
		return nil, nil
	}
	rs, err := rollout.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	return backend.New(rs).List(ctx)
}

// lastRotation is the newest rotation record, when it says what it ships
// (nil otherwise: one an older cellctl wrote, or one that has not reached
// its first step, says nothing — an older record is no guide then).
func lastRotation(recs []*executor.Record) *executor.Record {
	newest := executor.Newest(recs, executor.KindRotation)
	if newest == nil || newest.Origin == nil || newest.Origin.To == "" {
		return nil
	}
	return newest
}

// originBehind refuses shipping stacks whose stack files hold an
// origin-verify secret the newest rotation record says the fleet no longer
// runs: the value a completed rotation replaced (every cell would refuse
// what CloudFront sends, or CloudFront send what no cell accepts), or,
// while a rotation is under way, a value that undoes one of its finished
// steps. A stack file without the value is not compared: the engine gives
// it what the stack runs (EnsureOriginVerifySecret), and the comparison
// runs again after that. Unreadable records fail closed.
func originBehind(ctx context.Context, env *Env, eng Engine, stacks []string) error {
	d, ok := eng.(SecretDigester)
	if !ok || len(stacks) == 0 {
		return nil
	}
	recs, err := records(ctx, env, eng)
	if err != nil {
		var bad *backend.UnreadableError
		if !errors.As(err, &bad) || bad.Any("s-") {
			return fmt.Errorf("reading the rotation records in the backend to compare the origin-verify secret with what was last shipped, nothing was run: %w", err)
		}
	}
	rot := lastRotation(recs)
	if rot == nil {
		return nil
	}
	key, nextKey := env.Fleet.ConfigKey(fleet.OriginVerifyKey), env.Fleet.ConfigKey(fleet.OriginVerifyNextKey)
	var behind []string
	for _, s := range stacks {
		cur, found, err := d.SecretDigest(ctx, s, key)
		if err != nil {
			return fmt.Errorf("%s: reading %s to compare it with what was last shipped, nothing was run: %w", s, key, err)
		}
		if !found {
			continue
		}
		next, hasNext, err := d.SecretDigest(ctx, s, nextKey)
		if err != nil {
			return fmt.Errorf("%s: reading %s to compare it with what was last shipped, nothing was run: %w", s, nextKey, err)
		}
		if why := originVerdict(rot, s, env.Fleet.Cell(s) != nil, cur, next, hasNext); why != "" {
			behind = append(behind, s+": "+why)
		}
	}
	if len(behind) == 0 {
		return nil
	}
	state := "under way"
	if rot.State == executor.Complete {
		state = "completed " + rot.Finished.UTC().Format("2006-01-02T15:04:05Z")
	}
	return outcome.Behind(fmt.Errorf("refused, nothing was run: this checkout's origin-verify secret is older than what the fleet runs "+
		"(rotation %s, %s, in the backend's records):\n  %s", rot.ID, state, strings.Join(behind, "\n  ")),
		pullNext+" — the rotation's stack files are committed where it ran; `cellctl secret rotate` continues a rotation under way")
}

// originVerdict judges what one stack is about to ship (digests: its
// value, and its next value when hasNext) against rotation rot; "" when
// it may ship.
func originVerdict(rot *executor.Record, stack string, isCell bool, cur, next string, hasNext bool) string {
	o := rot.Origin
	if rot.State == executor.Complete {
		switch {
		case cur == o.To && !hasNext:
			return ""
		case cur == o.To:
			return "its stack file still accepts a second value, which the rotation dropped from every cell"
		case o.From != "" && cur == o.From:
			return "its stack file holds the value the rotation replaced"
		}
		return "its stack file holds a value the rotation never shipped"
	}
	known := func(v string) bool { return v == o.To || o.From != "" && v == o.From }
	if !known(cur) || hasNext && !known(next) {
		return "its stack file holds a value the rotation under way does not rotate between"
	}
	switch {
	case !isCell:
		if stepDone(rot, executor.RotationSwitch, "") && cur != o.To {
			return "its stack file sends the value the rotation's switch replaced"
		}
	case stepDone(rot, executor.RotationDrop, stack):
		if cur != o.To || hasNext {
			return "its stack file accepts the value the rotation's drop step removed"
		}
	case stepDone(rot, executor.RotationAccept, stack):
		if cur != o.To && (!hasNext || next != o.To) {
			return "its stack file does not accept the new value the rotation's accept step added"
		}
	}
	return ""
}

// stepDone reports whether rot's step of kind is done — for a cell, the
// step of its wave.
func stepDone(rot *executor.Record, kind, cell string) bool {
	for _, s := range rot.Steps {
		if s.Kind == kind && (cell == "" || slices.Contains(s.Cells, cell)) {
			return s.State == executor.WaveDone
		}
	}
	return false
}
