package sim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cellctl/cellctl/internal/sim/awsapi"
	"github.com/cellctl/cellctl/internal/sim/health"
	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// DefaultDir is where the simulated cloud lives unless told otherwise.
const DefaultDir = store.DefaultDir

// Version is the pulumi-aws version the simulator answers as.
const Version = provider.Version

// Operations a fault or latency rule can target.
const (
	OpCreate = store.OpCreate
	OpUpdate = store.OpUpdate
	OpDelete = store.OpDelete
	OpRead   = store.OpRead
	OpInvoke = store.OpInvoke
	OpAny    = store.OpAny
)

// Alarm states, as CloudWatch names them.
const (
	AlarmOK               = store.AlarmOK
	AlarmAlarm            = store.AlarmAlarm
	AlarmInsufficientData = store.AlarmInsufficientData
)

// The types the simulator's callers name.
type (
	Options            = provider.Options
	Server             = provider.Server
	Fault              = store.Fault
	InjectedFaultError = store.InjectedFaultError
	Latency            = store.Latency
	Duration           = store.Duration
	Filter             = store.Filter
	Resource           = store.Resource
	CorruptError       = store.CorruptError
	Alarm              = store.Alarm
	Quota              = store.Quota
	Usage              = store.Usage
	Snapshot           = store.Snapshot
	HostedZone         = store.HostedZone
	KMSKey             = store.KMSKey
	OriginVerify       = store.OriginVerify
	HealthProfile      = health.Profile
	HealthTarget       = health.Target
	HealthSample       = health.Sample
	HealthReport       = health.Report
	CellHealth         = health.Cell
	EdgeProfile        = health.EdgeProfile
	EdgeTarget         = health.EdgeTarget
)

// Cloud is a simulated AWS account kept in a directory (store.Cloud) with
// its health model: alarm listings advance the model first, and Reset
// clears it too. It is safe to use from several goroutines and several
// processes at once.
type Cloud struct{ *store.Cloud }

// Open opens the simulated cloud in dir ("" means DefaultDir); nothing is
// created before the first change.
func Open(dir string) (*Cloud, error) {
	c, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	return &Cloud{c}, nil
}

// Start opens the cloud in opts.Dir and serves a provider for opts.Stack
// on 127.0.0.1 at a free port. Cancelling ctx stops the server.
func Start(ctx context.Context, opts Options) (*Server, error) { return provider.Start(ctx, opts) }

// StartAPI serves the AWS APIs of the simulated cloud in dir on 127.0.0.1
// at a random port until stop is called or ctx ends; endpoint is the base
// URL to give the clients ("http://127.0.0.1:PORT").
func StartAPI(ctx context.Context, dir string) (endpoint string, stop func(), err error) {
	return awsapi.Start(ctx, dir)
}

// ServeAPI is StartAPI over an open cloud (tests pass one with a clock).
func ServeAPI(ctx context.Context, c *Cloud) (endpoint string, stop func(), err error) {
	return awsapi.Serve(ctx, c.Cloud)
}

// CheckFault refuses a fault that could never fire or is not what the
// operator meant (see store.CheckFault).
func CheckFault(f Fault, stacks []string) error { return store.CheckFault(f, stacks) }

// QualifiedStack is a stack pattern that names only project's stack (see
// store.QualifiedStack).
func QualifiedStack(project, pattern string) string { return store.QualifiedStack(project, pattern) }

// ParsePercent reads an error rate: "3%", "0.5 %" or a fraction "0.03".
func ParsePercent(s string) (float64, error) { return health.ParsePercent(s) }

// DefaultHealth is what a cell serves without any profile.
func DefaultHealth() HealthProfile { return health.Default() }

// WithClock returns the cloud reading time from now (tests, rehearsals):
// the health model and alarm timestamps follow it.
func (c *Cloud) WithClock(now func() time.Time) *Cloud { return &Cloud{c.Cloud.WithClock(now)} }

// Reset empties the cloud and its health model; the secret key stays.
func (c *Cloud) Reset() error { return health.Reset(c.Cloud) }

// ResetEveryAccount empties the cloud of every account (Reset), the home
// one first; the accounts and their roles stay, as an organization's
// accounts outlive what is deployed in them.
func (c *Cloud) ResetEveryAccount() error {
	var errs []error
	err := c.Each(func(id string, a *Cloud) error {
		if err := a.Reset(); err != nil {
			errs = append(errs, fmt.Errorf("account %s: %w", id, err))
		}
		return nil
	})
	return errors.Join(append(errs, err)...)
}

