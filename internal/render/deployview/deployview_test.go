package deployview

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/executor"
)

func TestMarkdownDryRun(t *testing.T) {
	d := &executor.Description{ID: "r-00000000000a", Waves: []executor.WaveDescription{{Name: "canary", Bake: 30 * time.Minute, Gate: "error_rate_5xx < 0.5%",
		Cells: []executor.CellDescription{{Cell: "cell-a", Changes: []executor.Change{{Key: "image", Old: `"app:1"`, New: `"app:2"`}}}}}}}
	md := cells(Markdown(d))
	if !strings.Contains(md, "| canary | cell-a | `image`: \"app:1\" → \"app:2\" | 30m0s | error_rate_5xx < 0.5% |") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestDryRunShowsThePreviewsResourceChanges(t *testing.T) {
	d := &executor.Description{ID: "r-00000000000a", Waves: []executor.WaveDescription{{Name: "canary", Bake: 30 * time.Minute,
		Cells: []executor.CellDescription{{Cell: "cell-a", Changes: []executor.Change{{Key: "image", Old: `"app:1"`, New: `"app:2"`}},
			Resources: []executor.ResourceChange{
				{Op: "update", Type: "aws:ecs/service:Service", Name: "cell-a-svc", Diffs: []string{"taskDefinition"}},
				{Op: "replace", Type: "aws:ecs/taskDefinition:TaskDefinition", Name: "cell-a-task", Replace: []string{"containerDefinitions"}},
			}}}}}}
	md := cells(Markdown(d))
	if !strings.Contains(md, "preview: 1 to update, 1 to replace<br>`update aws:ecs/service:Service cell-a-svc (taskDefinition)`<br>`replace aws:ecs/taskDefinition:TaskDefinition cell-a-task replaced for containerDefinitions`") {
		t.Errorf("markdown:\n%s", md)
	}
	io, _, _, _ := iostreams.Test()
	txt := Describe(render.Out(io), d)
	if !strings.Contains(txt, "    preview: 1 to update, 1 to replace\n      update aws:ecs/service:Service cell-a-svc (taskDefinition)\n") {
		t.Errorf("table:\n%s", txt)
	}
}

// TestDryRunShowsAWavesDelay: a stage's delay (waves.yaml's pipeline
// shape) is in the dry run, as text and on the pull request.
func TestDryRunShowsAWavesDelay(t *testing.T) {
	d := &executor.Description{ID: "r-00000000000a", Waves: []executor.WaveDescription{{Name: "general", Bake: 10 * time.Minute, Delay: 30 * time.Minute,
		Cells: []executor.CellDescription{{Cell: "cell-c", Changes: []executor.Change{{Key: "image", Old: `"app:1"`, New: `"app:2"`}}}}}}}
	if md := cells(Markdown(d)); !strings.Contains(md, "| hold 30m0s after the wave before, 10m0s |") {
		t.Errorf("markdown:\n%s", md)
	}
	io, _, _, _ := iostreams.Test()
	if txt := Describe(render.Out(io), d); !strings.Contains(txt, "general  hold 30m0s after the wave before, bake 10m0s") {
		t.Errorf("text:\n%s", txt)
	}
}

// TestDryRunListsTheMigrationStep: a cell whose update migrates first says
// so, with the command and image, as text and on the pull request.
func TestDryRunListsTheMigrationStep(t *testing.T) {
	d := &executor.Description{ID: "r-00000000000a", Waves: []executor.WaveDescription{{Name: "canary", Bake: 10 * time.Minute,
		Cells: []executor.CellDescription{{Cell: "cell-a", Changes: []executor.Change{{Key: "image", Old: `"app:1"`, New: `"app:2"`}},
			Migration: &executor.MigrationPlan{Image: "app:2", Command: []string{"./migrate", "up"}, Timeout: 15 * time.Minute}}}}}}
	if md := cells(Markdown(d)); !strings.Contains(md, "| canary | cell-a | migrate first: `./migrate up (image app:2), timeout 15m0s`<br>`image`") {
		t.Errorf("markdown:\n%s", md)
	}
	io, _, _, _ := iostreams.Test()
	if txt := Describe(render.Out(io), d); !strings.Contains(txt, "  cell-a:\n    migrate first: ./migrate up (image app:2), timeout 15m0s\n    image:") {
		t.Errorf("text:\n%s", txt)
	}
}

// TestDryRunListsTheBootstrapStep: a cell whose update turns migrations on
// says it bootstraps its database users after the update; a migrating
// cell, before its migration.
func TestDryRunListsTheBootstrapStep(t *testing.T) {
	d := &executor.Description{ID: "r-00000000000b", Waves: []executor.WaveDescription{{Name: "canary", Bake: 10 * time.Minute,
		Cells: []executor.CellDescription{
			{Cell: "cell-a", Changes: []executor.Change{{Key: "cells:migrationCommand", Old: "null", New: `["./migrate","up"]`}},
				Bootstrap: &executor.BootstrapPlan{Why: "migrations turned on", AfterUpdate: true}},
			{Cell: "cell-b", Changes: []executor.Change{{Key: "image", Old: `"app:1"`, New: `"app:2"`}},
				Migration: &executor.MigrationPlan{Image: "app:2", Command: []string{"./migrate", "up"}},
				Bootstrap: &executor.BootstrapPlan{Why: "the migration logs in as cellctl_migrator"}},
		}}}}
	io, _, _, _ := iostreams.Test()
	txt := Describe(render.Out(io), d)
	for _, want := range []string{
		"  cell-a:\n    bootstrap the database users after the update: migrations turned on\n    cells:migrationCommand:",
		"  cell-b:\n    bootstrap the database users first: the migration logs in as cellctl_migrator\n    migrate first: ./migrate up (image app:2)\n",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	if md := cells(Markdown(d)); !strings.Contains(md, "| canary | cell-a | bootstrap the database users after the update: migrations turned on<br>") ||
		!strings.Contains(md, "| canary | cell-b | bootstrap the database users before the migration: the migration logs in as cellctl_migrator<br>migrate first:") {
		t.Errorf("markdown:\n%s", md)
	}
}

// cells reads a markdown table's rows with one space either side of each
// column bar, whatever the padding (the table pads columns to their widest
// cell).
func cells(md string) string { return bar.ReplaceAllString(md, " | ") }

var bar = regexp.MustCompile(` *\| *`)
