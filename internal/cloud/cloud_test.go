package cloud

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAWSUsesTheDefaultChain(t *testing.T) {
	b, err := New(AWS, t.TempDir(), "cells")
	if err != nil {
		t.Fatal(err)
	}
	if b.Attach != nil || b.ResolvePending != nil || b.Offline {
		t.Fatalf("aws: the real provider plugin, no pending lookup, plugins allowed: %+v", b)
	}
	a, err := b.AWS(context.Background())
	if err != nil || !a.DefaultChain() || a.AccessKeyID != "" {
		t.Fatalf("aws access = %+v, %v", a, err)
	}
}

// On sim, AWS access is the simulator's own loopback API with its fake
// keys — started once per bundle, stopped with it — never AWS's default
// chain.
func TestSimAWSAccessPointsAtTheSimulator(t *testing.T) {
	b, err := New(Sim, t.TempDir(), "cells")
	if err != nil {
		t.Fatal(err)
	}
	first, err := b.AWS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if first.DefaultChain() || !strings.HasPrefix(first.Endpoint, "http://127.0.0.1:") ||
		first.AccessKeyID != SimAccessKeyID || first.SecretAccessKey != SimSecretAccessKey {
		t.Fatalf("access = %+v", first)
	}
	again, err := b.AWS(context.Background())
	if err != nil || again != first {
		t.Fatalf("started twice: %+v then %+v (%v)", first, again, err)
	}
	if resp, err := http.Get(first.Endpoint); err != nil {
		t.Fatalf("the simulator's API is not listening: %v", err)
	} else {
		resp.Body.Close()
	}
	b.Close()
	if resp, err := http.Get(first.Endpoint); err == nil {
		resp.Body.Close()
		t.Fatal("the API server must stop with the bundle")
	}
}

func TestSimAttachesAProviderPerStack(t *testing.T) {
	b, err := New(Sim, t.TempDir(), "cells")
	if err != nil {
		t.Fatal(err)
	}
	if !b.Offline {
		t.Fatal("the simulated cloud needs no plugin download")
	}
	a, err := b.Attach(context.Background(), "cell-a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if v := a.Env["PULUMI_DEBUG_PROVIDERS"]; !strings.HasPrefix(v, "aws:") {
		t.Fatalf("env = %v", a.Env)
	}
	found, err := b.ResolvePending(context.Background(), "cell-a", []string{"urn:pulumi:cell-a::cells::aws:ec2/vpc:Vpc::cell-a-vpc"})
	if err != nil || len(found) != 0 {
		t.Fatalf("nothing was created: %v %v", found, err)
	}
}

func TestUnknownCloud(t *testing.T) {
	if _, err := New("gcp", t.TempDir(), "cells"); err == nil || !strings.Contains(err.Error(), `--cloud "gcp" is not supported`) {
		t.Fatalf("err = %v", err)
	}
}

// A temporary credential is three parts: the reader target keeps the
// session token at an endpoint, and on AWS's endpoints leaves the
// credential to the SDK's default chain, which reads AWS_SESSION_TOKEN
// with the keys (an SSO session, an assumed role, CI's web identity).
func TestTargetKeepsTheSessionToken(t *testing.T) {
	ctx := context.Background()
	at := AWSAccess{Endpoint: "http://127.0.0.1:1", AccessKeyID: "ASIAEXAMPLE", SecretAccessKey: "secret", SessionToken: "token-1"}
	tg := at.Target("eu-west-1")
	if tg.Region != "eu-west-1" || tg.Endpoint != at.Endpoint || tg.SessionToken != "token-1" {
		t.Fatalf("endpoint target = %+v", tg)
	}
	cfg, err := tg.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || creds.SessionToken != "token-1" || creds.AccessKeyID != "ASIAEXAMPLE" {
		t.Fatalf("endpoint credentials = %+v, %v", creds, err)
	}

	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "ASIACHAIN")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "chain-secret")
	t.Setenv("AWS_SESSION_TOKEN", "chain-token")
	b, err := New(AWS, t.TempDir(), "cells")
	if err != nil {
		t.Fatal(err)
	}
	tg, err = b.Target(ctx, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Endpoint != "" || tg.AccessKeyID != "" || tg.SessionToken != "" {
		t.Fatalf("aws target must leave credentials to the default chain: %+v", tg)
	}
	cfg, err = tg.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	creds, err = cfg.Credentials.Retrieve(ctx)
	if err != nil || creds.SessionToken != "chain-token" || creds.AccessKeyID != "ASIACHAIN" {
		t.Fatalf("default-chain credentials = %+v, %v", creds, err)
	}
}

// The simulator's API outlives the context of the call that started it.
func TestSimAWSOutlivesTheFirstCallersContext(t *testing.T) {
	b, err := New(Sim, t.TempDir(), "cells")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	access, err := b.AWS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	time.Sleep(50 * time.Millisecond)
	resp, err := http.Get(access.Endpoint)
	if err != nil {
		t.Fatalf("the API stopped with the first caller's context: %v", err)
	}
	resp.Body.Close()
}

// CELLCTL_SIM_DIR names one simulated account for every fleet and
// checkout that sets it; unset, each fleet keeps its own.
func TestSimDirIsSharedThroughTheEnvironment(t *testing.T) {
	t.Setenv(SimDirEnv, "")
	if got := SimDir("/fleet"); got != "/fleet/.cellctl/sim" {
		t.Fatalf("default sim dir = %s", got)
	}
	shared := t.TempDir()
	t.Setenv(SimDirEnv, shared)
	if a, b := SimDir("/prod"), SimDir("/staging"); a != shared || b != shared {
		t.Fatalf("shared sim dir = %s, %s; want %s", a, b, shared)
	}
}
