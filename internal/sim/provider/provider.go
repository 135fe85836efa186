package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	"google.golang.org/grpc/peer"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// Version is the pulumi-aws version the simulator answers as.
const Version = "6.83.4"

// Options configures one simulated provider (one per stack).
type Options struct {
	// Dir holds the simulated cloud ("" means DefaultDir).
	Dir string
	// Stack is recorded on every resource and matched by faults and
	// latency rules; "" takes it from each resource's URN.
	Stack string
	// Project is the Pulumi project of the stack, recorded with it (one
	// simulated account may hold several fleets, each with its cell-a);
	// "" takes it from each resource's URN.
	Project string
	// Account is the account id AWS reports (default 123456789012).
	Account string
	// Region applies when a provider's configuration has none (default
	// us-east-1).
	Region string
	// Latency rules of this process; they win over persisted ones.
	Latency []store.Latency
	// DependencyTimeout bounds how long a delete waits for dependents AWS
	// is still deleting, as the terraform provider retries (default 30s).
	DependencyTimeout time.Duration
	// Log receives one line per operation; nil discards.
	Log io.Writer
	// Now is the clock (tests).
	Now func() time.Time
}

// Provider is the simulated AWS resource provider. It implements
// plugin.Provider; Start serves it over gRPC.
//
// A stack may configure several aws providers (the default one and, for
// Lambda@Edge, an explicit us-east-1 one). Under PULUMI_DEBUG_PROVIDERS
// every provider instance the engine loads dials the same port on its own
// gRPC connection, so configuration is kept per connection, keyed by the
// peer address of the call.
type Provider struct {
	plugin.UnimplementedProvider

	cloud *store.Cloud
	opts  Options
	base  awsmodel.Env

	mu       sync.Mutex
	conns    map[string]conn
	fallback *conn

	cancelCtx context.Context
	cancel    context.CancelFunc
}

var _ plugin.GrpcProvider = (*Provider)(nil)

// conn is what one provider configuration (one gRPC connection) works
// in: its environment (region, account for ARNs) and the store of its
// account (the home cloud, or the account its assumeRole reaches).
type conn struct {
	env   awsmodel.Env
	cloud *store.Cloud
}

// NewProvider returns a provider over cloud.
func NewProvider(cloud *store.Cloud, opts Options) *Provider {
	if opts.DependencyTimeout == 0 {
		opts.DependencyTimeout = 30 * time.Second
	}
	if opts.Now != nil {
		cloud.SetClock(opts.Now)
	}
	base := awsmodel.DefaultEnv()
	if opts.Account != "" {
		base.Account = opts.Account
	}
	if opts.Region != "" {
		base.Region = opts.Region
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Provider{cloud: cloud, opts: opts, base: base, conns: map[string]conn{}, cancelCtx: ctx, cancel: cancel}
}

func (p *Provider) logf(format string, args ...any) {
	if p.opts.Log != nil {
		fmt.Fprintf(p.opts.Log, "sim: "+format+"\n", args...)
	}
}

// connKey identifies the gRPC connection a call arrived on.
func connKey(ctx context.Context) string {
	if pr, ok := peer.FromContext(ctx); ok && pr.Addr != nil {
		return pr.Addr.String()
	}
	return "local"
}

func (p *Provider) connFor(ctx context.Context) conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.conns[connKey(ctx)]; ok {
		return c
	}
	if p.fallback != nil {
		return *p.fallback
	}
	return conn{env: p.base, cloud: p.cloud}
}

func (p *Provider) target(ctx context.Context, urn resource.URN, typ tokens.Type, name string) target {
	stack, project := p.opts.Stack, p.opts.Project
	if stack == "" && urn != "" {
		stack = urn.Stack().String()
	}
	if project == "" && urn != "" {
		project = urn.Project().String()
	}
	if name == "" && urn != "" {
		name = urn.Name()
	}
	c := p.connFor(ctx)
	return target{project: project, stack: stack, urn: string(urn), typ: string(typ), name: name, env: c.env, cloud: c.cloud}
}

