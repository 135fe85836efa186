package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// jsonKeyFormats are the JSON keys in snake_case that are not cellctl's
// to spell: formats others define or files the fleet keeps. Everything
// else cellctl writes — every command's -o json, every record — is
// camelCase (README, "Global flags").
var jsonKeyFormats = map[string]string{
	"router/table.go":                "stacks/routing.json: the fleet's routing file, which the edge function reads (generated_at, write_mode)",
	"waves/signal/threshold.go":      "the gate's signal names, as waves.yaml's promote_if keys spell them",
	"internal/engine/orphans.go":     "Pulumi's checkpoint format (pending_operations)",
	"internal/engine/run.go":         "Pulumi's checkpoint format (pending_operations)",
	"internal/engine/status.go":      "Pulumi's checkpoint format (pending_operations)",
	"internal/engine/secretcrypt.go": "Pulumi's checkpoint format (secrets_providers)",
	"internal/motojudge/jsoncall.go": "AWS's JSON protocol error shape (__type)",
	"internal/rollout/lock.go":       "a lock an older cellctl left ({\"rollout_id\": …}), read only",
}

// TestJSONKeysAreCamelCase: one key style across every command's JSON.
// A struct tag in product code that names a snake_case key fails, unless
// its file holds a format cellctl does not define (jsonKeyFormats).
func TestJSONKeysAreCamelCase(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == ".":
				return nil
			case rel == "tools", d.Name() == "node_modules", strings.HasPrefix(d.Name(), "."), d.Name() == "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				if field.Tag == nil {
					continue
				}
				tag, err := strconv.Unquote(field.Tag.Value)
				if err != nil {
					continue
				}
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if !strings.Contains(name, "_") {
					continue
				}
				if _, ok := jsonKeyFormats[rel]; ok {
					seen[rel] = true
					continue
				}
				t.Errorf("%s: JSON key %q is snake_case: cellctl's JSON is camelCase (or, for a format cellctl does not define, list the file in jsonKeyFormats with the format)", rel, name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, why := range jsonKeyFormats {
		if !seen[file] {
			t.Errorf("jsonKeyFormats lists %s (%s), which has no snake_case key any more: remove it", file, why)
		}
	}
}
