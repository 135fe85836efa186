package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/sim"
)

// stackSecret decrypts a secret config key of a stack file with the demo
// passphrase ("" when the file does not set it), as pulumi would.
func stackSecret(t *testing.T, dir, stack, key string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "stacks", "Pulumi."+stack+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Config map[string]yaml.Node `yaml:"config"`
		Salt   string               `yaml:"encryptionsalt"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	n, ok := doc.Config[key]
	if !ok {
		return ""
	}
	var v struct {
		Secure string `yaml:"secure"`
	}
	if err := n.Decode(&v); err != nil || v.Secure == "" {
		t.Fatalf("%s: %s is not a secure value", stack, key)
	}
	parts := strings.SplitN(doc.Salt, ":", 3)
	if len(parts) != 3 {
		t.Fatalf("%s: encryptionsalt %q", stack, doc.Salt)
	}
	salt, err := base64.StdEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	plain, err := config.NewSymmetricCrypterFromPassphrase(engine.DemoPassphrase, salt).DecryptValue(context.Background(), v.Secure)
	if err != nil {
		t.Fatalf("%s: decrypting %s: %v", stack, key, err)
	}
	return plain
}

// originView reads, from the simulated cloud's deployed resources, what
// each CloudFront origin sends in X-Origin-Verify and what each cell's ALB
// rule accepts (as fingerprints).
func originView(t *testing.T, dir string) *sim.OriginVerify {
	t.Helper()
	c, err := sim.Open(cloud.SimDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.OriginVerify(cellmodule.OriginVerifyHeader)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fingerprintOf is sim.OriginVerify's fingerprint of a secret value.
func fingerprintOf(secret string) string {
	b, _ := json.Marshal(secret)
	sum := sha256.Sum256([]byte("secret:" + string(b)))
	return hex.EncodeToString(sum[:8])
}

// checkNoRefusal fails unless CloudFront sends every cell its edge
// function routes to a value that cell's deployed ALB rule accepts, and
// the function routes every listed active cell.
func checkNoRefusal(t *testing.T, dir, step string, active []string) {
	t.Helper()
	v := originView(t, dir)
	if len(v.Sends) == 0 {
		t.Fatalf("%s: no deployed CloudFront origin sends X-Origin-Verify", step)
	}
	for _, cell := range active {
		sent, ok := v.Sends[cell]
		if !ok {
			t.Errorf("%s: the deployed edge function routes no request to active cell %s", step, cell)
			continue
		}
		accepts := v.Accepts[cell]
		found := false
		for _, a := range accepts {
			found = found || a == sent
		}
		if !found {
			t.Errorf("%s: cell %s's ALB rule accepts %v but CloudFront sends %s: every request would be refused", step, cell, accepts, sent)
		}
	}
}

// stackFilesSum is a digest of every file under stacks/.
func stackFilesSum(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "stacks"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		data, _ := os.ReadFile(filepath.Join(dir, "stacks", n))
		h.Write([]byte(n + "\x00"))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}
