// Package spec is the typed configuration of one cell: what the fleet loader
// produces after merging the baseline in Pulumi.yaml with the cell's stack
// file, and what the cell template consumes.
//
// It is deliberately free of Pulumi and AWS SDK imports so the loader, the
// CLI and the audits can use it without compiling the provider SDK.
package spec

import (
	"fmt"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/awsname"

	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/waves/signal"
)

// NAT gateway layouts. One NAT per AZ survives an AZ outage; one per cell
// saves Elastic IPs, which are a scarce per-region quota (5 by default).
const (
	NATPerAZ  = "per-az"
	NATSingle = "single"
)

// AZCount is the number of availability zones every cell spans.
const AZCount = 3

// Cell is the effective configuration of one cell.
type Cell struct {
	ID     string // stack name and cell id, e.g. "cell-a"
	Index  int    // N of the VPC 10.N.0.0/16
	Region string // aws:region

	// NamePrefix is the fleet's part of every name the cell holds per AWS
	// account and region (cells:namePrefix; by default derived from the
	// Pulumi project's name by the fleet loader; awsname.None: no prefix,
	// the names of fleets created before names carried the fleet). See
	// internal/awsname and Names.
	NamePrefix string

	Image       string // container image the service runs
	FleetBucket string // shared bucket the router stack owns; this cell owns cells/<id>/
	// FleetDomain is the DNS domain every cell gets a name under
	// (<cell id>.<FleetDomain>): CloudFront connects to that name over
	// HTTPS, so the ALB's certificate can match it.
	FleetDomain string
	// HostedZoneID is the Route 53 public hosted zone of FleetDomain (or of
	// a parent domain); the cell creates its alias record and the DNS
	// validation record of its certificate there.
	HostedZoneID string
	// CertificateArn is an existing ACM certificate for the ALB's HTTPS
	// listener, in the cell's region, covering <cell id>.<FleetDomain>.
	// Empty (the default): the cell requests its own DNS-validated one.
	CertificateArn string
	NATMode        string

	// AuroraEngineVersion is a major ("16": AWS applies minor upgrades in
	// the maintenance window) or an exact minor ("16.4": automatic minor
	// upgrades are turned off, so the pin holds).
	AuroraEngineVersion       string
	AuroraInstanceClass       string
	AuroraInstances           int
	AuroraBackupRetentionDays int

	CacheEngine        string // "valkey" or "redis"
	CacheEngineVersion string
	CacheNodeType      string
	CacheNodes         int

	QueueVisibilityTimeoutSeconds int
	QueueMaxReceiveCount          int

	TaskCPU          int
	TaskMemory       int
	DesiredCount     int
	ContainerPort    int
	HealthCheckPath  string
	LogRetentionDays int

	Alarm5xxRatePercent float64
	AlarmP99LatencyMs   int
	AlarmEvalPeriods    int
	// Gate holds the thresholds the cell's wave gate sets in waves.yaml
	// (promote_if); the fleet loader fills it. Thresholds() merges it over
	// the alarm keys above: the cell's alarms and its gate both read that.
	Gate signal.Thresholds

	// CapacityRPS is the cell's published capacity in requests per second
	// (what it is load-tested to carry); 0: none published, so the cell
	// gets no capacity alarm. CapacityWarningPercent and
	// CapacityWarningMinutes make the CellCapacityWarning alarm: the
	// request rate above that share of the capacity for that many
	// consecutive minutes. The wave gate ignores it (load is not a
	// regression of the release); `cellctl health` shows it.
	CapacityRPS            int
	CapacityWarningPercent int
	CapacityWarningMinutes int

	// Lanes (M) and LaneShardSize (r): each tenant uses r of the cell's M
	// lanes (router.Lanes). LaneQueues adds one SQS queue per lane.
	Lanes         int
	LaneShardSize int
	LaneQueues    bool

	// MigrationCommand is the container command that applies the
	// release's pending schema migrations (cells:migrationCommand, a JSON
	// array of strings such as ["./migrate", "up"]); empty: the cell runs
	// no migrations and its template has no migration task. With it the
	// cell gets a migration task definition (the service's image, run as
	// the database user cellctl_migrator) that a rollout runs before it
	// updates the service. MigrationRollbackCommand (optional) undoes the
	// release's migrations, for a wave that rolls back;
	// MigrationTimeoutSeconds is how long a migration task may run before
	// the rollout stops it and counts the cell as failed.
	MigrationCommand         []string
	MigrationRollbackCommand []string
	MigrationTimeoutSeconds  int

	// Releasing is set by `cellctl destroy --release-protected` only, never
	// from configuration: it lifts the protection of the cell's stateful
	// resources (Pulumi protect and Aurora deletion protection) so the cell
	// can be destroyed. Aurora still takes its final snapshot.
	Releasing bool
}

