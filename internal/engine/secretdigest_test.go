package engine

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"

	"github.com/cellctl/cellctl/internal/fleet"
)

// stackFile writes a stack file the way the passphrase secrets provider
// does: a salt with its check value, and value encrypted under it.
func stackFile(t testing.TB, path, phrase, salt, value string) {
	t.Helper()
	c := config.NewSymmetricCrypterFromPassphrase(phrase, []byte(salt))
	check, err := c.EncryptValue(context.Background(), "pulumi")
	if err != nil {
		t.Fatal(err)
	}
	enc, err := c.EncryptValue(context.Background(), value)
	if err != nil {
		t.Fatal(err)
	}
	data := fmt.Sprintf("encryptionsalt: v1:%s:%s\nconfig:\n  cells:index: 1\n  cells:originVerifySecret:\n    secure: %s\n",
		base64.StdEncoding.EncodeToString([]byte(salt)), check, enc)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two stacks holding one secret under different salts have one digest;
// another value another; the digest is never the value; a wrong
// passphrase is an error, not a digest.
func TestSecretDigest(t *testing.T) {
	dir := t.TempDir()
	f := &fleet.Fleet{Dir: dir, Project: "cells", Cells: []*fleet.Cell{{File: "a.yaml"}, {File: "b.yaml"}, {File: "c.yaml"}, {File: "d.yaml"}}}
	for i, id := range []string{"cell-a", "cell-b", "cell-c", "cell-d"} {
		f.Cells[i].ID = id
	}
	stackFile(t, filepath.Join(dir, "a.yaml"), "pass", "salt-one", "s3cret")
	stackFile(t, filepath.Join(dir, "b.yaml"), "pass", "salt-two", "s3cret")
	stackFile(t, filepath.Join(dir, "c.yaml"), "pass", "salt-one", "other")
	if err := os.WriteFile(filepath.Join(dir, "d.yaml"), []byte("config:\n  cells:index: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &Engine{opts: Options{Fleet: f}, passphrase: "pass"}
	ctx := context.Background()
	digest := func(stack string) (string, bool, error) {
		return e.SecretDigest(ctx, stack, "cells:originVerifySecret")
	}
	a, okA, errA := digest("cell-a")
	b, okB, errB := digest("cell-b")
	c, _, errC := digest("cell-c")
	if errA != nil || errB != nil || errC != nil || !okA || !okB {
		t.Fatal(errA, errB, errC)
	}
	if a != b || a == c || len(a) != 64 || strings.Contains(a, "s3cret") {
		t.Errorf("digests a=%s b=%s c=%s", a, b, c)
	}
	if _, present, err := digest("cell-d"); present || err != nil {
		t.Errorf("a stack without the key: present=%v err=%v", present, err)
	}
	e = &Engine{opts: Options{Fleet: f}, passphrase: "wrong"} // crypters are cached per engine
	if _, _, err := digest("cell-a"); err == nil || !strings.Contains(err.Error(), "passphrase") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("wrong passphrase: %v", err)
	}
}
