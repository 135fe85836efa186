package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/internal/progress"
)

// runOperation is the shared path of up, preview, refresh and destroy:
// render offline (fail fast, and learn each stack's size), make sure the
// stacks have their secrets, then drive the engine with live progress.
func runOperation(ctx context.Context, f *Factory, fl *fleet.Fleet, op engine.Operation, names []string, ro engine.RunOptions) (*engine.Result, error) {
	expected := map[string]int{}
	if op != engine.OpDestroy {
		report, err := plan.Render(ctx, fl, plan.Options{Stacks: names, Parallel: f.Global.Parallel})
		if err != nil {
			return nil, fmt.Errorf("the program fails offline, nothing was changed:\n%w", err)
		}
		for _, s := range report.Stacks {
			for _, r := range s.Resources {
				// Progress counts what the engine reports per resource:
				// not the provider resources.
				if !strings.HasPrefix(r.Type, "pulumi:providers:") {
					expected[s.Name]++
				}
			}
		}
		if !report.Isolation.OK {
			var lines []string
			for _, v := range report.Isolation.Violations {
				lines = append(lines, v.String())
			}
			return nil, exitcode.With(exitcode.Findings, fmt.Errorf("the isolation audit failed, nothing was changed (see `cellctl plan`):\n  %s", strings.Join(lines, "\n  ")))
		}
	}
	display := progress.New(f.IO.ErrOut, f.IO.IsStderrTTY() && f.IO.ColorErr(), f.ErrStyles())
	eng, closeEng, err := f.Engine(ctx, fl, display.Handle, expected)
	if err != nil {
		display.Close()
		return nil, err
	}
	defer closeEng()
	if err := eng.PreparePlugins(ctx); err != nil {
		display.Close()
		return nil, err
	}
	if op == engine.OpUp || op == engine.OpPreview {
		changed, err := eng.EnsureOriginVerifySecret(ctx, names)
		if err != nil {
			display.Close()
			return nil, err
		}
		if len(changed) > 0 {
			fmt.Fprintf(f.IO.ErrOut, "stored the fleet's origin-verify secret (encrypted) in %s — commit these files\n", strings.Join(changed, ", "))
		}
	}
	ro.Stacks = names
	ro.Stop = Graceful(ctx).Done()
	res, err := eng.Run(ctx, op, ro)
	display.Close()
	if err != nil {
		code := exitcode.Error
		if engine.IsLocked(err) {
			code = exitcode.Locked
		}
		return res, exitcode.With(code, err)
	}
	return res, nil
}

// printResult writes the operation's result: a JSON document on stdout
// with -o json, else a table.
func printResult(f *Factory, res *engine.Result) error {
	if f.Global.Output == FormatJSON {
		return renderJSON(f.IO.Out, res)
	}
	s := f.Styles()
	var rows [][]string
	for _, r := range res.Stacks {
		result := r.Result
		switch r.Result {
		case engine.Succeeded:
			result = s.Good(result)
		case engine.Failed:
			result = s.Bad(result)
		default:
			result = s.Warn(result)
		}
		c := r.Changes
		rows = append(rows, []string{r.Name, result, fmt.Sprint(c.Create), fmt.Sprint(c.Update), fmt.Sprint(c.Replace),
			fmt.Sprint(c.Delete), fmt.Sprint(c.Same), fmt.Sprintf("%.1fs", r.Seconds)})
	}
	fmt.Fprint(f.IO.Out, s.Table([]string{"STACK", "RESULT", "CREATE", "UPDATE", "REPLACE", "DELETE", "SAME", "TIME"}, rows))
	for _, r := range res.Stacks {
		for _, n := range r.Notes {
			fmt.Fprintf(f.IO.Out, "%s: note: %s\n", r.Name, n)
		}
		if r.Result == engine.Failed {
			fmt.Fprintf(f.IO.Out, "%s: %s\n", r.Name, r.Error)
			if len(r.FailedResources) > 0 {
				sort.Strings(r.FailedResources)
				fmt.Fprintf(f.IO.Out, "%s: failed resources: %s\n", r.Name, strings.Join(r.FailedResources, ", "))
			}
		}
	}
	return nil
}