// forget drops the configuration of a closed connection.
func (p *Provider) forget(key string) {
	p.mu.Lock()
	delete(p.conns, key)
	p.mu.Unlock()
}

// cancelled is closed when the engine cancels the operations in flight.
func (p *Provider) cancelled() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cancelCtx.Done()
}

// delay sleeps for the configured latency, without holding any lock.
func (p *Provider) delay(ctx context.Context, op string, t target) error {
	d, ok := store.LatencyFor(p.opts.Latency, t.key(), op, t.typ)
	if !ok {
		rules, err := latencyRules(t.cloud)
		if err != nil {
			return err
		}
		d, _ = store.LatencyFor(rules, t.key(), op, t.typ)
	}
	if d <= 0 {
		return nil
	}
	cancelled := p.cancelled()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s of %s interrupted: %w", op, t, ctx.Err())
	case <-cancelled:
		return fmt.Errorf("%s of %s cancelled by the engine", op, t)
	}
}

// ---- plugin.Provider ------------------------------------------------------

// Attach implements plugin.GrpcProvider: the engine attaches to a provider
// it did not start.
func (p *Provider) Attach(string) error { return nil }

// Close implements io.Closer.
func (p *Provider) Close() error { return nil }

// GetPluginInfo implements plugin.Provider.
func (p *Provider) GetPluginInfo(context.Context) (plugin.PluginInfo, error) {
	v := semver.MustParse(Version)
	return plugin.PluginInfo{Version: &v}, nil
}

// Handshake implements plugin.Provider.
func (p *Provider) Handshake(context.Context, plugin.ProviderHandshakeRequest) (*plugin.ProviderHandshakeResponse, error) {
	return &plugin.ProviderHandshakeResponse{AcceptSecrets: true, AcceptResources: true, SupportsAutonamingConfiguration: true}, nil
}

// SignalCancellation implements plugin.Provider: pending latency sleeps
// end at once. The engine also sends it at the end of every operation, so
// later operations (the next up on the same server) are not affected.
func (p *Provider) SignalCancellation(context.Context) error {
	p.mu.Lock()
	p.cancel()
	p.cancelCtx, p.cancel = context.WithCancel(context.Background())
	p.mu.Unlock()
	return nil
}

// CheckConfig implements plugin.Provider.
func (p *Provider) CheckConfig(_ context.Context, req plugin.CheckConfigRequest) (plugin.CheckConfigResponse, error) {
	ar, err := readAssumeRole(req.News)
	if err != nil {
		return plugin.CheckConfigResponse{Properties: req.News, Failures: []plugin.CheckFailure{{Property: "assumeRole", Reason: err.Error()}}}, nil
	}
	if _, err := awsmodel.ProviderEnv(req.News, ar.base(p.base)); err != nil {
		prop := resource.PropertyKey("region")
		if strings.Contains(err.Error(), "account") {
			prop = "allowedAccountIds"
		}
		return plugin.CheckConfigResponse{Properties: req.News, Failures: []plugin.CheckFailure{{Property: prop, Reason: err.Error()}}}, nil
	}
	return plugin.CheckConfigResponse{Properties: req.News}, nil
}

// DiffConfig implements plugin.Provider: a new region replaces the
// provider (and with it every resource it manages).
func (p *Provider) DiffConfig(_ context.Context, req plugin.DiffConfigRequest) (plugin.DiffConfigResponse, error) {
	olds, news := req.OldInputs.Copy(), req.NewInputs.Copy()
	delete(olds, "version")
	delete(news, "version")
	d := olds.Diff(news)
	if d == nil || !d.AnyChanges() {
		return plugin.DiffResult{Changes: plugin.DiffNone}, nil
	}
	res := plugin.DiffResult{Changes: plugin.DiffSome, ChangedKeys: d.ChangedKeys()}
	oldEnv, _ := awsmodel.ProviderEnv(req.OldInputs, p.base)
	newEnv, _ := awsmodel.ProviderEnv(req.NewInputs, p.base)
	if oldEnv.Region != newEnv.Region {
		res.ReplaceKeys = []resource.PropertyKey{"region"}
	}
	// Another account is another cloud: its resources are not these.
	oldRole, _ := readAssumeRole(req.OldInputs)
	newRole, _ := readAssumeRole(req.NewInputs)
	if oldRole.base(p.base).Account != newRole.base(p.base).Account {
		res.ReplaceKeys = append(res.ReplaceKeys, "assumeRole")
	}
	return res, nil
}

