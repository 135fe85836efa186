package quota

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/plan"
)

// Thresholds of the verdict (percent of the limit in use).
const (
	WarnPercent     = 80.0
	CriticalPercent = 90.0
)

// Status is a row's verdict.
type Status string

const (
	StatusOK       Status = "ok"
	StatusWarn     Status = "warn"
	StatusCritical Status = "critical"
	// StatusUnknown: the limit or the usage could not be read. It is a
	// finding whenever cells consume the quota (the audit fails closed).
	StatusUnknown Status = "unknown"
	// StatusNoLimit: AWS enforces no limit; usage is shown for context.
	StatusNoLimit Status = "no-limit"
)

// AccountRegion is the region account-wide quotas are read in (Service
// Quotas serves global quotas such as IAM's and CloudFront's there).
const AccountRegion = "us-east-1"

// Options say what to check.
type Options struct {
	Fleet *fleet.Fleet
	// Target is where the readers of one account and region talk to (AWS
	// or the simulator's endpoint), signed as that account's access: a
	// cell in another account is read with the role its stack assumes.
	Target func(a fleet.Access) awsapi.Target
	// AddCells asks whether N more cells fit in each region, each costing
	// what the region's costliest cell costs.
	AddCells int
	// NewCells are cells about to be created (the up preflight): each
	// adds its own rendered cost, and only their regions are read.
	NewCells []string
	// NewRouter says the router stack is about to be created too (the up
	// preflight): its viewer records' zone is checked.
	NewRouter bool
	// Parallel bounds the regions read at once (≤ 0: 4).
	Parallel int
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Row is one quota in one region (or account-wide) of one account.
type Row struct {
	Code  string `json:"code"`
	Name  string `json:"name"`
	Scope Scope  `json:"scope"`
	// Account is the account the quota is read in: quotas stop at the
	// account, so cells in different accounts never share a row. Set when
	// the fleet spans accounts (Report.Accounts), each by its id (the
	// caller's own as STS names it); "" when every cell is in the
	// caller's own account.
	Account string `json:"account,omitempty"`
	Region  string `json:"region"` // "account" for account-wide quotas
	// Where names the zone or security group a per-zone or per-group
	// value is for (the fullest).
	Where string `json:"where,omitempty"`
	// Limit is the applied value, else AWS's default; nil when unknown or
	// when AWS sets none.
	Limit       *float64 `json:"limit"`
	LimitSource string   `json:"limitSource,omitempty"` // applied, default, none
	Used        *float64 `json:"used"`
	Reads       string   `json:"reads"`
	Note        string   `json:"note,omitempty"`
	// PerCell is what the costliest cell of the region (or fleet) uses,
	// counted from its rendered plan; Cells is how many cells count.
	PerCell float64 `json:"perCell"`
	Cells   int     `json:"cells"`
	// Adding is what the run adds: --add-cells × PerCell, or the new
	// cells' own cost.
	Adding      float64  `json:"adding,omitempty"`
	PercentUsed *float64 `json:"percentUsed"`
	// Headroom is how many more cells like the costliest fit; nil when it
	// does not apply (unknown, no limit, per-group quotas, zero cost).
	Headroom *int `json:"headroomCells"`
	// Consumer is "router" for a quota the router's edge function
	// consumes (read in the router's account); "" for the cells'.
	Consumer string `json:"consumer,omitempty"`
	// Unmeasured: cellctl does not read this usage (the row says why); it
	// is shown unknown, never as 0.
	Unmeasured bool   `json:"unmeasured,omitempty"`
	Status     Status `json:"status"`
	Reason     string `json:"reason,omitempty"`
	Next       string `json:"next,omitempty"`
}

// Finding reports whether the row is a finding (exit 2).
func (r Row) Finding() bool {
	return r.Status == StatusCritical || r.Status == StatusUnknown && (r.PerCell > 0 || r.Adding > 0 || r.Consumer == "router" && !r.Unmeasured)
}

// Report is the audit.
type Report struct {
	// Accounts are the accounts read when any cell declares one, by id
	// (the caller's own as STS names it; "default" when STS cannot say).
	Accounts []string `json:"accounts,omitempty"`
	Regions  []string `json:"regions"`
	AddCells int      `json:"addCells,omitempty"`
	NewCells []string `json:"newCells,omitempty"`
	Rows     []Row    `json:"rows"`
	Critical int      `json:"critical"`
	Warn     int      `json:"warn"`
	Unknown  int      `json:"unknown"`
}

// Findings counts the rows that make the audit fail.
func (r *Report) Findings() int {
	n := 0
	for _, row := range r.Rows {
		if row.Finding() {
			n++
		}
	}
	return n
}

// Err is the audit's outcome: an outcome.FindingsError (exit 2) naming
// every finding, or nil.
func (r *Report) Err() error {
	var lines []string
	for _, row := range r.Rows {
		if row.Finding() {
			lines = append(lines, row.Summary())
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return &outcome.FindingsError{Count: len(lines), Err: fmt.Errorf("quota: %d finding(s):\n  %s", len(lines), strings.Join(lines, "\n  "))}
}

// Summary is the row in one line, with what to do next.
func (r Row) Summary() string {
	where := r.Region
	if r.Account != "" {
		where = "account " + r.Account + ", " + r.Region
	}
	s := fmt.Sprintf("%s %s (%s) in %s: %s", r.Status, r.Code, r.Name, where, r.Reason)
	if r.Next != "" {
		s += "; " + r.Next
	}
	return s
}

// readers are one region's AWS readers.
type readers struct {
	inv    *awsapi.Inventory
	cw     *awsapi.CloudWatch
	sq     *awsapi.Quotas
	lambda *awsapi.Lambda
	now    time.Time

	sgOnce sync.Once
	sg     awsapi.SecurityGroups
	sgErr  error
}

// securityGroups reads DescribeSecurityGroups once for both SG quotas.
func (r *readers) securityGroups(ctx context.Context) (awsapi.SecurityGroups, error) {
	r.sgOnce.Do(func() { r.sg, r.sgErr = r.inv.SecurityGroups(ctx) })
	return r.sg, r.sgErr
}

func newReaders(ctx context.Context, t awsapi.Target, now time.Time) (*readers, error) {
	inv, err := awsapi.NewInventory(ctx, t)
	if err != nil {
		return nil, err
	}
	cw, err := awsapi.NewCloudWatch(ctx, t)
	if err != nil {
		return nil, err
	}
	sq, err := awsapi.NewQuotas(ctx, t)
	if err != nil {
		return nil, err
	}
	lambda, err := awsapi.NewLambda(ctx, t)
	if err != nil {
		return nil, err
	}
	return &readers{inv: inv, cw: cw, sq: sq, lambda: lambda, now: now}, nil
}

// Check runs the audit.
func Check(ctx context.Context, o Options) (*Report, error) {
	if o.Fleet == nil || o.Target == nil {
		return nil, errors.New("quota: a fleet and a target are required")
	}
	if o.AddCells < 0 {
		return nil, fmt.Errorf("--add-cells must be 0 or more, got %d", o.AddCells)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	costs, err := cellCosts(ctx, o)
	if err != nil {
		return nil, err
	}
	// The regions to read: every cell's, or only the new cells'.
	newSet := map[string]bool{}
	for _, c := range o.NewCells {
		if o.Fleet.Cell(c) == nil {
			return nil, fmt.Errorf("unknown cell %q (cells of this fleet: %v)", c, o.Fleet.CellIDs())
		}
		newSet[c] = true
	}
	// Quotas stop at the account: each account the cells live in is read
	// on its own — its account-wide quotas once, and each of its regions —
	// with that account's access.
	regionSet := map[string]bool{}
	type place struct {
		acct   accountKey
		region string
	}
	// Cells of one account may reach it differently (another session
	// name); the first one's access reads the account for all of them.
	var accts []fleet.Access
	placeSet := map[place]bool{}
	for _, c := range o.Fleet.Cells {
		if len(newSet) == 0 || newSet[c.ID] {
			regionSet[c.Region] = true
			a := c.Access().InRegion("")
			if !slices.ContainsFunc(accts, func(b fleet.Access) bool { return keyOf(b) == keyOf(a) }) {
				accts = append(accts, a)
			}
			placeSet[place{keyOf(a), c.Region}] = true
		}
	}
	regions := slices.Sorted(maps.Keys(regionSet))
	sort.SliceStable(accts, func(i, j int) bool { return accts[i].Account < accts[j].Account })
	type unit struct {
		access fleet.Access // read with, in its region
		label  string       // "account" or the region
		scope  func(Entry) bool
		router *routerDemand // the router's units only
	}
	var units []unit
	for _, a := range accts {
		units = append(units, unit{access: a.InRegion(AccountRegion), label: string(ScopeAccount), scope: func(e Entry) bool { return !e.Router && e.Scope == ScopeAccount }})
		for _, r := range regions {
			if placeSet[place{keyOf(a), r}] {
				units = append(units, unit{access: a.InRegion(r), label: r, scope: func(e Entry) bool { return !e.Router && e.Scope != ScopeAccount }})
			}
		}
	}
	// A fleet with no cells still reads the caller's account-wide quotas.
	if len(units) == 0 {
		units = []unit{{access: fleet.Access{Region: AccountRegion}, label: string(ScopeAccount), scope: func(e Entry) bool { return !e.Router && e.Scope == ScopeAccount }}}
	}
	// The router's edge function: its code storage where it lives
	// (us-east-1), its concurrency and requests wherever its replicas run
	// — read in us-east-1 and every Region of the cells (the Regions the
	// fleet's viewers are near, as far as the fleet knows), in the router's
	// account. The up preflight of new cells does not read them.
	if o.Fleet.Router != nil && len(newSet) == 0 {
		rd := routerCost(ctx, o)
		edgeRegions := append([]string{edgeRegion}, regions...)
		slices.Sort(edgeRegions)
		edgeRegions = slices.Compact(edgeRegions)
		ra := o.Fleet.Router.Access()
		for _, r := range edgeRegions {
			units = append(units, unit{access: ra.InRegion(r), label: r, router: rd,
				scope: func(e Entry) bool { return e.Router && (!e.EdgeRegionOnly || r == edgeRegion) }})
		}
	}
	// With cells in more than one account, each account is named by its
	// id: one a stack file does not declare (the caller's own, or a
	// profile's) is asked of STS, so no row or list names it "".
	multi := len(accts) > 1 || len(accts) == 1 && accts[0].Account != ""
	names := map[accountKey]string{}
	if multi {
		for _, a := range accts {
			names[keyOf(a)] = accountName(ctx, o, a)
		}
	}
	rows := make([][]Row, len(units))
	g, gctx := errgroup.WithContext(ctx)
	limit := o.Parallel
	if limit <= 0 {
		limit = 4
	}
	g.SetLimit(limit)
	for i, u := range units {
		g.Go(func() error {
			var entries []Entry
			for _, e := range Catalog {
				if u.scope(e) {
					entries = append(entries, e)
				}
			}
			rs, err := readUnit(gctx, o, u.access, u.label, entries, costs, newSet, now(), u.router)
			if name := names[keyOf(u.access)]; name != "" {
				for j := range rs {
					rs[j].Account = name
				}
			}
			rows[i] = rs
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	rep := &Report{Regions: regions, AddCells: o.AddCells, NewCells: o.NewCells}
	if multi {
		for _, a := range accts {
			rep.Accounts = append(rep.Accounts, names[keyOf(a)])
		}
	}
	for _, rs := range rows {
		rep.Rows = append(rep.Rows, rs...)
	}
	for _, r := range rep.Rows {
		switch r.Status {
		case StatusCritical:
			rep.Critical++
		case StatusWarn:
			rep.Warn++
		case StatusUnknown:
			rep.Unknown++
		}
	}
	return rep, nil
}

// accountName is the id of the account a's quotas are read in: the one
// its stack files declare, else the one STS names for its credentials,
// else (STS unreadable) the label the table gives the caller's own
// account.
func accountName(ctx context.Context, o Options, a fleet.Access) string {
	if a.Account != "" {
		return a.Account
	}
	if id, err := awsapi.CallerIdentity(ctx, o.Target(a.InRegion(AccountRegion))); err == nil && id.Account != "" {
		return id.Account
	}
	return a.AccountLabel()
}

// cellCost is one rendered cell's cost of every catalog quota.
type cellCost struct {
	id, region string
	acct       accountKey
	cost       map[string]float64
}

// accountKey is the account whose quotas an access counts against: its
// declared id; without one (the caller's own credentials, or a profile)
// the profile, as the only thing that can tell two accounts apart.
type accountKey struct{ account, profile string }

func keyOf(a fleet.Access) accountKey {
	if a.Account != "" {
		return accountKey{account: a.Account}
	}
	return accountKey{profile: a.Profile}
}

func cellCosts(ctx context.Context, o Options) ([]cellCost, error) {
	ids := o.Fleet.CellIDs()
	if len(ids) == 0 {
		return nil, nil
	}
	rep, err := plan.Render(ctx, o.Fleet, plan.Options{Stacks: ids, Parallel: o.Parallel})
	if err != nil {
		return nil, fmt.Errorf("rendering the cells to count what each consumes:\n%w", err)
	}
	var out []cellCost
	for _, s := range rep.Stacks {
		if s.Kind != plan.KindCell {
			continue
		}
		cc := cellCost{id: s.Cell, region: s.Region, cost: map[string]float64{}}
		if c := o.Fleet.Cell(s.Cell); c != nil {
			cc.acct = keyOf(c.Access())
		}
		for _, e := range Catalog {
			n, err := e.Cost(s)
			if err != nil {
				return nil, fmt.Errorf("counting %s of %s: %w", e.Code, s.Cell, err)
			}
			cc.cost[e.Code] = n
		}
		out = append(out, cc)
	}
	return out, nil
}

// readUnit reads the limits and usage of entries in one region (or the
// account) and judges them.
func readUnit(ctx context.Context, o Options, access fleet.Access, label string, entries []Entry, costs []cellCost, newSet map[string]bool, now time.Time, router *routerDemand) ([]Row, error) {
	region := access.Region
	acct := keyOf(access)
	rd, err := newReaders(ctx, o.Target(access), now)
	if err != nil {
		return nil, err
	}
	limits := readLimits(ctx, rd, entries)
	var rows []Row
	for _, e := range entries {
		row := Row{Code: e.Code, Name: e.Name, Scope: e.Scope, Account: access.Account, Region: label, Reads: e.Reads, Unmeasured: e.NoReader != ""}
		var problems []string
		if e.Router {
			row.Consumer = "router"
			if e.Code == awsfacts.LambdaCodeStorage.Code && router != nil {
				// The router's next publish adds one version of the package.
				if router.err != nil {
					problems = append(problems, "the router's next edge version's size is unknown: "+router.err.Error())
				} else {
					row.Adding = float64(router.versionBytes) / awsfacts.GiB
					row.Note = fmt.Sprintf("the router's next publish adds a version of %s (the package as rendered, unzipped); it keeps %d newest versions besides those a distribution runs", mib(router.versionBytes), o.Fleet.Router.EdgeVersionsKept)
				}
			}
		}
		for _, c := range costs {
			if e.Router {
				break
			}
			if c.acct != acct || label != string(ScopeAccount) && c.region != label {
				continue
			}
			row.Cells++
			row.PerCell = max(row.PerCell, c.cost[e.Code])
			if newSet[c.id] {
				if e.Scope == ScopeGroup {
					row.Adding = max(row.Adding, c.cost[e.Code])
				} else {
					row.Adding += c.cost[e.Code]
				}
			}
		}
		if len(newSet) == 0 && o.AddCells > 0 && !e.Router {
			row.Adding = float64(o.AddCells) * row.PerCell
			if e.Scope == ScopeGroup {
				row.Adding = row.PerCell
			}
		}
		if e.NoLimit != "" {
			row.LimitSource = "none"
		} else if l := limits[e.Code]; l.err != nil {
			problems = append(problems, "limit unknown: "+l.err.Error())
		} else {
			v := l.value
			row.Limit, row.LimitSource = &v, l.source
		}
		switch {
		case e.NoReader != "":
			problems = append(problems, "usage unknown: "+e.NoReader)
		case e.read != nil:
			u, err := e.read(ctx, rd)
			if err != nil {
				problems = append(problems, "usage unknown: "+err.Error())
			} else {
				v := u.used
				row.Used, row.Where = &v, u.where
				row.Note = strings.TrimPrefix(u.note+"; "+row.Note, "; ")
				row.Note = strings.TrimSuffix(row.Note, "; ")
			}
		}
		judge(&row, problems, region)
		if e.NoReader != "" {
			row.Next = "count it by hand (" + e.Reads + ") until cellctl reads it"
		}
		rows = append(rows, row)
	}
	return rows, nil
}

type limitValue struct {
	value  float64
	source string
	err    error
}

// readLimits reads each entry's applied value (ListServiceQuotas, one
// call per service), falling back to GetServiceQuota and then AWS's
// default (Quotas.Get) for a quota the listing does not hold.
func readLimits(ctx context.Context, rd *readers, entries []Entry) map[string]limitValue {
	out := map[string]limitValue{}
	listed := map[string]map[string]awsapi.Quota{}
	listErr := map[string]error{}
	for _, e := range entries {
		if e.NoLimit != "" || e.derive != nil {
			continue
		}
		svc := e.ServiceCode()
		if _, done := listed[svc]; !done && listErr[svc] == nil {
			qs, err := rd.sq.List(ctx, svc)
			listed[svc] = map[string]awsapi.Quota{}
			if err != nil {
				listErr[svc] = err
			}
			for _, q := range qs {
				listed[svc][q.QuotaCode] = q
			}
		}
		if q, ok := listed[svc][e.QuotaCode()]; ok {
			out[e.Code] = checkLimit(e.Code, limitValue{value: q.Value, source: "applied"})
			continue
		}
		q, err := rd.sq.Get(ctx, svc, e.QuotaCode())
		if err != nil {
			if le := listErr[svc]; le != nil {
				err = fmt.Errorf("%v (and %v)", err, le)
			}
			out[e.Code] = limitValue{err: err}
			continue
		}
		src := "applied"
		if q.Default {
			src = "default"
		}
		out[e.Code] = checkLimit(e.Code, limitValue{value: q.Value, source: src})
	}
	for _, e := range entries {
		if e.derive != nil {
			out[e.Code] = e.derive(out)
		}
	}
	return out
}

// MaxHeadroom caps the headroom a row reports: past a billion cells the
// exact count says nothing, and the division must not overflow int.
const MaxHeadroom = 1_000_000_000

// checkLimit refuses a quota value no quota can have (negative, NaN, ±Inf):
// an unreadable limit is unknown, never a pass.
func checkLimit(code string, l limitValue) limitValue {
	if !(l.value >= 0) || math.IsInf(l.value, 0) {
		return limitValue{err: fmt.Errorf("Service Quotas returned %g for %s: not a finite number ≥ 0", l.value, code)}
	}
	return l
}

// judge fills the verdict of a row.
func judge(row *Row, problems []string, region string) {
	if len(problems) > 0 {
		row.Status, row.Reason = StatusUnknown, strings.Join(problems, "; ")
		row.Next = "fix the read (credentials, permissions servicequotas:Get*/List*, the describe calls) and rerun `cellctl quota`"
		return
	}
	if row.LimitSource == "none" {
		row.Status, row.Reason = StatusNoLimit, "AWS enforces no limit"
		return
	}
	limit, used := *row.Limit, *row.Used
	if limit > 0 {
		pct := math.Round(used/limit*1000) / 10
		row.PercentUsed = &pct
	}
	if row.PerCell > 0 && row.Scope != ScopeGroup {
		// In float first: a huge applied limit (1e20) overflows int, which
		// read as 0 cells of headroom beside status ok.
		f := math.Floor((limit - used) / row.PerCell)
		h := 0
		switch {
		case f >= MaxHeadroom:
			h = MaxHeadroom
			row.Note = strings.TrimPrefix(row.Note+fmt.Sprintf("; headroom shown capped at %d cells", MaxHeadroom), "; ")
		case f > 0:
			h = int(f)
		}
		row.Headroom = &h
	}
	after := used + row.Adding
	if row.Scope == ScopeGroup {
		after = max(used, row.Adding)
	}
	pct := 100.0
	if limit > 0 {
		pct = used / limit * 100
	}
	switch {
	case row.Scope == ScopeGroup:
		// Every cell brings its own groups: their fill is the template's,
		// not the fleet's growth, so it is critical only when a group
		// does not fit, and a warning near the limit (no cell count
		// changes it).
		switch worst := max(used, row.PerCell, row.Adding); {
		case worst > limit:
			row.Status = StatusCritical
			row.Reason = fmt.Sprintf("a security group needs %s rules, the limit is %s", fmtNum(worst), fmtNum(limit))
		case worst >= limit*CriticalPercent/100:
			row.Status = StatusWarn
			row.Reason = fmt.Sprintf("the fullest security group has %s of %s rules (the cell template's; cells do not add up)", fmtNum(worst), fmtNum(limit))
		default:
			row.Status = StatusOK
		}
	case row.Adding > 0 && after > limit:
		row.Status = StatusCritical
		if row.Scope == ScopeGroup {
			row.Reason = fmt.Sprintf("a new cell's fullest security group needs %s rules, the limit is %s", fmtNum(row.Adding), fmtNum(limit))
		} else if row.Consumer == "router" {
			row.Reason = fmt.Sprintf("%s used + %s for the router's next edge version = %s > limit %s", fmtNum(used), fmtNum(row.Adding), fmtNum(after), fmtNum(limit))
		} else {
			row.Reason = fmt.Sprintf("%s used + %s for the new cells = %s > limit %s", fmtNum(used), fmtNum(row.Adding), fmtNum(after), fmtNum(limit))
		}
	case pct >= CriticalPercent:
		row.Status, row.Reason = StatusCritical, fmt.Sprintf("%s of %s used (%.0f%% ≥ %.0f%%)", fmtNum(used), fmtNum(limit), pct, CriticalPercent)
	case pct >= WarnPercent:
		row.Status, row.Reason = StatusWarn, fmt.Sprintf("%s of %s used (%.0f%% ≥ %.0f%%)", fmtNum(used), fmtNum(limit), pct, WarnPercent)
	default:
		row.Status = StatusOK
	}
	if row.Status == StatusOK && row.Headroom != nil && *row.Headroom == 0 && row.Adding == 0 {
		// Below the warning line, yet the next cell does not fit: that
		// is what the audit is for.
		row.Status = StatusWarn
		row.Reason = fmt.Sprintf("no room for another cell: %s of %s used, a cell needs %s", fmtNum(used), fmtNum(limit), fmtNum(row.PerCell))
	}
	if row.Status == StatusCritical || row.Status == StatusWarn {
		// Enough that the usage after this run sits below the warning
		// line — strictly, or the advice would warn again (4 of 5 VPCs
		// asked for 5) — and, when no cells are being added, with room
		// for the next one (the warning is about it).
		need := max(after, used)
		if row.Adding == 0 {
			need += row.PerCell
		}
		if row.Scope == ScopeGroup {
			// The limit is per group, so the value to ask for is the worst
			// group's after the change: the template's fullest group every
			// cell has (PerCell), a new cell's, or the fullest already in
			// the account — the one the verdict above judged.
			need = max(used, row.PerCell, row.Adding)
		}
		want := max(math.Floor(need/(WarnPercent/100))+1, limit+1)
		row.Next = fmt.Sprintf("request an increase: aws service-quotas request-service-quota-increase --region %s --service-code %s --quota-code %s --desired-value %s",
			region, serviceOf(row.Code), quotaOf(row.Code), fmtNum(want))
	}
}

func serviceOf(code string) string { s, _, _ := strings.Cut(code, "/"); return s }
func quotaOf(code string) string   { _, q, _ := strings.Cut(code, "/"); return q }

func fmtNum(f float64) string {
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f", f)
	}
	if math.Abs(f) < 0.01 {
		// A few MiB of code storage in GiB: not "0.00".
		return fmt.Sprintf("%.2g", f)
	}
	return fmt.Sprintf("%.2f", f)
}

// Preflight checks, before an up creates newCells (and the router, with
// NewRouter), that every quota they consume has room for them, that RDS
// still offers the Aurora version they pin, and that every hosted zone
// they write records in holds those records' names (hostedZones). It
// refuses (an outcome.FindingsError naming the quota, the region and the
// numbers, or the key, file, zone and record) when one would fail or
// cannot be read; warnings are returned as notes.
func Preflight(ctx context.Context, o Options) (notes []string, err error) {
	if len(o.NewCells) == 0 && !o.NewRouter {
		return nil, nil
	}
	creating := append([]string(nil), o.NewCells...)
	if o.NewRouter {
		creating = append(creating, fleet.RouterStack)
	}
	// On aws with no credentials every read below fails the same way:
	// one error that says what to set, before any, not a refusal per
	// zone, quota and cell.
	probe := fleet.Access{Region: AccountRegion}
	if len(o.NewCells) > 0 {
		if c := o.Fleet.Cell(o.NewCells[0]); c != nil {
			probe = c.Access()
		}
	}
	if _, err := awsapi.NewRoute53(ctx, o.Target(probe)); awsapi.AsCredentialsError(err) != nil {
		return nil, err
	}
	refusals := hostedZones(ctx, o)
	if len(o.NewCells) == 0 {
		if len(refusals) > 0 {
			return nil, refuse(creating, refusals)
		}
		return nil, nil
	}
	o.AddCells = 0
	rep, err := Check(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("the quota check before creating %s failed, nothing was created: %w (rerun with --skip-quota-check to create anyway)", strings.Join(o.NewCells, ", "), err)
	}
	refusals = append(refusals, engineVersions(ctx, o)...)
	for _, r := range rep.Rows {
		if r.Adding <= 0 {
			continue
		}
		switch {
		case r.Status == StatusUnknown:
			refusals = append(refusals, r.Summary())
		case r.Status == StatusCritical && r.Used != nil && r.Limit != nil && (r.Scope == ScopeGroup || *r.Used+r.Adding > *r.Limit):
			refusals = append(refusals, r.Summary())
		case r.Status == StatusCritical || r.Status == StatusWarn:
			notes = append(notes, r.Summary())
		}
	}
	if len(refusals) > 0 {
		return notes, refuse(creating, refusals)
	}
	return notes, nil
}

func refuse(creating, refusals []string) error {
	return &outcome.FindingsError{Count: len(refusals), Err: fmt.Errorf(
		"refusing to create %s: nothing was created, these quotas have no room for it, AWS refuses what it pins, or Route 53 refuses a record it would write:\n  %s\n(raise the quota, pin what AWS offers, point the key at the zone that holds the name, or rerun with --skip-quota-check to create anyway)",
		strings.Join(creating, ", "), strings.Join(refusals, "\n  "))}
}

// engineVersions checks, for each new cell, that RDS in its region still
// offers the Aurora PostgreSQL version it pins (DescribeDBEngineVersions):
// AWS retires old minors, and CreateDBCluster then fails with
// InvalidParameterCombination "Cannot find version 15.8 for
// aurora-postgresql" after the network is already built. An unreadable
// answer is a refusal too (fail closed).
func engineVersions(ctx context.Context, o Options) []string {
	var out []string
	for _, id := range o.NewCells {
		c := o.Fleet.Cell(id)
		if c == nil || c.AuroraEngineVersion == "" {
			continue
		}
		inv, err := awsapi.NewInventory(ctx, o.Target(c.Access()))
		offered := false
		if err == nil {
			offered, err = inv.EngineVersionOffered(ctx, "aurora-postgresql", c.AuroraEngineVersion)
		}
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("unknown %s: cannot tell whether aurora-postgresql %s is offered in %s: %v; fix the read (rds:DescribeDBEngineVersions) and rerun", id, c.AuroraEngineVersion, c.Region, err))
		case !offered:
			out = append(out, fmt.Sprintf("%s pins aurora-postgresql %s (cells:auroraEngineVersion), which RDS no longer offers in %s (DescribeDBEngineVersions lists no such version; CreateDBCluster would fail: InvalidParameterCombination: Cannot find version %s for aurora-postgresql); pin a listed minor or the major (\"%s\")",
				id, c.AuroraEngineVersion, c.Region, c.AuroraEngineVersion, strings.SplitN(c.AuroraEngineVersion, ".", 2)[0]))
		}
	}
	return out
}
