// Package drift is cellctl's drift audit: skew between cells (offline,
// from the fleet model), cells behind the repository (what each cell last
// deployed against what the repo now asks for) and cloud drift (what
// changed in the cloud behind Pulumi's back, from a refresh preview). It
// joins the three into one report, worst cells first, where every finding
// says what to do next.
//
// The package reads the fleet model and small reader interfaces; it never
// runs the pulumi CLI itself (internal/engine does, behind CloudReader).
package drift

import (
	"fmt"
	"sort"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/fleet"
)

// Class says how a configuration key may differ between the cells of one
// fleet.
type Class string

const (
	// MustEqual keys are the same in every cell: a cell that differs runs
	// a different product (another engine version, another task size, a
	// laxer alarm) and a rollout that passed in one cell proves nothing
	// about it. A deliberate difference needs an exception with a reason.
	MustEqual Class = "must_equal"
	// MustUnique keys differ in every cell: two cells sharing one would
	// share address space or identity.
	MustUnique Class = "must_unique"
	// MayVary keys differ by design (where a cell runs, how big it is).
	// They are shown in the skew view, never reported as findings.
	MayVary Class = "may_vary"
)

// KeyClass is one row of the class table.
type KeyClass struct {
	// Key is the configuration key as written in stack files without the
	// project namespace ("taskCpu"), or with its own namespace
	// ("aws:region").
	Key   string
	Class Class
	// Secret keys are compared by a digest of their plaintext only; the
	// value never reaches the report.
	Secret bool
	// Derived keys are not set in configuration but computed from it
	// (cidr from index); they are compared like the others.
	Derived bool
	// Why the key has this class, for docs/DRIFT.md and the report.
	Why string
}

// RegionKey is the provider key that places a cell.
const RegionKey = "aws:region"

// CIDRKey is the derived key of a cell's VPC range.
const CIDRKey = "cidr"

