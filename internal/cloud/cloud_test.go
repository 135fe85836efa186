package cloud

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestAWSUsesTheDefaultChain(t *testing.T) {
	b, err := New(AWS, t.TempDir())
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

func TestSimWithoutAnAPIRefusesAWSAccess(t *testing.T) {
	b, err := New(Sim, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AWS(context.Background()); !errors.Is(err, ErrNoSimAPI) {
		t.Fatalf("sim without its AWS API must fail, never fall back to real AWS: %v", err)
	}
}

func TestSimAWSAccessPointsAtTheSimulator(t *testing.T) {
	dir := t.TempDir()
	stopped := 0
	StartSimAPI = func(_ context.Context, d string) (string, func(), error) {
		if d != SimDir(dir) {
			t.Errorf("started for %s, want %s", d, SimDir(dir))
		}
		return "http://127.0.0.1:4599", func() { stopped++ }, nil
	}
	t.Cleanup(func() { StartSimAPI = nil })
	b, err := New(Sim, dir)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // started once
		a, err := b.AWS(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if a.DefaultChain() || a.Endpoint != "http://127.0.0.1:4599" || a.AccessKeyID != SimAccessKeyID || a.SecretAccessKey != SimSecretAccessKey {
			t.Fatalf("access = %+v", a)
		}
	}
	b.Close()
	if stopped != 1 {
		t.Fatalf("the API server stops with the bundle: stopped %d times", stopped)
	}
}

func TestSimAttachesAProviderPerStack(t *testing.T) {
	b, err := New(Sim, t.TempDir())
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
	if _, err := New("gcp", t.TempDir()); err == nil || !strings.Contains(err.Error(), `--cloud "gcp" is not supported`) {
		t.Fatalf("err = %v", err)
	}
}
