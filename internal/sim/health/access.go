package health

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// The data plane. A cell's traffic honours its access: the requests its
// app makes while serving (cellmodule.ServingPaths: write and read its
// prefix of the fleet bucket, send to and receive from its queue) are
// decided by internal/access — the evaluator `plan` and the apply gate
// use — against the live policies the simulated cloud holds, so a change
// made out of band (`sim edit`, which no plan or gate sees) shows in the
// rehearsal the way AWS would show it: as errors in the cell's traffic.
//
// What a denied path does to the traffic: the simulated app is one whose
// every request reads or writes its prefix and hands work to its queue, so
// with any serving path denied every request is answered 5xx by the
// targets. The tasks stay healthy — the load balancer's health check does
// not touch the bucket or the queue — and the latency is the profile's.
//
// What the decision reads: the cell's own stack and its fleet's router
// stack (same Pulumi project, stack "router": the fleet bucket, its policy,
// its default encryption and the key's policy), from this account or — a
// cell in another account than its router — from the account that holds
// the router. Only a Denied decision (explicit or implicit) degrades the
// traffic; anything the model cannot decide (the router's records nowhere
// in the simulated cloud, a policy the evaluator cannot read, a condition
// it does not know) leaves the traffic alone: the rehearsal must never
// invent an error AWS would not show.

// dataPlane is one cell's decision.
type dataPlane struct {
	// denied are the serving paths the live policies deny.
	denied []access.Result
	// changed is when the newest record the decision read last changed:
	// minutes that ended before it keep the decision recorded then.
	changed time.Time
}

func (d dataPlane) failing() bool { return len(d.denied) > 0 }

// accessCache keeps each cell's decision while the records it was
// decided from are unchanged (the revisions of the cell's and the
// router's shards): every reader of the health model (each gate poll,
// each GetMetricData) decides every cell, and building the model is the
// costly part.
var accessCache sync.Map // cell identity (the cell's shard path) → cachedAccess

type cachedAccess struct {
	rev string
	dp  dataPlane
}

// stackRecords are one stack's live resources, as the access model reads
// them, with the account that holds them and their revision ("" when
// what is derived from them may not be kept). They are converted on
// first use (load): a cached decision needs only the revision.
type stackRecords struct {
	project, stack, account string
	rev                     string

	v    *store.View
	recs []*store.Record

	loaded    bool
	resources []*offline.Resource
	regions   []string // each resource's region, by index
	changed   time.Time
}

func newStackRecords(v *store.View, key string, recs []*store.Record) *stackRecords {
	project, stack := store.SplitKey(key)
	sr := &stackRecords{project: project, stack: stack, account: v.Account(), v: v, recs: recs}
	if rev, ok := v.State.Revision(key); ok {
		sr.rev = fmt.Sprintf("%s@%v", rev.Path, rev.File)
	}
	return sr
}

// load converts the records to what access.Build reads: the live resource
// is its outputs (what AWS holds, and what `sim edit` changes), which
// carry every input the provider was given.
func (sr *stackRecords) load() {
	if sr.loaded {
		return
	}
	sr.loaded = true
	for _, r := range sr.recs {
		if r.Abandoned {
			continue // forgotten by its stack (a retired edge function): no path uses it
		}
		outs := sr.v.Outputs(r).Copy()
		sr.resources = append(sr.resources, &offline.Resource{URN: r.URN, Type: r.Type, Name: r.Name, Custom: true, ID: r.ID,
			Inputs: outs, Outputs: outs})
		sr.regions = append(sr.regions, r.Region)
		if r.Updated.After(sr.changed) {
			sr.changed = r.Updated
		}
	}
	sr.v, sr.recs = nil, nil
}

// accessStacks are a stack's resources as access.Stacks, one per region
// (keys and AWS managed keys are regional; IAM is global).
func (sr *stackRecords) accessStacks(owner string) []offline.Stack {
	sr.load()
	by := map[string]*offline.Stack{}
	var order []string
	for i, r := range sr.resources {
		region := sr.regions[i]
		s := by[region]
		if s == nil {
			s = &offline.Stack{Name: sr.stack, Owner: owner, Account: sr.account, Region: region, Partition: "aws"}
			by[region] = s
			order = append(order, region)
		}
		s.Resources = append(s.Resources, r)
	}
	sort.Strings(order)
	out := make([]offline.Stack, 0, len(order))
	for _, region := range order {
		out = append(out, *by[region])
	}
	return out
}

