package fleet

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/config/bad/*.txtar")

const configTestdata = "../../testdata/config"

// caseFS builds a fleet from base.txtar with the case's files laid over it.
func caseFS(t testing.TB, c *txtar.Archive) fstest.MapFS {
	t.Helper()
	base, err := txtar.ParseFile(filepath.Join(configTestdata, "base.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, f := range base.Files {
		fsys[f.Name] = &fstest.MapFile{Data: f.Data}
	}
	if c == nil {
		return fsys
	}
	for _, f := range c.Files {
		switch f.Name {
		case "want":
		case "delete":
			for _, name := range strings.Fields(string(f.Data)) {
				delete(fsys, name)
			}
		default:
			fsys[f.Name] = &fstest.MapFile{Data: f.Data}
		}
	}
	return fsys
}

func TestLoadBaseFleet(t *testing.T) {
	f, err := LoadFS(caseFS(t, nil), "FLEET")
	if err != nil {
		t.Fatalf("base fleet must load: %v", err)
	}
	if got := f.CellIDs(); len(got) != 2 || got[0] != "cell-a" || got[1] != "cell-b" {
		t.Fatalf("cells = %v", got)
	}
	if f.Router == nil || f.Router.TenantHeader != DefaultTenantHeader {
		t.Fatalf("router = %+v", f.Router)
	}
}

// TestMalformedConfig loads every case in testdata/config/bad and expects
// its exact message: file, line, field and what is allowed.
func TestMalformedConfig(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(configTestdata, "bad", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			c, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, loadErr := LoadFS(caseFS(t, c), "FLEET")
			if loadErr == nil {
				t.Fatalf("loaded without error: %+v", f)
			}
			if f != nil {
				t.Fatalf("a fleet was returned alongside the error")
			}
			got := strings.TrimSpace(loadErr.Error())
			if *update {
				setWant(c, got)
				if err := os.WriteFile(path, txtar.Format(c), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := ""
			for _, file := range c.Files {
				if file.Name == "want" {
					want = strings.TrimSpace(string(file.Data))
				}
			}
			if got != want {
				t.Errorf("message mismatch\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

func setWant(c *txtar.Archive, got string) {
	for i := range c.Files {
		if c.Files[i].Name == "want" {
			c.Files[i].Data = []byte(got + "\n")
			return
		}
	}
	c.Files = append([]txtar.File{{Name: "want", Data: []byte(got + "\n")}}, c.Files...)
}

func TestLoadRealDirectory(t *testing.T) {
	f, err := Load("../..")
	if err != nil {
		t.Fatalf("the demo fleet must load: %v", err)
	}
	if len(f.Cells) != 4 || f.Router == nil || len(f.Waves.Waves) != 3 {
		t.Fatalf("demo fleet: %d cells, router %v, %d waves", len(f.Cells), f.Router != nil, len(f.Waves.Waves))
	}
	d := f.Cell("cell-d")
	if d.Region != "us-west-2" || d.NATMode != "per-az" || d.CIDR() != "10.4.0.0/16" {
		t.Fatalf("cell-d = %+v", d.Cell)
	}
	if want := []string{"aws:region", "cells:natMode"}; strings.Join(d.Overrides, ",") != strings.Join(want, ",") {
		t.Fatalf("cell-d overrides = %v, want %v", d.Overrides, want)
	}
}

func TestUnreadableStackFile(t *testing.T) {
	dir := t.TempDir()
	for name, f := range caseFS(t, nil) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A dangling symlink: listed by the directory, unreadable.
	if err := os.Symlink(filepath.Join(dir, "nowhere.yaml"), filepath.Join(dir, "stacks", "Pulumi.cell-c.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "stacks/Pulumi.cell-c.yaml: file not found") {
		t.Fatalf("err = %v", err)
	}
}