// Alarms lists the metric alarms of a stack or cell ("" for all), with
// their states evaluated up to now.
func (c *Cloud) Alarms(stack string) ([]Alarm, error) { return health.Alarms(c.Cloud, stack) }

// AlarmStates maps each alarm name (and logical name) of a stack or cell
// to its state: what a wave gate reads.
func (c *Cloud) AlarmStates(stack string) (map[string]string, error) {
	return health.AlarmStates(c.Cloud, stack)
}

// SetHealth merges p into the profile of an image or a cell.
func (c *Cloud) SetHealth(t HealthTarget, p HealthProfile) (HealthProfile, error) {
	return health.Set(c.Cloud, t, p)
}

// ClearHealth removes profiles: of one image or cell, or (zero target)
// all of them, releasing alarm states set by hand.
func (c *Cloud) ClearHealth(t HealthTarget) error { return health.Clear(c.Cloud, t) }

// Health advances the model to now and reports it, with the last history
// minutes of each cell.
func (c *Cloud) Health(history int) (HealthReport, error) { return health.Read(c.Cloud, history) }

// AdvanceHealth brings every cell's history and alarm states up to now.
func (c *Cloud) AdvanceHealth() error { return health.Advance(c.Cloud) }

// SetEdgeHealth sets the profile of an edge function build.
func (c *Cloud) SetEdgeHealth(t EdgeTarget, p EdgeProfile) error {
	return health.SetEdge(c.Cloud, t, p)
}

// ClearEdgeHealth removes the profile of one build, or (zero target) all.
func (c *Cloud) ClearEdgeHealth(t EdgeTarget) error { return health.ClearEdge(c.Cloud, t) }

// EdgeHealth lists the edge profiles set (key "table:N" or "code:SHA").
func (c *Cloud) EdgeHealth() (map[string]EdgeProfile, error) { return health.EdgeProfiles(c.Cloud) }

// The simulator's AWS accounts (store/accounts.go): the sim dir is the
// home account; a role registered in another account creates that
// account, a store of its own under accounts/<id>/.
type (
	Account    = store.Account
	Role       = store.Role
	STSError   = store.STSError
	Identity   = store.Identity
	AssumeRole = store.AssumeRoleInput
)

// AddRole registers role name in account (creating the account) that the
// trust accounts (none: the home account) may assume, requiring
// externalID when it is set.
func AddRole(dir, account, name string, trust []string, externalID string) error {
	c, err := store.Open(dir)
	if err != nil {
		return err
	}
	_, err = c.AddRole(account, name, trust, externalID)
	return err
}

// Accounts lists the home account and the registered ones with their
// roles, by id.
func Accounts(dir string) ([]Account, error) {
	c, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	return c.Accounts()
}

// OpenAccount opens the simulated cloud of one account of dir: "" or the
// home id is the home account (Open); another must be registered.
func OpenAccount(dir, account string) (*Cloud, error) {
	c, err := Open(dir)
	if err != nil {
		return nil, err
	}
	return c.Account(account)
}

// Account is the cloud of account id as seen from this home cloud ("" or
// the home id: c itself), sharing its clock.
func (c *Cloud) Account(id string) (*Cloud, error) {
	a, err := c.Cloud.Account(id)
	if err != nil {
		return nil, err
	}
	if a == c.Cloud {
		return c, nil
	}
	return &Cloud{a}, nil
}

// Each runs fn on the cloud of every account, the home one first: what
// looks a stack's resources up when they may live in any account.
func (c *Cloud) Each(fn func(account string, a *Cloud) error) error {
	ids, err := c.AccountIDs()
	if err != nil {
		return err
	}
	for _, id := range ids {
		a, err := c.Account(id)
		if err != nil {
			return err
		}
		if err := fn(id, a); err != nil {
			return err
		}
	}
	return nil
}

// ResourcesOfEveryAccount lists the live resources matching f in every
// account, the home one first: a stack's resources live in the account
// its provider assumed a role in, which the stack alone does not tell.
func (c *Cloud) ResourcesOfEveryAccount(f Filter) ([]Resource, error) {
	var out []Resource
	err := c.Each(func(_ string, a *Cloud) error {
		rs, err := a.Resources(f)
		out = append(out, rs...)
		return err
	})
	return out, err
}
