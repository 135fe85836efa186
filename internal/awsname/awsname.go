// Package awsname is the one definition of every name a fleet holds per
// AWS account and region: alarm names, log groups, ElastiCache user and
// user group ids, the Aurora cluster identifier and its final snapshot,
// lane queue names, the task definition family and the fleet dashboard.
//
// AWS refuses a second resource with one of these names (ElastiCache's
// UserAlreadyExists, RDS's DBClusterAlreadyExistsFault…) or, worse,
// silently takes the first one over (PutMetricAlarm replaces an alarm of
// the same name, PutDashboard a dashboard, CreateQueue with identical
// attributes returns the existing queue). So every name carries the
// fleet's name prefix (cells:namePrefix, by default derived from the
// Pulumi project's name) beside the cell id: two fleets in one account
// (staging beside prod) never meet.
//
// A name longer than its service allows is cut and ends in a hash of the
// whole name, so cut names stay as unique as the full ones. A prefix never
// contains the label "cell", so "<prefix>-<cell id>" reads back one way
// only (a cell id starts with "cell-"): no two (prefix, cell) pairs make
// the same name.
//
// The package is a leaf (no Pulumi, no AWS SDK): the fleet loader, the
// cell template, the router program, the gates and the audits all derive
// names here, and internal/awsmodel checks the limits below.
package awsname

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The AWS limits the names below are cut to. internal/awsmodel's name rules
// (rules_names.go) check the rendered names against the same numbers, with
// the AWS document each comes from.
const (
	// MaxAlarmName: CloudWatch PutMetricAlarm, AlarmName (1-255).
	MaxAlarmName = 255
	// MaxLogGroupName: CloudWatch Logs CreateLogGroup, logGroupName (1-512).
	MaxLogGroupName = 512
	// MaxCacheUserID: ElastiCache CreateUser, UserId (1-40), and
	// CreateUserGroup, UserGroupId (1-40).
	MaxCacheUserID = 40
	// MaxDBIdentifier: RDS CreateDBCluster, DBClusterIdentifier (1-63).
	MaxDBIdentifier = 63
	// MaxSnapshotIdentifier: RDS CreateDBClusterSnapshot,
	// DBClusterSnapshotIdentifier (1-255).
	MaxSnapshotIdentifier = 255
	// MaxQueueName: SQS CreateQueue, QueueName (1-80).
	MaxQueueName = 80
	// MaxTaskFamily: ECS RegisterTaskDefinition, family (up to 255).
	MaxTaskFamily = 255
	// MaxDashboardName: CloudWatch PutDashboard, DashboardName (up to 255).
	MaxDashboardName = 255
)

// MaxPrefix bounds a name prefix; a longer project name is cut (with a hash)
// to it. Short prefixes keep the 40-character ElastiCache ids readable.
const MaxPrefix = 24

// None is the cells:namePrefix value that keeps the names fleets had before
// they carried the fleet's name (no prefix at all).
const None = "none"

// PrefixRule says what a name prefix may be, for error messages.
const PrefixRule = `1–24 lowercase letters, digits or single inner hyphens, starting with a letter, without the label "cell" (e.g. "shop-prod"), or "none" to keep the names of a fleet created before names carried the fleet`

var prefixPattern = regexp.MustCompile(`^[a-z]([a-z0-9]|-[a-z0-9])*$`)

// CheckPrefix returns nil for a valid name prefix ("" and None included:
// both mean no prefix), else an error saying what is allowed.
func CheckPrefix(p string) error {
	if p == "" || p == None {
		return nil
	}
	if len(p) > MaxPrefix || !prefixPattern.MatchString(p) {
		return fmt.Errorf("invalid name prefix %q: use %s", p, PrefixRule)
	}
	for _, label := range strings.Split(p, "-") {
		if label == "cell" {
			return fmt.Errorf("invalid name prefix %q: the label \"cell\" would make <prefix>-<cell id> ambiguous; use %s", p, PrefixRule)
		}
	}
	return nil
}

// FromProject derives the default name prefix from a Pulumi project name
// (letters, digits, '_', '.', '-'): lowercased, every other character a
// hyphen, a leading digit prefixed with "p", and a name over MaxPrefix cut
// with a hash. A project whose prefix would contain the label "cell" is an
// error: the fleet sets cells:namePrefix instead.
func FromProject(project string) (string, error) {
	var b strings.Builder
	for _, r := range strings.ToLower(project) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	p := collapse(b.String())
	if p == "" {
		return "", fmt.Errorf("project name %q yields no name prefix: set %s:namePrefix (%s)", project, project, PrefixRule)
	}
	if p[0] >= '0' && p[0] <= '9' {
		p = "p" + p
	}
	p = Fit(p, MaxPrefix)
	if err := CheckPrefix(p); err != nil {
		return "", fmt.Errorf("the name prefix derived from project name %q: %v; set %s:namePrefix", project, err, project)
	}
	return p, nil
}

