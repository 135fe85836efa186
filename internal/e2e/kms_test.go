package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"gocloud.dev/secrets/awskms"
	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/sim"
)

// twoCellFleet cuts the demo fleet to cell-a (canary) and cell-b
// (wave-1), with the router: the cheapest fleet on which every verb runs.
func twoCellFleet(t testing.TB, dir string) {
	t.Helper()
	for _, c := range []string{"cell-c", "cell-d"} {
		if err := os.Remove(filepath.Join(dir, "stacks", "Pulumi."+c+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	writeWaves(t, dir, `waves:
  - {name: canary, cells: [cell-a], bake: 30m}
  - {name: wave-1, cells: [cell-b], bake: 10m}
gate:
  promote_if:
    error_rate_5xx: "< 0.5%"
    p99_latency_ms: "< 400"
    healthy_tasks: ">= 1"
  min_requests: 100
  poll: 30s
  on_breach: halt_and_rollback_wave
  on_inconclusive: halt
`)
	writeText(t, filepath.Join(dir, "stacks", "routing.json"), `{
  "version": 1,
  "buckets": 1024,
  "cells": {
    "cell-a": {"state": "active", "weight": 1, "buckets": ["0-511"]},
    "cell-b": {"state": "active", "weight": 1, "buckets": ["512-1023"]}
  },
  "overrides": []
}
`)
}

// kmsStackSecret decrypts a stack file's secure value the way pulumi's
// cloud secrets manager does: the simulator's KMS decrypts encryptedkey,
// the data key decrypts the value.
func kmsStackSecret(t *testing.T, simDir, file, key string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Config       map[string]yaml.Node `yaml:"config"`
		Provider     string               `yaml:"secretsprovider"`
		EncryptedKey string               `yaml:"encryptedkey"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Secure string `yaml:"secure"`
	}
	n := doc.Config[key]
	if err := n.Decode(&v); err != nil || v.Secure == "" {
		t.Fatalf("%s: %s is not a secure value", file, key)
	}
	c, err := sim.Open(simDir)
	if err != nil {
		t.Fatal(err)
	}
	endpoint, stop, err := sim.ServeAPI(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	client := kms.New(kms.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(cloud.SimAccessKeyID, cloud.SimSecretAccessKey, "")})
	blob, err := base64.StdEncoding.DecodeString(doc.EncryptedKey)
	if err != nil {
		t.Fatal(err)
	}
	dataKey, err := awskms.OpenKeeper(client, "alias/cells", nil).Decrypt(context.Background(), blob)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := config.NewSymmetricCrypter(dataKey).DecryptValue(context.Background(), v.Secure)
	if err != nil {
		t.Fatal(err)
	}
	return plain
}

// grepTree reports the files under dir that contain needle.
func grepTree(t *testing.T, dir, needle string) []string {
	t.Helper()
	var hits []string
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || info.Size() > 64<<20 {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), needle) {
			hits = append(hits, path)
		}
		return nil
	})
	return hits
}

// Issue 23: a fleet whose stack files name an awskms:// key runs up,
// deploy, secret rotate and drift on --cloud sim with no passphrase set:
// the pulumi CLI and cellctl both reach the simulator's KMS through the
// AWS SDK (AWS_ENDPOINT_URL_KMS for the CLI), the origin-verify secret is
// never in plaintext in the repository, the state, the simulated cloud or
// any output, and a disabled key stops the fleet with KMS's error — never a
// passphrase fallback.
func TestKMSSecretsProviderFleet(t *testing.T) {
	t.Parallel()
	dir := freshClone(t)
	twoCellFleet(t, dir)
	addDemoZones(t, dir)
	const provider = "awskms://alias/cells?region=us-east-1"
	mustRun(t, dir, "sim", "kms", "create", "--alias", "cells")
	var outputs strings.Builder
	run := func(args ...string) result {
		t.Helper()
		r := mustRun(t, dir, args...)
		outputs.WriteString(r.stdout + r.stderr)
		return r
	}

	run("up", "-y", "--secrets-provider", provider)
	simDir := cloud.SimDir(dir)
	for _, s := range []string{"cell-a", "cell-b", "router"} {
		b, _ := os.ReadFile(filepath.Join(dir, "stacks", "Pulumi."+s+".yaml"))
		if !strings.Contains(string(b), "secretsprovider: "+provider) || !strings.Contains(string(b), "encryptedkey: ") || strings.Contains(string(b), "encryptionsalt") {
			t.Fatalf("%s's stack file must name the KMS key and hold no passphrase salt:\n%s", s, b)
		}
		cp, _ := os.ReadFile(filepath.Join(dir, ".cellctl", "state", ".pulumi", "stacks", "cells", s+".json"))
		var doc struct {
			Checkpoint struct {
				Latest struct {
					SecretsProviders struct {
						Type string `json:"type"`
					} `json:"secrets_providers"`
				} `json:"latest"`
			} `json:"checkpoint"`
		}
		if json.Unmarshal(cp, &doc) != nil || doc.Checkpoint.Latest.SecretsProviders.Type != "cloud" {
			t.Fatalf("%s's state must be encrypted by the cloud secrets manager: %s", s, doc.Checkpoint.Latest.SecretsProviders.Type)
		}
	}
	old := kmsStackSecret(t, simDir, filepath.Join(dir, "stacks", "Pulumi.router.yaml"), "cells:originVerifySecret")
	checkNoRefusal(t, dir, "after up", []string{"cell-a", "cell-b"})

	run("deploy", "--image", "registry.example.com/shop/api:2.0.0", "--bake-scale", "0.002")
	run("secret", "rotate", "--bake-scale", "0.002")
	next := kmsStackSecret(t, simDir, filepath.Join(dir, "stacks", "Pulumi.router.yaml"), "cells:originVerifySecret")
	if next == old || next == "" {
		t.Fatal("the rotation stored no new value")
	}
	checkNoRefusal(t, dir, "after the rotation", []string{"cell-a", "cell-b"})
	// drift: the cloud check refreshes every cell through the CLI (its
	// secrets through KMS); the skew check reads the secret's digest in
	// each stack file through cellctl's own KMS path. The image the
	// rollout shipped (not committed) is the desired state's, so nothing
	// is reported.
	if r := cellctl(t, dir, "drift", "--cloud", "-o", "json"); r.code != 0 {
		t.Fatalf("the cloud has not drifted: %s", r)
	} else {
		outputs.WriteString(r.stdout + r.stderr)
	}
	r := cellctl(t, dir, "drift", "-o", "json")
	outputs.WriteString(r.stdout + r.stderr)
	var rep driftReport
	decode(t, r, &rep)
	if r.code != 0 || len(rep.Findings) != 0 {
		t.Fatalf("drift after a shipped release: want exit 0 and no findings, got %s", r)
	}

	for _, secret := range []string{old, next} {
		if hits := grepTree(t, dir, secret); len(hits) > 0 {
			t.Errorf("the origin-verify secret is in plaintext in %v", hits)
		}
		if hits := grepTree(t, tmpDirOf(dir), secret); len(hits) > 0 {
			t.Errorf("the origin-verify secret is in plaintext in %v", hits)
		}
		if strings.Contains(outputs.String(), secret) {
			t.Error("the origin-verify secret was printed")
		}
	}

	// The key disabled: KMS's own error, and nothing falls back.
	mustRun(t, dir, "sim", "kms", "disable", "alias/cells")
	r = cellctl(t, dir, "up", "cell-a", "-y")
	if r.code == 0 || !strings.Contains(r.stderr, "DisabledException") || strings.Contains(strings.ToLower(r.stderr), "passphrase") {
		t.Fatalf("an up with the KMS key disabled must fail with DisabledException: %s", r)
	}
}
