package engine

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
)

// A new fleet's stacks share one passphrase salt: the real pulumi CLI's
// `stack init` makes a salt of its own for each stack (the fake does so
// here, saltPerStack) unless the stack file has one, so each stack file
// had its own and every process that read each stack's secret (the
// gates' digests after a rotation) derived one key per stack file, about
// a quarter of a CPU-second each. Seen failing before: 5 salts, 5 keys.
func TestNewStacksShareTheFleetsSalt(t *testing.T) {
	fe := newFakeEngine(t)
	fe.cli.saltPerStack = true
	ctx := context.Background()
	stacks := fe.fleet.StackNames()
	if _, err := fe.EnsureOriginVerifySecret(ctx, stacks); err != nil {
		t.Fatal(err)
	}
	salts := map[string][]string{}
	for _, s := range stacks {
		m := regexp.MustCompile(`(?m)^encryptionsalt: (\S+)$`).FindStringSubmatch(fe.stackFile(t, s))
		if m == nil {
			t.Fatalf("%s's stack file has no salt:\n%s", s, fe.stackFile(t, s))
		}
		salts[m[1]] = append(salts[m[1]], s)
	}
	if len(salts) != 1 {
		t.Errorf("the fleet's %d stack files hold %d salts: %v", len(stacks), len(salts), salts)
	}
	// A later process (a gated command) reads every stack's secret.
	later, err := New(fe.opts)
	if err != nil {
		t.Fatal(err)
	}
	key := fe.fleet.ConfigKey(fleet.OriginVerifyKey)
	var first string
	for _, s := range stacks {
		d, found, err := later.SecretDigest(ctx, s, key)
		if err != nil || !found {
			t.Fatalf("%s: %v %v", s, found, err)
		}
		if first == "" {
			first = d
		} else if d != first {
			t.Errorf("%s holds another origin-verify secret than %s", s, stacks[0])
		}
	}
	if n := len(later.crypters); n != 1 {
		t.Errorf("reading %d stacks' secrets derived %d keys, want 1", len(stacks), n)
	}
}

// A stack file with a salt of its own keeps it; a salt the passphrase does
// not open is never shared; the check value of each state is verified
// even when its salt's key is already derived.
func TestFleetSaltIsOnlyAnOpenedOne(t *testing.T) {
	dir := t.TempDir()
	f := &fleet.Fleet{Dir: dir, Project: "cells", Cells: []*fleet.Cell{{File: "a.yaml"}, {File: "b.yaml"}, {File: "c.yaml"}}}
	for i, id := range []string{"cell-a", "cell-b", "cell-c"} {
		f.Cells[i].ID = id
	}
	stackFile(t, filepath.Join(dir, "a.yaml"), "another", "salt-one", "x")
	stackFile(t, filepath.Join(dir, "b.yaml"), "pass", "salt-two", "y")
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("config:\n  cells:index: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &Engine{opts: Options{Fleet: f}, passphrase: "pass"}
	got := e.fleetSalt("cell-c")
	b, _ := e.stackFileSecretsOf("cell-b")
	if got != b.Salt {
		t.Errorf("fleetSalt = %q, want cell-b's %q (cell-a's is another passphrase's)", got, b.Salt)
	}
	if e.fleetSalt("cell-b") != "" {
		t.Error("without cell-b only a salt this passphrase does not open is left: nothing to share")
	}
	// Same salt, a check value the key does not open: refused.
	forged := strings.SplitN(b.Salt, ":", 3)
	if _, err := e.crypter(forged[0] + ":" + forged[1] + ":v1:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAAAAA="); err == nil {
		t.Error("a state whose check value does not decrypt was accepted")
	}
}

// BenchmarkFleetSecretDigests: what a gated command's digests of every
// stack's origin-verify secret cost in a new process (a new engine), over
// five stack files each with a salt of its own (a fleet created before
// the stacks shared one) and over five sharing the fleet's salt.
func BenchmarkFleetSecretDigests(b *testing.B) {
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "salt-per-stack", true: "one-salt"}[shared]
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			f := &fleet.Fleet{Dir: dir, Project: "cells"}
			for i, id := range []string{"cell-a", "cell-b", "cell-c", "cell-d", "router"} {
				salt := "salt-00" + string(rune('0'+i))
				if shared {
					salt = "salt-000"
				}
				c := &fleet.Cell{File: id + ".yaml"}
				c.ID = id
				f.Cells = append(f.Cells, c)
				stackFile(b, filepath.Join(dir, id+".yaml"), "pass", salt, "s3cret")
			}
			b.ResetTimer()
			for range b.N {
				e := &Engine{opts: Options{Fleet: f}, passphrase: "pass"}
				for _, c := range f.Cells {
					if _, _, err := e.SecretDigest(context.Background(), c.ID, "cells:originVerifySecret"); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