// Thresholds is the health threshold of every signal for this cell: the
// wave gate's promote_if where it sets one, otherwise the alarm keys
// (alarm5xxRatePercent, alarmP99LatencyMs) and the built-in defaults. The
// cell template builds its CloudWatch alarms from it and the gate
// evaluator compares readings with it, so the two never disagree.
func (c Cell) Thresholds() signal.Thresholds {
	return signal.FromAlarmKeys(c.Alarm5xxRatePercent, c.AlarmP99LatencyMs).Merge(c.Gate)
}

// Names are the cell's account-unique names (internal/awsname).
func (c Cell) Names() awsname.Cell { return awsname.For(c.NamePrefix, c.ID) }

// DNSName is the cell's own DNS name, the CloudFront origin of the cell.
func (c Cell) DNSName() string { return c.ID + "." + c.FleetDomain }

// PinsMinor reports whether AuroraEngineVersion pins an exact minor.
func (c Cell) PinsMinor() bool {
	for i := 0; i < len(c.AuroraEngineVersion); i++ {
		if c.AuroraEngineVersion[i] == '.' {
			return true
		}
	}
	return false
}

// CIDR is the cell's VPC range.
func (c Cell) CIDR() string { return fmt.Sprintf("10.%d.0.0/16", c.Index) }

// Baseline is the fleet default every cell starts from before its stack file
// overrides apply. Index, region and image have no sensible default.
func Baseline() Cell {
	return Cell{
		NATMode:                       NATPerAZ,
		AuroraEngineVersion:           "16",
		AuroraInstanceClass:           "db.r6g.large",
		AuroraInstances:               2,
		AuroraBackupRetentionDays:     7,
		CacheEngine:                   "valkey",
		CacheEngineVersion:            "8.0",
		CacheNodeType:                 "cache.r7g.large",
		CacheNodes:                    2,
		QueueVisibilityTimeoutSeconds: 60,
		QueueMaxReceiveCount:          5,
		TaskCPU:                       512,
		TaskMemory:                    1024,
		DesiredCount:                  2,
		ContainerPort:                 8080,
		HealthCheckPath:               "/healthz",
		LogRetentionDays:              30,
		Alarm5xxRatePercent:           1,
		AlarmP99LatencyMs:             1000,
		AlarmEvalPeriods:              3,
		CapacityWarningPercent:        80,
		CapacityWarningMinutes:        10,
		Lanes:                         router.DefaultLanes,
		LaneShardSize:                 router.DefaultLaneShardSize,
		MigrationTimeoutSeconds:       DefaultMigrationTimeoutSeconds,
	}
}

// DefaultMigrationTimeoutSeconds is cells:migrationTimeoutSeconds' default.
const DefaultMigrationTimeoutSeconds = 900

// RunsMigrations reports whether the cell has a migration command, so its
// template has a migration task and its database a migrator user.
func (c Cell) RunsMigrations() bool { return len(c.MigrationCommand) > 0 }

// MigrationsProblem says why the cell's migration settings do not go
// together, or nil: a rollback command without a migration command, or
// migrations on a cluster without the RDS Data API, through which the
// control plane bootstraps the database users before the first migration
// (awsfacts.DataAPIProblem: region and version;
// awsfacts.DataAPIInstanceClassProblem: no T instance classes).
func (c Cell) MigrationsProblem() error {
	if !c.RunsMigrations() {
		if len(c.MigrationRollbackCommand) > 0 {
			return fmt.Errorf("migrationRollbackCommand is set but migrationCommand is not: a rollback command needs the migrations it undoes")
		}
		return nil
	}
	if err := c.DataAPIProblem(); err != nil {
		return fmt.Errorf("migrations need the RDS Data API to bootstrap the database users: %w", err)
	}
	return nil
}

// DataAPIProblem says why the cell's Aurora cluster cannot serve the RDS
// Data API (its region, its engine version, or its instances' T class),
// or nil. The template turns the Data API on only where it is nil.
func (c Cell) DataAPIProblem() error {
	if err := awsfacts.DataAPIProblem(c.Region, c.AuroraEngineVersion); err != nil {
		return err
	}
	return awsfacts.DataAPIInstanceClassProblem(c.AuroraInstanceClass)
}

// LanesProblem says why the cell's lanes and shard size do not go
// together (r > M, or C(M, r) too large to compute exactly), or nil.
func (c Cell) LanesProblem() error { return router.CheckLanes(c.Lanes, c.LaneShardSize) }

// CapacityAlarmKey is the CellCapacityWarning alarm's key in the cell
// stack's alarmNames output. It is not a waves/signal signal, so the wave
// gate, which reads only the signals' alarms, never counts it.
const CapacityAlarmKey = "capacity"

// CapacityAlarmName is the CloudWatch name of the cell's
// CellCapacityWarning alarm.
func CapacityAlarmName(cell awsname.Cell) string { return cell.Alarm("capacity-warning") }

// CapacityWarningRequestsPerMinute is the per-minute request count above
// which the cell runs hotter than CapacityWarningPercent of its published
// capacity (the alarm's threshold); 0 when no capacity is published.
func (c Cell) CapacityWarningRequestsPerMinute() float64 {
	return float64(c.CapacityRPS) * 60 * float64(c.CapacityWarningPercent) / 100
}