// Classes is the one table of key classes: every key a cell has (the
// cells:<key> table of cellmodule/spec, aws:region, the origin-verify
// secret) plus the derived cidr. TestEveryKeyHasAClass keeps it complete;
// docs/DRIFT.md documents it (TestDocListsEveryKey).
var Classes = []KeyClass{
	{Key: "namePrefix", Class: MayVary, Why: "the fleet's part of every account-unique name; a cell created before names carried the fleet keeps \"none\" rather than be replaced"},
	{Key: "index", Class: MustUnique, Why: "the N of the cell's VPC 10.N.0.0/16; two cells with one index would share address space"},
	{Key: CIDRKey, Class: MustUnique, Derived: true, Why: "the cell's VPC range (from index); cells never share address space"},
	{Key: RegionKey, Class: MayVary, Why: "cells are spread over regions on purpose"},
	{Key: "image", Class: MustEqual, Why: "every cell runs the same release (the desired state's: what rollouts shipped and kept); a canary runs ahead only through an exception or a rollout in flight"},
	{Key: "fleetBucket", Class: MustEqual, Why: "the one fleet bucket the router owns; each cell owns a prefix in it"},
	{Key: "fleetDomain", Class: MustEqual, Why: "every cell is <cell id>.<fleetDomain>; the router expects one domain"},
	{Key: "hostedZoneId", Class: MustEqual, Why: "the zone of fleetDomain; one domain has one zone"},
	{Key: "certificateArn", Class: MayVary, Why: "an ACM certificate lives in the cell's own region, so cells in other regions need other ARNs"},
	{Key: "natMode", Class: MayVary, Why: "per-az survives an AZ outage and costs 3 Elastic IPs; chosen per cell"},
	{Key: "auroraEngineVersion", Class: MustEqual, Why: "one database engine version across the fleet: what passed in one cell must mean the same in all"},
	{Key: "auroraInstanceClass", Class: MustEqual, Why: "the same instance class keeps per-cell capacity and failover behaviour comparable"},
	{Key: "auroraInstances", Class: MayVary, Why: "a size: a cell with bigger tenants may run more readers"},
	{Key: "auroraBackupRetentionDays", Class: MustEqual, Why: "the fleet's recovery promise is the same for every tenant"},
	{Key: "cacheEngine", Class: MustEqual, Why: "one cache engine across the fleet"},
	{Key: "cacheEngineVersion", Class: MustEqual, Why: "one cache engine version across the fleet"},
	{Key: "cacheNodeType", Class: MustEqual, Why: "the same node type keeps cells comparable"},
	{Key: "cacheNodes", Class: MayVary, Why: "a size: a bigger cell may run more cache nodes"},
	{Key: "queueVisibilityTimeoutSeconds", Class: MustEqual, Why: "the application's retry timing must not depend on the cell"},
	{Key: "queueMaxReceiveCount", Class: MustEqual, Why: "when a message goes to the dead-letter queue must not depend on the cell"},
	{Key: "taskCpu", Class: MustEqual, Why: "the task size the release was tested with"},
	{Key: "taskMemory", Class: MustEqual, Why: "the task size the release was tested with"},
	{Key: "desiredCount", Class: MayVary, Why: "a size: cells with bigger tenants run more tasks"},
	{Key: "containerPort", Class: MustEqual, Why: "the image listens on one port"},
	{Key: "healthCheckPath", Class: MustEqual, Why: "the image serves one health check"},
	{Key: "logRetentionDays", Class: MustEqual, Why: "the fleet's log retention promise is the same for every tenant"},
	{Key: "alarm5xxRatePercent", Class: MustEqual, Why: "an alarm threshold: a laxer cell hides a bad release the others would catch"},
	{Key: "alarmP99LatencyMs", Class: MustEqual, Why: "an alarm threshold: a laxer cell hides a bad release the others would catch"},
	{Key: "alarmEvalPeriods", Class: MustEqual, Why: "an alarm threshold: a slower cell hides a bad release the others would catch"},
	{Key: "capacityRequestsPerSecond", Class: MayVary, Why: "a cell's published capacity: a bigger cell is load-tested to carry more"},
	{Key: "capacityWarningPercent", Class: MustEqual, Why: "the capacity alarm's threshold: every cell warns at the same share of its own capacity"},
	{Key: "capacityWarningMinutes", Class: MustEqual, Why: "the capacity alarm's period: every cell warns after the same time over its threshold"},
	{Key: "lanes", Class: MayVary, Why: "a size: a bigger cell may cut its resources into more lanes"},
	{Key: "laneShardSize", Class: MustEqual, Why: "how many lanes a tenant uses is the fleet's blast-radius promise"},
	{Key: "laneQueues", Class: MustEqual, Why: "the application reads either one queue or one per lane"},
	{Key: "migrationCommand", Class: MustEqual, Why: "every cell runs the same release's migrations; a cell without them gets a different schema"},
	{Key: "migrationRollbackCommand", Class: MustEqual, Why: "a wave that rolls back undoes the release's migrations the same way in every cell"},
	{Key: "migrationTimeoutSeconds", Class: MayVary, Why: "a size: a cell with more data may need longer for the same migration"},
	{Key: fleet.OriginVerifyKey, Class: MustEqual, Secret: true, Why: "CloudFront sends one origin-verify value to every cell; a cell with another refuses all traffic (compared by digest, never shown)"},
}

// ClassOf returns the class row of a key ("taskCpu", "cells:taskCpu" with
// the project namespace, or "aws:region").
func ClassOf(project, key string) (KeyClass, bool) {
	key = bareKey(project, key)
	for _, k := range Classes {
		if k.Key == key {
			return k, true
		}
	}
	return KeyClass{}, false
}

// bareKey drops the project namespace ("cells:taskCpu" → "taskCpu").
func bareKey(project, key string) string {
	if p := project + ":"; len(key) > len(p) && key[:len(p)] == p {
		return key[len(p):]
	}
	return key
}

// KeyNames lists every configuration key with a class (derived keys
// excluded), sorted, for "allowed keys" messages.
func KeyNames() []string {
	var out []string
	for _, k := range Classes {
		if !k.Derived {
			out = append(out, k.Key)
		}
	}
	sort.Strings(out)
	return out
}

// value returns a cell's value of a non-secret key as text.
func value(c *fleet.Cell, k KeyClass) (string, error) {
	switch k.Key {
	case RegionKey:
		return c.Region, nil
	case CIDRKey:
		return c.CIDR(), nil
	}
	sk, ok := spec.Lookup(k.Key)
	if !ok {
		return "", fmt.Errorf("key %s has a class but no value in the fleet model", k.Key)
	}
	return sk.Get(&c.Cell), nil
}

// baselineValue is the fleet baseline's value of a key ("" for keys
// without a baseline: index, cidr).
func baselineValue(f *fleet.Fleet, k KeyClass) string {
	switch k.Key {
	case RegionKey:
		return f.Baseline.Region
	case CIDRKey, "index":
		return ""
	}
	sk, ok := spec.Lookup(k.Key)
	if !ok {
		return ""
	}
	b := f.Baseline
	return sk.Get(&b)
}