// Configure implements plugin.Provider; the configuration applies to the
// calling connection.
func (p *Provider) Configure(ctx context.Context, req plugin.ConfigureRequest) (plugin.ConfigureResponse, error) {
	ar, err := readAssumeRole(req.Inputs)
	if err != nil {
		return plugin.ConfigureResponse{}, err
	}
	// The account checks (allowedAccountIds) apply to the account the
	// provider works in: the assumed one when it assumes a role.
	env, err := awsmodel.ProviderEnv(req.Inputs, ar.base(p.base))
	if err != nil {
		return plugin.ConfigureResponse{}, err
	}
	cloud, err := p.assume(ar)
	if err != nil {
		return plugin.ConfigureResponse{}, err
	}
	name := ""
	if req.URN != nil {
		name = req.URN.Name()
	}
	c := conn{env: env, cloud: cloud}
	p.mu.Lock()
	p.conns[connKey(ctx)] = c
	if p.fallback == nil || strings.HasPrefix(name, "default") {
		p.fallback = &c
	}
	p.mu.Unlock()
	p.logf("configure %s provider %s: region %s, account %s (connection %s)", p.opts.Stack, name, env.Region, env.Account, connKey(ctx))
	return plugin.ConfigureResponse{}, nil
}

// Check implements plugin.Provider: defaults, autonaming (stable across
// updates) and validation.
func (p *Provider) Check(_ context.Context, req plugin.CheckRequest) (plugin.CheckResponse, error) {
	name := req.Name
	if name == "" {
		name = req.URN.Name()
	}
	props, failures := awsmodel.Check(awsmodel.CheckRequest{
		Type: string(req.Type), Name: name, Olds: req.Olds, News: req.News, RandomSeed: req.RandomSeed, Autonaming: req.Autonaming,
	})
	return plugin.CheckResponse{Properties: props, Failures: failures}, nil
}

// Diff implements plugin.Provider.
func (p *Provider) Diff(_ context.Context, req plugin.DiffRequest) (plugin.DiffResponse, error) {
	return awsmodel.Diff(string(req.Type), req.OldInputs, req.NewInputs, req.IgnoreChanges), nil
}

// Create implements plugin.Provider. In a preview nothing is touched and
// the outputs AWS would compute are unknown.
func (p *Provider) Create(ctx context.Context, req plugin.CreateRequest) (plugin.CreateResponse, error) {
	t := p.target(ctx, req.URN, req.Type, req.Name)
	if req.Preview {
		return plugin.CreateResponse{Properties: awsmodel.PreviewOutputs(t.typ, req.Properties, nil, t.env)}, nil
	}
	start := time.Now()
	if err := p.delay(ctx, store.OpCreate, t); err != nil {
		return plugin.CreateResponse{}, err
	}
	fault := injectFault(t.cloud, store.OpCreate, t)
	var lost *store.InjectedFaultError
	if errors.As(fault, &lost) && lost.Fault.LoseAnswer {
		fault = nil
	} else {
		lost = nil
	}
	if fault != nil {
		p.logf("create %s: %v", t, fault)
		return plugin.CreateResponse{}, fault
	}
	id, outs, err := create(t.cloud, t, req.Properties)
	if err != nil {
		p.logf("create %s: %v", t, err)
		return plugin.CreateResponse{}, err
	}
	if lost != nil {
		// The resource exists; its id never reaches the engine.
		p.logf("create %s → %s, answer lost: %v", t, id, lost)
		return plugin.CreateResponse{}, lost
	}
	p.logf("create %s → %s in %s (%s)", t, id, t.env.Region, time.Since(start).Round(time.Millisecond))
	return plugin.CreateResponse{ID: resource.ID(id), Properties: outs, Status: resource.StatusOK}, nil
}

