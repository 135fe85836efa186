package fleet

import (
	"errors"
	"path/filepath"
	"testing"
	"testing/fstest"

	"golang.org/x/tools/txtar"

	"github.com/cellctl/cellctl/internal/diag"
)

// FuzzLoad feeds arbitrary project, stack and waves files to the loader. It
// must never panic; a rejected fleet is reported only through diag errors
// that name a file; an accepted fleet keeps the fleet invariants.
func FuzzLoad(f *testing.F) {
	base := caseFS(f, nil)
	f.Add(base["Pulumi.yaml"].Data, base["stacks/Pulumi.cell-b.yaml"].Data, base["stacks/waves.yaml"].Data)
	paths, _ := filepath.Glob(filepath.Join(configTestdata, "bad", "*.txtar"))
	for _, p := range paths {
		c, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		fsys := caseFS(f, c)
		get := func(name string) []byte {
			if m, ok := fsys[name]; ok {
				return m.Data
			}
			return nil
		}
		f.Add(get("Pulumi.yaml"), get("stacks/Pulumi.cell-b.yaml"), get("stacks/waves.yaml"))
	}
	f.Fuzz(func(t *testing.T, project, cellB, wavesFile []byte) {
		fsys := fstest.MapFS{}
		for k, v := range base {
			fsys[k] = v
		}
		fsys["Pulumi.yaml"] = &fstest.MapFile{Data: project}
		fsys["stacks/Pulumi.cell-b.yaml"] = &fstest.MapFile{Data: cellB}
		fsys["stacks/waves.yaml"] = &fstest.MapFile{Data: wavesFile}
		fl, err := LoadFS(fsys, "FLEET")
		if err != nil {
			if fl != nil {
				t.Fatal("fleet returned with an error")
			}
			for _, e := range diag.Errors(err) {
				var de *diag.Error
				if !errors.As(e, &de) || de.File == "" || de.Msg == "" {
					t.Fatalf("error without a file or message: %#v", e)
				}
			}
			return
		}
		indexes := map[int]bool{}
		for _, c := range fl.Cells {
			if indexes[c.Index] || c.Index < 0 || c.Index > 255 {
				t.Fatalf("bad or duplicate index %d accepted", c.Index)
			}
			indexes[c.Index] = true
			if fl.Waves.WaveOf(c.ID) < 0 {
				t.Fatalf("cell %s in no wave accepted", c.ID)
			}
		}
	})
}
