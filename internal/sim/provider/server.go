package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/stats"

	"github.com/cellctl/cellctl/internal/sim/store"
)

// Server serves one simulated provider on a loopback port. Point a stack's
// engine at it with PULUMI_DEBUG_PROVIDERS=DebugProviders() in that
// stack's workspace environment only. The engine never stops an attached
// provider; call Stop.
type Server struct {
	provider *Provider
	cloud    *store.Cloud
	srv      *grpc.Server
	lis      net.Listener
	done     chan error
	stopOnce sync.Once
}

// Start opens the cloud in opts.Dir and serves a provider for opts.Stack
// on 127.0.0.1 at a free port. Cancelling ctx stops the server.
func Start(ctx context.Context, opts Options) (*Server, error) {
	cloud, err := store.Open(opts.Dir)
	if err != nil {
		return nil, err
	}
	p := NewProvider(cloud, opts)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("simulated AWS: listening on loopback: %w", err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(400<<20), grpc.StatsHandler(connTracker{p}))
	pulumirpc.RegisterResourceProviderServer(srv, &rpcServer{ResourceProviderServer: plugin.NewProviderServer(p), p: p})
	hs := health.NewServer()
	healthgrpc.RegisterHealthServer(srv, hs)
	hs.SetServingStatus("", healthgrpc.HealthCheckResponse_SERVING)
	s := &Server{provider: p, cloud: cloud, srv: srv, lis: lis, done: make(chan error, 1)}
	go func() {
		err := srv.Serve(lis)
		if errors.Is(err, grpc.ErrServerStopped) {
			err = nil
		}
		s.done <- err
		close(s.done)
	}()
	if ctx != nil {
		go func() {
			select {
			case <-ctx.Done():
				s.Stop()
			case <-s.done:
			}
		}()
	}
	p.logf("serving %s on %s (cloud %s)", opts.Stack, lis.Addr(), cloud.Dir())
	return s, nil
}

// rpcServer is the SDK's provider server with Diff answered the way
// pulumi-aws answers it: top-level changed keys in Diffs and Replaces, the
// nested paths in DetailedDiff with HasDetailedDiff set. (The SDK server
// sends the nested paths as Diffs and never sets HasDetailedDiff, so the
// engine would show "[diff: ]" and drop the detail.)
type rpcServer struct {
	pulumirpc.ResourceProviderServer
	p *Provider
}

func (s *rpcServer) Diff(ctx context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	opts := func(label string) plugin.MarshalOptions {
		return plugin.MarshalOptions{Label: label, KeepUnknowns: true, KeepSecrets: true, KeepResources: true, PropagateNil: true}
	}
	olds, err := plugin.UnmarshalProperties(req.GetOldInputs(), opts("oldInputs"))
	if err != nil {
		return nil, err
	}
	oldOutputs, err := plugin.UnmarshalProperties(req.GetOlds(), opts("oldOutputs"))
	if err != nil {
		return nil, err
	}
	news, err := plugin.UnmarshalProperties(req.GetNews(), opts("newInputs"))
	if err != nil {
		return nil, err
	}
	urn := resource.URN(req.GetUrn())
	typ := req.GetType()
	if typ == "" {
		typ = string(urn.Type())
	}
	d, err := s.p.Diff(ctx, plugin.DiffRequest{URN: urn, Name: urn.Name(), Type: tokens.Type(typ), ID: resource.ID(req.GetId()),
		OldInputs: olds, OldOutputs: oldOutputs, NewInputs: news, AllowUnknowns: true, IgnoreChanges: req.GetIgnoreChanges()})
	if err != nil {
		return nil, err
	}
	return marshalDiff(d), nil
}

func marshalDiff(d plugin.DiffResult) *pulumirpc.DiffResponse {
	resp := &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE, DeleteBeforeReplace: d.DeleteBeforeReplace}
	switch d.Changes {
	case plugin.DiffSome:
		resp.Changes = pulumirpc.DiffResponse_DIFF_SOME
	case plugin.DiffUnknown:
		resp.Changes = pulumirpc.DiffResponse_DIFF_UNKNOWN
	}
	for _, k := range d.ChangedKeys {
		resp.Diffs = append(resp.Diffs, string(k))
	}
	for _, k := range d.ReplaceKeys {
		resp.Replaces = append(resp.Replaces, string(k))
	}
	if d.DetailedDiff != nil {
		resp.HasDetailedDiff = true
		resp.DetailedDiff = map[string]*pulumirpc.PropertyDiff{}
		kinds := map[plugin.DiffKind]pulumirpc.PropertyDiff_Kind{
			plugin.DiffAdd: pulumirpc.PropertyDiff_ADD, plugin.DiffAddReplace: pulumirpc.PropertyDiff_ADD_REPLACE,
			plugin.DiffDelete: pulumirpc.PropertyDiff_DELETE, plugin.DiffDeleteReplace: pulumirpc.PropertyDiff_DELETE_REPLACE,
			plugin.DiffUpdate: pulumirpc.PropertyDiff_UPDATE, plugin.DiffUpdateReplace: pulumirpc.PropertyDiff_UPDATE_REPLACE,
		}
		for path, pd := range d.DetailedDiff {
			resp.DetailedDiff[path] = &pulumirpc.PropertyDiff{Kind: kinds[pd.Kind], InputDiff: pd.InputDiff}
		}
	}
	return resp
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Port is the server's port.
func (s *Server) Port() int { return s.lis.Addr().(*net.TCPAddr).Port }

// DebugProviders is the PULUMI_DEBUG_PROVIDERS value for this server.
func (s *Server) DebugProviders() string { return "aws:" + strconv.Itoa(s.Port()) }

// Cloud is the cloud the server works on.
func (s *Server) Cloud() *store.Cloud { return s.cloud }

// Provider is the served provider.
func (s *Server) Provider() *Provider { return s.provider }

// connTracker forgets a connection's provider configuration when the
// engine closes it (every pulumi operation opens new ones).
type connTracker struct{ p *Provider }

type connKeyCtx struct{}

func (connTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (connTracker) HandleRPC(context.Context, stats.RPCStats)                       {}
func (connTracker) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	if info.RemoteAddr != nil {
		return context.WithValue(ctx, connKeyCtx{}, info.RemoteAddr.String())
	}
	return ctx
}
func (t connTracker) HandleConn(ctx context.Context, s stats.ConnStats) {
	if _, end := s.(*stats.ConnEnd); end {
		if key, ok := ctx.Value(connKeyCtx{}).(string); ok {
			t.p.forget(key)
		}
	}
}

// Stop ends pending latency sleeps, lets running calls finish (up to 5s)
// and stops serving.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.provider.SignalCancellation(context.Background())
		stopped := make(chan struct{})
		go func() {
			s.srv.GracefulStop()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			s.srv.Stop()
		}
	})
}
