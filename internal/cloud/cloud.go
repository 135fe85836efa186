// Package cloud is the one place that knows the difference between
// `--cloud aws` and `--cloud sim`. New builds a Bundle once per command
// from the flag; everything that touches the cloud takes what it needs
// from the bundle, so the choice changes endpoints, credentials and the
// provider a stack attaches, never code paths (DESIGN.md "The simulator
// speaks AWS's APIs"):
//
//   - how a stack's engine run reaches its resource provider (Attach):
//     the real pulumi-aws plugin on aws, an in-process simulated provider
//     attached through PULUMI_DEBUG_PROVIDERS on sim;
//   - how the operations an interrupted update left pending are resolved
//     (ResolvePending): the simulator can say which creates completed; on
//     AWS there is no generic lookup and the operator decides;
//   - the endpoint and credentials every aws-sdk-go-v2 client uses (AWS):
//     AWS's default chain on aws; the simulator's loopback AWS API and
//     static fake credentials on sim.
package cloud

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/sim"
)

// Kinds of cloud (--cloud).
const (
	AWS = "aws"
	Sim = "sim"
)

// Kinds lists the accepted --cloud values: the ones Pulumi.yaml's
// cellctl.cloud accepts (the fleet loader validates that setting, and
// this package depends on it).
var Kinds = fleet.Clouds

// StateDir is where cellctl keeps local state inside the fleet repository.
const StateDir = ".cellctl"

// SimDirEnv names a simulated cloud shared by several checkouts or
// fleets: every cellctl whose environment sets it to the same directory
// works in one simulated AWS account (as two CI jobs, or a prod and a
// staging fleet, share one real account). Unset, each fleet has its own
// account in <fleet>/.cellctl/sim. A relative path is taken from the
// current directory.
const SimDirEnv = "CELLCTL_SIM_DIR"

// SimDir is where the simulated cloud of the fleet in fleetDir lives:
// $CELLCTL_SIM_DIR when set, else <fleetDir>/.cellctl/sim. Every path
// that opens the simulator (the cloud bundle, `cellctl sim …`) takes its
// directory from here.
func SimDir(fleetDir string) string {
	if d := os.Getenv(SimDirEnv); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	return filepath.Join(fleetDir, StateDir, "sim")
}

