package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A stack file as pulumi v3.274.1 wrote it (`cellctl up` of the demo fleet
// with the demo passphrase): cellctl must read pulumi's ciphertext.
const pulumiStackFile = `config:
  cells:index: 1
  cells:originVerifySecret:
    secure: v1:c/eU7unrE+B1UVRu:n8HllESGB83KDD9CZufayAVXv2q0o1IFOUa6DmHLCOLXBfWbVkDazOTLX9Oz/oa/XRhLqh26IC8CtSo=
encryptionsalt: v1:yOVYr7M8dUk=:v1:fSae7nD45cipCGnl:pRKSnRjca+jBRL+6n4jnoNl04kGAxQ==
`

func TestStackFileSecretReadsPulumisCiphertext(t *testing.T) {
	e := &Engine{passphrase: DemoPassphrase}
	v, found, err := e.stackFileSecret([]byte(pulumiStackFile), "cells:originVerifySecret")
	if err != nil || !found || len(v) != 43 {
		t.Fatalf("decrypt: found %v, %d characters, %v", found, len(v), err)
	}
	wrong := &Engine{passphrase: "not-the-passphrase"}
	if _, _, err := wrong.stackFileSecret([]byte(pulumiStackFile), "cells:originVerifySecret"); err == nil || !strings.Contains(err.Error(), "incorrect passphrase") {
		t.Fatalf("a wrong passphrase decrypted the file: %v", err)
	}
}

func TestSetStackFileSecretsEncryptsAndRemoves(t *testing.T) {
	e := &Engine{passphrase: DemoPassphrase}
	path := filepath.Join(t.TempDir(), "Pulumi.cell-a.yaml")
	if err := os.WriteFile(path, []byte("# canary\nconfig:\n  cells:index: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cur, next := "current-value", "next-value"
	salt, err := e.newSalt()
	if err != nil {
		t.Fatal(err)
	}
	fresh := secretsState{Provider: PassphraseProvider, Salt: salt}
	ctx := context.Background()
	if err := e.setStackFileSecrets(ctx, "cell-a", path, map[string]*string{"cells:originVerifySecret": &cur, "cells:originVerifySecretNext": &next}, fresh); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), cur) || strings.Contains(string(data), next) {
		t.Fatalf("plaintext in the stack file:\n%s", data)
	}
	if !strings.Contains(string(data), "# canary") || !strings.Contains(string(data), "encryptionsalt: v1:") {
		t.Fatalf("comment or salt lost:\n%s", data)
	}
	for key, want := range map[string]string{"cells:originVerifySecret": cur, "cells:originVerifySecretNext": next} {
		if v, found, err := e.stackFileSecret(data, key); err != nil || !found || v != want {
			t.Fatalf("%s: %v %v (want the value written)", key, found, err)
		}
	}
	if err := e.setStackFileSecrets(ctx, "cell-a", path, map[string]*string{"cells:originVerifySecretNext": nil}, secretsState{}); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(path)
	if _, found, _ := e.stackFileSecret(data, "cells:originVerifySecretNext"); found {
		t.Fatalf("the removed key is still there:\n%s", data)
	}
	if v, _, err := e.stackFileSecret(data, "cells:originVerifySecret"); err != nil || v != cur {
		t.Fatalf("the kept key changed: %v", err)
	}
}

func TestDecryptStateValueRefusesUnreadableSecrets(t *testing.T) {
	if _, err := decryptStateValue(nil, map[string]any{secretSig: "x", "ciphertext": "v1:a:b"}); err == nil {
		t.Fatal("a secret without a secrets provider read as a value")
	}
	if v, err := decryptStateValue(nil, "plain"); err != nil || v != "plain" {
		t.Fatalf("plain value: %q %v", v, err)
	}
}
