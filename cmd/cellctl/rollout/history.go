package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/executor"
)

// HistoryOptions are the inputs of `cellctl rollout history`.
type HistoryOptions struct {
	IO    *iostreams.IOStreams
	Store Store
	View  render.View[History]
}

// History is a fleet's rollouts (deploys), newest first, with what each
// shipped and how it ended.
type History struct {
	Rollouts   []HistoryEntry       `json:"rollouts"`
	Unreadable []backend.Unreadable `json:"unreadable,omitempty"`
}

// HistoryEntry is one rollout in the history.
type HistoryEntry struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	// Images are the images the rollout ships, sorted (one, unless cells
	// ship different ones).
	Images   []string `json:"images"`
	Waves    string   `json:"waves"`
	Started  string   `json:"started"`
	Finished string   `json:"finished,omitempty"`
	Host     string   `json:"host"`
	// By is who paused, aborted or approved it, where anyone did.
	By string `json:"by,omitempty"`
}

var historyFormats = []render.Format[History]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, h History) error {
		rows := [][]string{}
		for _, e := range h.Rollouts {
			rows = append(rows, []string{e.ID, e.Outcome, strings.Join(e.Images, ", "), e.Waves, e.Started, orDash(e.Finished), orDash(e.By)})
		}
		for _, u := range h.Unreadable {
			rows = append(rows, []string{u.ID, "unreadable", "-", "-", "-", "-", "-"})
		}
		_, err := fmt.Fprintln(io.Out, render.Out(io).Table([]string{"ID", "OUTCOME", "IMAGE", "WAVES", "STARTED", "FINISHED", "BY"}, rows))
		return err
	}},
	render.JSONFormat(func(h History) any {
		if h.Rollouts == nil {
			h.Rollouts = []HistoryEntry{}
		}
		return h
	}),
}

// NewCmdHistory builds `cellctl rollout history`.
func NewCmdHistory(f *cmdutil.Factory, runF func(*HistoryOptions) error) *cobra.Command {
	o := &HistoryOptions{IO: f.IO, Store: storeOf(f)}
	return &cobra.Command{
		Use:   "history",
		Short: "List the fleet's rollouts, newest first: outcome, image, waves passed, who steered them",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if o.View, err = render.Pick(f.Global.Output, historyFormats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return historyRun(c.Context(), o)
		},
	}
}

func historyRun(ctx context.Context, o *HistoryOptions) error {
	s, done, err := o.Store(ctx)
	if err != nil {
		return err
	}
	defer done()
	recs, err := s.List(ctx)
	var bad *backend.UnreadableError
	if err != nil && !errors.As(err, &bad) {
		return err
	}
	h := History{}
	if bad != nil {
		h.Unreadable = bad.Records
	}
	for _, r := range recs {
		if r.IsRollout() {
			h.Rollouts = append(h.Rollouts, historyOf(r))
		}
	}
	if verr := o.View.Render(o.IO, h); verr != nil {
		return verr
	}
	return err
}

func historyOf(r *executor.Record) HistoryEntry {
	e := HistoryEntry{ID: r.ID, Outcome: string(r.State), Started: stamp(r.Started), Host: r.Holder.Host, Images: []string{}}
	if !r.Finished.IsZero() {
		e.Finished = stamp(r.Finished)
	}
	passed := 0
	for _, w := range r.Waves {
		if w.State == executor.WaveDone || w.State == executor.WaveUnchanged {
			passed++
		}
		for _, c := range w.Cells {
			if c.After.Image != "" && !slices.Contains(e.Images, c.After.Image) {
				e.Images = append(e.Images, c.After.Image)
			}
		}
		if w.Approval != nil {
			e.By = "approved by " + w.Approval.By
		}
	}
	slices.Sort(e.Images)
	e.Waves = fmt.Sprintf("%d/%d passed", passed, len(r.Waves))
	switch {
	case r.Aborted != nil:
		e.By = "aborted by " + r.Aborted.By
	case r.Paused != nil:
		e.By = "paused by " + r.Paused.By
	}
	return e
}
