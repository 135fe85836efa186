package waves

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/waves/signal"
)

// FuzzParse: any input yields a plan or positioned errors, never a panic,
// and an accepted plan is one the executor can run as is.
func FuzzParse(f *testing.F) {
	f.Add([]byte(operatorShape))
	if data, err := os.ReadFile("../stacks/waves.yaml"); err == nil {
		f.Add(data)
	}
	files, _ := filepath.Glob("../testdata/waves/bad/*.txtar")
	for _, path := range files {
		if ar, err := txtar.ParseFile(path); err == nil {
			for _, file := range ar.Files {
				if file.Name == "waves.yaml" {
					f.Add(file.Data)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("waves.yaml", data)
		if err != nil {
			if p != nil {
				t.Fatal("a plan returned with errors")
			}
			for _, e := range diag.Errors(err) {
				if d, ok := e.(*diag.Error); !ok || d.File != "waves.yaml" || d.Msg == "" {
					t.Fatalf("unpositioned error %T %v", e, e)
				}
			}
			return
		}
		if len(p.Waves) == 0 {
			t.Fatal("a plan without waves")
		}
		for _, w := range p.Waves {
			if w.Name == "" || len(w.Cells) == 0 || w.Bake < 0 || w.Bake > MaxBake || w.Parallel < 0 {
				t.Fatalf("wave %+v", w)
			}
			g := w.Gate
			if g.Poll < MinPoll || g.Poll > MaxPoll || g.MinRequests < 0 || g.OnBreach == "" || g.OnInconclusive == "" {
				t.Fatalf("gate %+v", g)
			}
			for _, s := range signal.All {
				if th := g.PromoteIf.Get(s.Name); th.IsSet() {
					if th.Value < s.Min || th.Value > s.Max || !s.Satisfiable(th) {
						t.Fatalf("%s threshold %+v accepted", s.Name, th)
					}
					if _, err := s.Parse(s.Format(th)); err != nil {
						t.Fatalf("%s: formatted threshold %q does not parse back: %v", s.Name, s.Format(th), err)
					}
				}
			}
		}
		_ = p.Validate(nil)
	})
}