// foreignRouters reads the router stacks of the simulator's other
// accounts, each under its own shared lock, before the caller takes its
// own cloud's lock: a cell in another account than its router reads the
// bucket's policies from there, and a process holding one account's lock
// while it waits for another's could wait forever on a process doing the
// reverse.
func foreignRouters(c *store.Cloud) []*stackRecords {
	var out []*stackRecords
	for _, o := range c.Others() {
		_ = o.Read(func(st *store.State, _ *store.Control) error {
			v := o.NewView(st)
			byKey := map[string][]*store.Record{}
			for _, r := range st.Resources {
				if r.Stack == fleet.RouterStack {
					byKey[r.Key()] = append(byKey[r.Key()], r)
				}
			}
			for key, recs := range byKey {
				sr := newStackRecords(v, key, recs)
				sr.load() // while the lock is held
				out = append(out, sr)
			}
			return nil
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].account+"/"+out[i].project < out[j].account+"/"+out[j].project })
	return out
}

// decideDataPlane decides the serving paths of every cell that serves
// traffic (healthCells), from the cache while the records are unchanged.
func decideDataPlane(v *store.View, cells []*cellHealth, foreign []*stackRecords) map[string]dataPlane {
	out := map[string]dataPlane{}
	if len(cells) == 0 {
		return out
	}
	// The records by stack, keyed without building each record's key
	// string (this runs on every read of the health model).
	type stackID struct{ project, stack string }
	byStack := map[stackID][]*store.Record{}
	for _, r := range v.State.Resources {
		id := stackID{r.Project, r.Stack}
		byStack[id] = append(byStack[id], r)
	}
	recordsOf := func(key string) []*store.Record {
		project, stack := store.SplitKey(key)
		return byStack[stackID{project, stack}]
	}
	routers := map[string]*stackRecords{} // project → its router stack, this account's first
	routerOf := func(project string) *stackRecords {
		if sr, ok := routers[project]; ok {
			return sr
		}
		var sr *stackRecords
		if recs := byStack[stackID{project, fleet.RouterStack}]; len(recs) > 0 {
			sr = newStackRecords(v, store.StackKey(project, fleet.RouterStack), recs)
		} else {
			for _, f := range foreign {
				if f.project == project {
					sr = f
					break
				}
			}
		}
		routers[project] = sr
		return sr
	}
	for _, ch := range cells {
		router := routerOf(ch.project)
		cellRev, cacheable := v.State.Revision(ch.key)
		rev := ""
		if cacheable {
			rev = fmt.Sprintf("%s@%v", cellRev.Path, cellRev.File)
			switch {
			case router == nil:
				rev += " router:none"
			case router.rev == "":
				cacheable = false
			default:
				rev += " router:" + router.account + ":" + router.rev
			}
		}
		if cacheable {
			if c, ok := accessCache.Load(cellRev.Path); ok && c.(cachedAccess).rev == rev {
				out[ch.key] = c.(cachedAccess).dp
				continue
			}
		}
		cell := newStackRecords(v, ch.key, recordsOf(ch.key))
		stacks := cell.accessStacks(ch.stack)
		changed := cell.changed
		if router != nil {
			stacks = append(stacks, router.accessStacks(offline.OwnerRouter)...)
			if router.changed.After(changed) {
				changed = router.changed
			}
		}
		dp := dataPlane{denied: deniedServingPaths(ch.stack, stacks), changed: changed}
		out[ch.key] = dp
		if cacheable {
			accessCache.Store(cellRev.Path, cachedAccess{rev: rev, dp: dp})
		}
	}
	return out
}

// deniedServingPaths decides a cell's serving paths over the stacks' live
// resources and returns those denied. A model that cannot be built (a
// policy the evaluator cannot read) decides nothing, so denies nothing.
func deniedServingPaths(cell string, stacks []offline.Stack) []access.Result {
	m, err := access.Build(stacks)
	if err != nil {
		return nil
	}
	paths := cellmodule.ServingPaths(cell)
	if m.ResourceByLabel(cellmodule.AccessPointLabel(cell)) != nil {
		// A cell in another account than the bucket's serves through its
		// access point (BUCKET_ACCESS_POINT in its task).
		paths = cellmodule.ThroughAccessPoint(cell, paths)
	}
	var out []access.Result
	for _, r := range m.CheckRequired(paths) {
		if r.Decision.Denied() {
			out = append(out, r)
		}
	}
	return out
}

// describe says what the decision does to the traffic, for `sim health
// show`: one line per denied path.
func (d dataPlane) describe() []string {
	var out []string
	for _, r := range d.denied {
		out = append(out, fmt.Sprintf("%s: %s is %s: %s", r.Path.Name, r.Describe(), r.Decision.Words(), r.Reason))
	}
	return out
}

// actions are the denied paths' actions ("s3:PutObject, sqs:SendMessage").
func (d dataPlane) actions() string {
	var acts []string
	for _, r := range d.denied {
		acts = append(acts, r.Path.Action)
	}
	return strings.Join(acts, ", ")
}