// Update implements plugin.Provider.
func (p *Provider) Update(ctx context.Context, req plugin.UpdateRequest) (plugin.UpdateResponse, error) {
	t := p.target(ctx, req.URN, req.Type, req.Name)
	if req.Preview {
		return plugin.UpdateResponse{Properties: awsmodel.PreviewOutputs(t.typ, req.NewInputs, req.OldOutputs, t.env)}, nil
	}
	if err := p.delay(ctx, store.OpUpdate, t); err != nil {
		return plugin.UpdateResponse{}, err
	}
	if err := injectFault(t.cloud, store.OpUpdate, t); err != nil {
		p.logf("update %s: %v", t, err)
		return plugin.UpdateResponse{}, err
	}
	outs, err := update(t.cloud, t, string(req.ID), req.NewInputs)
	if err != nil {
		p.logf("update %s: %v", t, err)
		return plugin.UpdateResponse{}, err
	}
	p.logf("update %s (%s)", t, req.ID)
	return plugin.UpdateResponse{Properties: outs, Status: resource.StatusOK}, nil
}

// Delete implements plugin.Provider.
func (p *Provider) Delete(ctx context.Context, req plugin.DeleteRequest) (plugin.DeleteResponse, error) {
	t := p.target(ctx, req.URN, req.Type, req.Name)
	if err := p.delay(ctx, store.OpDelete, t); err != nil {
		return plugin.DeleteResponse{}, err
	}
	if err := injectFault(t.cloud, store.OpDelete, t); err != nil {
		p.logf("delete %s: %v", t, err)
		return plugin.DeleteResponse{}, err
	}
	if err := destroy(ctx, t.cloud, t, string(req.ID), p.opts.DependencyTimeout); err != nil {
		p.logf("delete %s: %v", t, err)
		return plugin.DeleteResponse{}, err
	}
	p.logf("delete %s (%s)", t, req.ID)
	return plugin.DeleteResponse{Status: resource.StatusOK}, nil
}

// Read implements plugin.Provider: the live state, with inputs rebuilt
// from it so out-of-band changes show as drift in a refresh. A resource
// that no longer exists reads as nothing.
func (p *Provider) Read(ctx context.Context, req plugin.ReadRequest) (plugin.ReadResponse, error) {
	t := p.target(ctx, req.URN, req.Type, req.Name)
	if err := p.delay(ctx, store.OpRead, t); err != nil {
		return plugin.ReadResponse{}, err
	}
	if err := injectFault(t.cloud, store.OpRead, t); err != nil {
		return plugin.ReadResponse{}, err
	}
	outs, edited, _, err := read(t.cloud, t.key(), t.typ, string(req.ID))
	if err != nil {
		return plugin.ReadResponse{}, err
	}
	if outs == nil {
		p.logf("read %s (%s): gone", t, req.ID)
		return plugin.ReadResponse{}, nil
	}
	inputs := awsmodel.InputsFromState(t.typ, req.Inputs, outs, edited)
	return plugin.ReadResponse{ReadResult: plugin.ReadResult{ID: req.ID, Inputs: inputs, Outputs: outs}, Status: resource.StatusOK}, nil
}

// Invoke implements plugin.Provider.
func (p *Provider) Invoke(ctx context.Context, req plugin.InvokeRequest) (plugin.InvokeResponse, error) {
	c := p.connFor(ctx)
	t := target{project: p.opts.Project, stack: p.opts.Stack, typ: string(req.Tok), env: c.env, cloud: c.cloud}
	if err := p.delay(ctx, store.OpInvoke, t); err != nil {
		return plugin.InvokeResponse{}, err
	}
	out, err := awsmodel.Invoke(string(req.Tok), req.Args, t.env)
	if err != nil {
		return plugin.InvokeResponse{}, err
	}
	return plugin.InvokeResponse{Properties: out}, nil
}

// GetSchema implements plugin.Provider; the engine does not need it for
// programs that bring their own SDK.
func (p *Provider) GetSchema(context.Context, plugin.GetSchemaRequest) (plugin.GetSchemaResponse, error) {
	return plugin.GetSchemaResponse{Schema: []byte(`{"name":"aws","version":"` + Version + `"}`)}, nil
}
