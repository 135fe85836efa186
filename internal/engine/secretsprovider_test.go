package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/sim"
)

// A stack whose provider is a KMS key (awskms://, here the simulator's
// KMS through aws-sdk-go-v2, as on AWS): cellctl writes its secure: values
// under a data key the key encrypts — secretsprovider and encryptedkey in
// the file, no salt, no passphrase anywhere — and reads them back; a
// disabled or denied key fails with AWS's error, never a passphrase.
func TestKMSProviderEncryptsStackFileSecrets(t *testing.T) {
	t.Setenv("PULUMI_CONFIG_PASSPHRASE", "")
	simDir := t.TempDir()
	t.Setenv(cloud.SimDirEnv, simDir)
	c, err := sim.Open(simDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateKMSKey("us-east-1", "cells", ""); err != nil {
		t.Fatal(err)
	}
	bundle, err := cloud.New(cloud.Sim, t.TempDir(), "cells")
	if err != nil {
		t.Fatal(err)
	}
	defer bundle.Close()
	e := &Engine{cloud: bundle}
	ctx := context.Background()
	const provider = "awskms://alias/cells?region=us-east-1"
	st, err := e.newSecretsState(ctx, provider)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "Pulumi.cell-a.yaml")
	if err := os.WriteFile(path, []byte("config:\n  cells:index: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := "the-origin-verify-secret"
	if err := e.setStackFileSecrets(ctx, "cell-a", path, map[string]*string{"cells:originVerifySecret": &secret}, st); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	text := string(data)
	if strings.Contains(text, secret) || strings.Contains(text, "encryptionsalt") ||
		!strings.Contains(text, "secretsprovider: "+provider) || !strings.Contains(text, "encryptedkey: ") || !strings.Contains(text, "secure: v1:") {
		t.Fatalf("stack file:\n%s", text)
	}
	// A second engine (no cached key) asks KMS for the data key again.
	fresh := &Engine{cloud: bundle}
	if v, found, err := fresh.stackFileSecret(data, "cells:originVerifySecret"); err != nil || !found || v != secret {
		t.Fatalf("read back: %q %v %v", v, found, err)
	}

	if _, err := c.SetKMSKey("us-east-1", "alias/cells", "disable"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := (&Engine{cloud: bundle}).stackFileSecret(data, "cells:originVerifySecret"); err == nil || !strings.Contains(err.Error(), "DisabledException") {
		t.Fatalf("a disabled key must fail with DisabledException: %v", err)
	}
	c.SetKMSKey("us-east-1", "alias/cells", "enable")
	c.SetKMSKey("us-east-1", "alias/cells", "deny")
	if _, err := e.newSecretsState(ctx, provider); err == nil || !strings.Contains(err.Error(), "AccessDeniedException") {
		t.Fatalf("a denied caller must fail with AccessDeniedException: %v", err)
	}
	if _, err := e.newSecretsState(ctx, "awskms://alias/nope?region=us-east-1"); err == nil || !strings.Contains(err.Error(), "NotFoundException") {
		t.Fatalf("an unknown key must fail with NotFoundException: %v", err)
	}
}

func TestCheckSecretsProvider(t *testing.T) {
	for p, want := range map[string]string{
		"passphrase": "", "awskms://alias/cells?region=us-east-1": "", "gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k": "",
		"hashivault://cells": "", "azurekeyvault://v.vault.azure.net/keys/k": "",
		"default": "Pulumi Cloud backend", "base64key://abc": "not one pulumi supports", "awskms://": "names no key", "alias/cells": "not a URL",
	} {
		err := CheckSecretsProvider(p)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", p, err, want)
		}
	}
}

// Other services run in the pulumi CLI; cellctl's own secrets refuse them
// by name rather than fall back to anything.
func TestUnsupportedInProcessProviderIsRefused(t *testing.T) {
	e := &Engine{cloud: &cloud.Bundle{Kind: cloud.AWS}}
	_, err := e.newSecretsState(context.Background(), "gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k")
	if err == nil || !strings.Contains(err.Error(), "passphrase and awskms:// only") {
		t.Fatalf("err = %v", err)
	}
}
