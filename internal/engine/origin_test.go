package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cellmodule"
)

// stateSecret is value as a deployment encrypted by the passphrase state
// salt holds it.
func stateSecret(t *testing.T, e *Engine, salt, value string) map[string]any {
	t.Helper()
	c, err := e.crypter(salt)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(value)
	ct, err := c.EncryptValue(context.Background(), string(plain))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{secretSig: "1b47061264138c4ac30d75fd1eb44270", "ciphertext": ct}
}

func encrypted(t *testing.T, e *Engine, salt string, d map[string]any) map[string]any {
	t.Helper()
	state, _ := json.Marshal(map[string]string{"salt": salt})
	d["secrets_providers"] = map[string]any{"type": "passphrase", "state": json.RawMessage(state)}
	return d
}

// deployedCell is a cell whose ALB rule accepts values.
func deployedCell(t *testing.T, fe *fakeEngine, salt, cell string, values ...string) map[string]any {
	var vals []any
	for _, v := range values {
		vals = append(vals, stateSecret(t, fe.Engine, salt, v))
	}
	rule := map[string]any{"urn": urn(cell, "aws:lb/listenerRule:ListenerRule", cell+"-origin"), "type": "aws:lb/listenerRule:ListenerRule", "custom": true,
		"outputs": map[string]any{"conditions": []any{map[string]any{"httpHeader": map[string]any{"httpHeaderName": cellmodule.OriginVerifyHeader, "values": vals}}}}}
	return encrypted(t, fe.Engine, salt, deploymentWith(cell, nil, rule))
}

// deployedRouter is a router whose fleet origin sends value.
func deployedRouter(t *testing.T, fe *fakeEngine, salt, value string) map[string]any {
	dist := map[string]any{"urn": urn("router", distributionType, "router-primary"), "type": distributionType, "custom": true,
		"inputs": map[string]any{"origins": []any{map[string]any{"originId": cellmodule.RouterOriginID,
			"customHeaders": []any{map[string]any{"name": strings.ToLower(cellmodule.OriginVerifyHeader), "value": stateSecret(t, fe.Engine, salt, value)}}}}}}
	return encrypted(t, fe.Engine, salt, deploymentWith("router", nil, dist))
}

func originOf(t *testing.T, fe *fakeEngine, stack string) string {
	t.Helper()
	v, found, err := fe.StackSecret(stack, fe.fleet.ConfigKey("originVerifySecret"))
	if err != nil || !found {
		t.Fatalf("%s: %q %v %v", stack, v, found, err)
	}
	return v
}

// A fleet with nothing deployed gets one new origin-verify value, the
// same in every stack file, stored encrypted (the plaintext is in no
// file and on no pulumi command line); a second run changes nothing.
func TestEnsureOriginVerifySecretMintsOneValueForANewFleet(t *testing.T) {
	fe := newFakeEngine(t)
	stacks := fe.fleet.StackNames()
	changed, err := fe.EnsureOriginVerifySecret(context.Background(), stacks)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != len(stacks) {
		t.Fatalf("changed = %v, want every stack file", changed)
	}
	value := originOf(t, fe, "router")
	if len(value) < 32 {
		t.Fatalf("minted value %q is too short", value)
	}
	for _, s := range stacks {
		if got := originOf(t, fe, s); got != value {
			t.Errorf("%s got another value than the router", s)
		}
		file := fe.stackFile(t, s)
		if strings.Contains(file, value) || !strings.Contains(file, "secure: v1:") {
			t.Errorf("%s's stack file does not hold the value encrypted:\n%s", s, file)
		}
	}
	for _, c := range fe.cli.calls {
		if strings.Contains(strings.Join(c.Args, " "), value) {
			t.Errorf("the value reached a pulumi command line: %v", c.Args)
		}
	}
	again, err := fe.EnsureOriginVerifySecret(context.Background(), stacks)
	if err != nil || len(again) != 0 {
		t.Fatalf("second run changed %v (%v)", again, err)
	}
}