// collapse turns runs of hyphens into one and trims them at both ends.
func collapse(s string) string {
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	return strings.Trim(s, "-")
}

// Fit returns name when it has at most max characters, else its first
// characters, a hyphen and 8 hex digits of the SHA-256 of the whole name:
// cut names of different names stay different. The result never ends in
// a hyphen nor holds two in a row (RDS and ElastiCache refuse both).
func Fit(name string, max int) string {
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	h := hex.EncodeToString(sum[:])[:8]
	keep := max - len(h) - 1
	if keep < 1 {
		return h[:max]
	}
	return strings.TrimRight(name[:keep], "-") + "-" + h
}

// Cell names one cell's account-unique resources. The zero Prefix (or None)
// gives the names of a fleet without a prefix.
type Cell struct {
	Prefix string // the fleet's name prefix ("" or None: none)
	ID     string // the cell id
}

// For is the Cell of a cell id in a fleet with that prefix.
func For(prefix, cellID string) Cell { return Cell{Prefix: prefix, ID: cellID} }

// base is "<prefix>-<cell id>", or the cell id alone without a prefix.
func (c Cell) base() string {
	if c.Prefix == "" || c.Prefix == None {
		return c.ID
	}
	return c.Prefix + "-" + c.ID
}

// Alarm is the CloudWatch alarm cellctl-<prefix>-<cell>-<suffix>.
func (c Cell) Alarm(suffix string) string {
	return Fit("cellctl-"+c.base()+"-"+suffix, MaxAlarmName)
}

// LogGroup is the service's log group /cellctl/<prefix>/<cell>/service.
func (c Cell) LogGroup() string {
	p := "/cellctl/"
	if c.Prefix != "" && c.Prefix != None {
		p += c.Prefix + "/"
	}
	return Fit(p+c.ID+"/service", MaxLogGroupName)
}

// CacheAppUser is the ElastiCache user id (and, for IAM authentication,
// the user name too) the app connects as.
func (c Cell) CacheAppUser() string { return Fit(c.base()+"-app", MaxCacheUserID) }

// CacheDefaultUser is the id of the cell's switched-off "default" user.
func (c Cell) CacheDefaultUser() string { return Fit(c.base()+"-default", MaxCacheUserID) }

// CacheUserGroup is the cell's ElastiCache user group id.
func (c Cell) CacheUserGroup() string { return Fit(c.base()+"-users", MaxCacheUserID) }

// DBCluster is the Aurora cluster identifier.
func (c Cell) DBCluster() string { return Fit(c.base()+"-db", MaxDBIdentifier) }

// FinalSnapshot is the identifier of the snapshot Aurora takes when the
// cluster is deleted: "<base>-final-<UTC time>" for a release, so a cell
// recreated and released again never collides with its earlier snapshot.
// Outside a release the value is never used (the cluster is protected).
func (c Cell) FinalSnapshot(releasing bool, at time.Time) string {
	if !releasing {
		return Fit(c.base()+"-final", MaxSnapshotIdentifier)
	}
	return Fit(c.base()+"-final-"+strings.ToLower(at.UTC().Format("20060102t150405z")), MaxSnapshotIdentifier)
}

// LaneQueue is the SQS queue name of lane k.
func (c Cell) LaneQueue(k int) string {
	return Fit(c.base()+"-lane-"+strconv.Itoa(k), MaxQueueName)
}

// TaskFamily is the ECS task definition family of the cell's service.
func (c Cell) TaskFamily() string { return Fit(c.base()+"-service", MaxTaskFamily) }

// MigrationTaskFamily is the ECS task definition family of the cell's
// schema migration task (cellmodule/migration.go), <prefix>-<cell>-migrate:
// ECS allows up to 255 letters, numbers, hyphens and underscores.
func (c Cell) MigrationTaskFamily() string { return Fit(c.base()+"-migrate", MaxTaskFamily) }

// Dashboard is the fleet's CloudWatch dashboard, cellctl-<prefix>-fleet.
// Without a prefix it keeps the name it had (from the project name, whose
// dots and other characters CloudWatch refuses become hyphens).
func Dashboard(prefix, project string) string {
	if prefix == "" || prefix == None {
		prefix = project
	}
	var b strings.Builder
	for _, r := range prefix {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return Fit("cellctl-"+b.String()+"-fleet", MaxDashboardName)
}

// String is "<prefix>/<cell id>", for messages.
func (c Cell) String() string { return c.Prefix + "/" + c.ID }
