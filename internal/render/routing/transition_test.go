package routing

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/router"
)

func TestPrintTransition(t *testing.T) {
	table, err := router.Load("../../../testdata/routing/demo_v1.json") // the demo fleet's table as first committed
	if err != nil {
		t.Fatal(err)
	}
	s := table.Spec()
	s.Overrides = s.Overrides[:1] // acme pinned to cell-b
	table, err = router.New(s)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := router.DrainCell(table, "cell-b", router.DrainOptions{Pinned: router.MovePinned})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	Transition(render.NewStyles(&b, false), &b, tr)
	want := `drain cell-b: routing table version 1 → 2 (load: uniform)
moved: 256 of 1024 buckets (25.0% of tenants routed by hash), 256 load units

Moves
FROM    TO      BUCKETS  TENANTS  LOAD
cell-b  cell-a  86       8.4%     86
cell-b  cell-c  85       8.3%     85
cell-b  cell-d  85       8.3%     85

Overridden tenants that move
TENANT  FROM    TO
acme    cell-b  cell-c

Cells
CELL    STATE              BUCKETS    LOAD       CAPACITY  USED
cell-a  active             256 → 342  256 → 342  512*      50.0% → 66.8%
cell-b  active → draining  256 → 0    256 → 0    512*      50.0% → 0.0%
cell-c  active             256 → 341  256 → 341  512*      50.0% → 66.6%
cell-d  active             256 → 341  256 → 341  512*      50.0% → 66.6%
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	add, err := router.AddCell(table, router.NewCell{ID: "cell-e"}, router.AddOptions{Take: router.TakeAuto})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	Transition(render.NewStyles(&b, false), &b, add)
	for _, line := range []string{
		"add cell-e: routing table version 1 → 2 (load: uniform)",
		"moved: 204 of 1024 buckets (19.9% of tenants routed by hash), 204 load units; the fewest possible: 204",
		"cell-e  - → active  0 → 204    0 → 204    410*      0.0% → 49.8%",
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("add report lacks %q:\n%s", line, b.String())
		}
	}
}