// A stack file that lost the value (a fresh clone, uncommitted files) gets
// back what is deployed — never a second value the cells would refuse.
func TestEnsureOriginVerifySecretRecoversTheDeployedValue(t *testing.T) {
	for _, tc := range []struct {
		name   string
		deploy func(t *testing.T, fe *fakeEngine, salt string)
		want   map[string][]string // stack → value, next value
	}{
		{"from the deployed router", func(t *testing.T, fe *fakeEngine, salt string) {
			writeCheckpoint(t, fe.root, "cells", "router", deployedRouter(t, fe, salt, "router-sends-this"))
		}, map[string][]string{"router": {"router-sends-this"}, "cell-a": {"router-sends-this"}}},
		{"from the cells when only they are deployed", func(t *testing.T, fe *fakeEngine, salt string) {
			writeCheckpoint(t, fe.root, "cells", "cell-a", deployedCell(t, fe, salt, "cell-a", "cells-accept-this"))
			writeCheckpoint(t, fe.root, "cells", "cell-b", deployedCell(t, fe, salt, "cell-b", "cells-accept-this", "next-value"))
		}, map[string][]string{"router": {"cells-accept-this"}, "cell-a": {"cells-accept-this"}, "cell-b": {"cells-accept-this", "next-value"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := newFakeEngine(t)
			salt, err := fe.newSalt()
			if err != nil {
				t.Fatal(err)
			}
			fe.cli.salt = salt // the stack files' salt too: one key derivation
			tc.deploy(t, fe, salt)
			if _, err := fe.EnsureOriginVerifySecret(context.Background(), fe.fleet.StackNames()); err != nil {
				t.Fatal(err)
			}
			for stack, want := range tc.want {
				if got := originOf(t, fe, stack); got != want[0] {
					t.Errorf("%s: %q, want %q", stack, got, want[0])
				}
				if len(want) == 2 {
					next, found, err := fe.StackSecret(stack, fe.fleet.ConfigKey("originVerifySecretNext"))
					if err != nil || !found || next != want[1] {
						t.Errorf("%s mid-rotation: next %q %v %v", stack, next, found, err)
					}
				}
			}
		})
	}
}

// What cannot be recovered unambiguously is refused, naming the files to
// restore, and nothing is written.
func TestEnsureOriginVerifySecretRefusesToGuess(t *testing.T) {
	fe := newFakeEngine(t)
	salt, err := fe.newSalt()
	if err != nil {
		t.Fatal(err)
	}
	fe.cli.salt = salt
	writeCheckpoint(t, fe.root, "cells", "cell-a", deployedCell(t, fe, salt, "cell-a", "one"))
	writeCheckpoint(t, fe.root, "cells", "cell-b", deployedCell(t, fe, salt, "cell-b", "two"))
	before := fe.stackFile(t, "cell-c")
	_, err = fe.EnsureOriginVerifySecret(context.Background(), fe.fleet.StackNames())
	if err == nil {
		t.Fatal("two deployed cells accepting different values must be refused")
	}
	for _, want := range []string{"the deployed cells do not agree on one accepted value (0 in common)", "never mints a second value", "Nothing was changed",
		"stacks/Pulumi.cell-c.yaml", "git checkout --"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if fe.stackFile(t, "cell-c") != before {
		t.Error("a refused recovery wrote a stack file")
	}

	// A wrong passphrase cannot read the deployed state: refused, too.
	other := newFakeEngine(t, func(o *Options) { o.Passphrase = "not-the-passphrase" })
	writeCheckpoint(t, other.root, "cells", "cell-a", deployedCell(t, fe, salt, "cell-a", "one"))
	if _, err := other.EnsureOriginVerifySecret(context.Background(), []string{"cell-b"}); err == nil || !strings.Contains(err.Error(), "cannot read the deployed state to recover it") {
		t.Fatalf("err = %v", err)
	}
}

// SetStackSecrets changes only the keys it is given: a value is stored
// encrypted and reads back, nil removes the key, the same value again
// changes nothing.
func TestSetStackSecrets(t *testing.T) {
	fe := newFakeEngine(t)
	ctx := context.Background()
	key := fe.fleet.ConfigKey("originVerifySecret")
	v := "s3cret-value"
	rel, err := fe.SetStackSecrets(ctx, "cell-c", map[string]*string{key: &v})
	if err != nil || rel != "stacks/Pulumi.cell-c.yaml" {
		t.Fatalf("set: %q %v", rel, err)
	}
	if got := originOf(t, fe, "cell-c"); got != v {
		t.Fatalf("read back %q", got)
	}
	if !strings.Contains(fe.stackFile(t, "cell-c"), "cells:index: 3") {
		t.Errorf("the stack file lost its other config:\n%s", fe.stackFile(t, "cell-c"))
	}
	if rel, err := fe.SetStackSecrets(ctx, "cell-c", map[string]*string{key: &v}); err != nil || rel != "" {
		t.Errorf("setting the same value again: %q %v", rel, err)
	}
	if _, err := fe.SetStackSecrets(ctx, "cell-c", map[string]*string{key: nil}); err != nil {
		t.Fatal(err)
	}
	if _, found, err := fe.StackSecret("cell-c", key); found || err != nil {
		t.Errorf("removed key still found (%v)", err)
	}
	if _, _, err := fe.StackSecret("cell-zz", key); err == nil || !strings.Contains(err.Error(), `unknown stack "cell-zz"`) {
		t.Errorf("unknown stack: %v", err)
	}
}