// AWSAccess is how an aws-sdk-go-v2 client reaches AWS: plain data, so
// packages that describe access need no AWS SDK import. A client built
// from it sets BaseEndpoint to Endpoint and static credentials from the
// keys when Endpoint is set; when Endpoint is empty it uses AWS's own
// endpoints and the SDK's default credential chain (environment, shared
// config and SSO, container and instance roles) — never static keys.
type AWSAccess struct {
	// Endpoint is the base URL of every AWS API the client calls
	// ("http://127.0.0.1:PORT" for the simulator); empty: AWS's endpoints.
	Endpoint string
	// AccessKeyID, SecretAccessKey and SessionToken are static
	// credentials, used only together with Endpoint.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// DefaultChain reports whether clients use AWS's endpoints and the SDK's
// default credential chain.
func (a AWSAccess) DefaultChain() bool { return a.Endpoint == "" }

// Target is the one way a reader's target is built from the access: on
// AWS's endpoints only the region (the SDK's default chain finds the
// credentials, temporary ones with their session token included); at an
// endpoint, the whole static credential — keys and session token — so a
// temporary credential handed to a custom endpoint still signs.
func (a AWSAccess) Target(region string) awsapi.Target {
	if a.DefaultChain() {
		return awsapi.Target{Region: region}
	}
	return awsapi.Target{Region: region, Endpoint: a.Endpoint,
		AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey, SessionToken: a.SessionToken}
}

// Target is the reader target of a region on this cloud (AWSAccess.Target
// of the bundle's access; on sim the first call starts its AWS API).
func (b *Bundle) Target(ctx context.Context, region string) (awsapi.Target, error) {
	a, err := b.AWS(ctx)
	if err != nil {
		return awsapi.Target{}, err
	}
	return a.Target(region), nil
}

// The simulator's static fake credentials: it accepts these and nothing
// else, so a client pointed at it can never be holding real keys.
const (
	SimAccessKeyID     = "ASIACELLCTLSIMULATED"
	SimSecretAccessKey = "cellctl-simulated-aws-not-a-secret"
)

// Attachment is what one stack's engine run needs to reach its provider:
// extra environment for its workspace only (PULUMI_DEBUG_PROVIDERS) and
// how to release it.
type Attachment struct {
	Env   map[string]string
	Close func() error
}

// CloudResource is one live resource the cloud attributes to a stack.
type CloudResource struct {
	URN, Type, ID string
}

// Bundle is one cloud, as every part of cellctl reaches it.
type Bundle struct {
	// Kind is AWS or Sim.
	Kind string
	// Attach connects one stack's engine run to its provider; nil: the
	// real pulumi-aws provider plugin, installed once before stacks fan
	// out.
	Attach func(ctx context.Context, stack string) (*Attachment, error)
	// ResolvePending tells, of the resources an interrupted update was
	// creating (URNs), which exist in the cloud (urn → id); nil: no
	// generic lookup exists and the operator decides.
	ResolvePending func(ctx context.Context, stack string, urns []string) (map[string]string, error)
	// StackResources lists the live resources the cloud holds for a
	// stack (their Pulumi URN, type and id), for the orphan audit after
	// an interrupted update; nil: the cloud cannot be listed by stack
	// generically (AWS), and the operator decides.
	StackResources func(ctx context.Context, stack string) ([]CloudResource, error)
	// Offline forbids plugin downloads: the simulated cloud needs none.
	Offline bool

	awsOnce sync.Once
	aws     AWSAccess
	awsErr  error
	start   func(ctx context.Context) (AWSAccess, func(), error)
	mu      sync.Mutex
	stops   []func()
}

// AWS returns the endpoint and credentials for aws-sdk-go-v2 clients. On
// sim the simulator's AWS API server starts on the first call and stops
// with Close.
func (b *Bundle) AWS(ctx context.Context) (AWSAccess, error) {
	b.awsOnce.Do(func() {
		if b.start == nil {
			return
		}
		var stop func()
		// The server lives as long as the bundle (Close stops it), not as
		// long as the first caller's context: health --watch's first read
		// ran under a context cancelled when that read ended, and every
		// later update found the endpoint refusing connections.
		b.aws, stop, b.awsErr = b.start(context.WithoutCancel(ctx))
		if stop != nil {
			b.mu.Lock()
			b.stops = append(b.stops, stop)
			b.mu.Unlock()
		}
	})
	return b.aws, b.awsErr
}

// Close stops whatever the bundle started.
func (b *Bundle) Close() error {
	b.mu.Lock()
	stops := b.stops
	b.stops = nil
	b.mu.Unlock()
	for _, s := range stops {
		s()
	}
	return nil
}

// New builds the bundle of kind for the fleet in fleetDir whose Pulumi
// project is project. On sim the project qualifies every stack the bundle
// names (sim.QualifiedStack): one simulated account may hold several
// fleets (SimDirEnv), each with its own cell-a, and a fleet's orphan audit
// and pending-create lookup must never see another fleet's resources.
func New(kind, fleetDir, project string) (*Bundle, error) {
	switch kind {
	case AWS:
		return &Bundle{Kind: AWS}, nil
	case Sim:
		return newSim(SimDir(fleetDir), project), nil
	}
	return nil, fmt.Errorf("--cloud %q is not supported (allowed: aws, sim)", kind)
}

func newSim(dir, project string) *Bundle {
	b := &Bundle{Kind: Sim, Offline: true}
	b.Attach = func(ctx context.Context, stack string) (*Attachment, error) {
		srv, err := sim.Start(ctx, sim.Options{Dir: dir, Stack: stack, Project: project})
		if err != nil {
			return nil, err
		}
		return &Attachment{
			Env:   map[string]string{"PULUMI_DEBUG_PROVIDERS": srv.DebugProviders()},
			Close: func() error { srv.Stop(); return nil },
		}, nil
	}
	// A stack's resources may live in any simulated account (its provider
	// may assume a role in another): both lookups search them all.
	liveOf := func(stack string) ([]sim.Resource, error) {
		c, err := sim.Open(dir)
		if err != nil {
			return nil, err
		}
		return c.ResourcesOfEveryAccount(sim.Filter{Stack: sim.QualifiedStack(project, stack)})
	}
	b.StackResources = func(_ context.Context, stack string) ([]CloudResource, error) {
		live, err := liveOf(stack)
		if err != nil {
			return nil, err
		}
		var out []CloudResource
		for _, r := range live {
			// An abandoned resource (skipDestroy) left the state on purpose.
			if r.Stack == stack && (project == "" || r.Project == project) && !r.Abandoned && r.URN != "" {
				out = append(out, CloudResource{URN: r.URN, Type: r.Type, ID: r.ID})
			}
		}
		return out, nil
	}
	b.ResolvePending = func(_ context.Context, stack string, urns []string) (map[string]string, error) {
		live, err := liveOf(stack)
		if err != nil {
			return nil, err
		}
		want := map[string]bool{}
		for _, u := range urns {
			want[u] = true
		}
		found := map[string]string{}
		for _, r := range live {
			if want[r.URN] {
				found[r.URN] = r.ID
			}
		}
		return found, nil
	}
	b.start = func(ctx context.Context) (AWSAccess, func(), error) {
		endpoint, stop, err := sim.StartAPI(ctx, dir)
		if err != nil {
			return AWSAccess{}, nil, fmt.Errorf("starting the simulator's AWS API: %w", err)
		}
		return AWSAccess{Endpoint: endpoint, AccessKeyID: SimAccessKeyID, SecretAccessKey: SimSecretAccessKey}, stop, nil
	}
	return b
}
