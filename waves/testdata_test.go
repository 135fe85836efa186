package waves

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/waves/bad/*.txtar")

// TestMalformedWaves checks the exact message an operator sees for each
// malformed waves.yaml under testdata/waves/bad. Each archive holds
// waves.yaml, optionally the fleet's cells (space separated) to validate
// against, and the full expected error text. Run with -update after an
// intended change of wording and review the diff.
func TestMalformedWaves(t *testing.T) {
	files, err := filepath.Glob("../testdata/waves/bad/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string][]byte{}
			for _, f := range ar.Files {
				sections[f.Name] = f.Data
			}
			src, ok := sections["waves.yaml"]
			if !ok {
				t.Fatal("archive has no waves.yaml")
			}
			var got string
			plan, err := Parse("stacks/waves.yaml", src)
			switch {
			case err != nil:
				got = err.Error()
			case sections["cells"] != nil:
				if err := plan.Validate(strings.Fields(string(sections["cells"]))); err != nil {
					got = err.Error()
				}
			}
			if got == "" {
				t.Fatal("accepted a malformed waves.yaml")
			}
			got += "\n"
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "want" {
						ar.Files[i].Data = []byte(got)
					}
				}
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := sections["want"]; !bytes.Equal(want, []byte(got)) {
				t.Errorf("error:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
