// Package stack holds the commands that act on the fleet's stacks through
// the Pulumi engine: up, preview, destroy, status and unlock. Each is an
// Options struct (flag values and narrow dependencies), a NewCmdX that
// binds flags and picks the output view once, and an xRun that calls one
// use case (internal/apply, internal/engine) and renders one view.
package stack

import (
	"context"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render/progress"
	"github.com/cellctl/cellctl/internal/render/stackview"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// EngineFunc connects to the engine for a fleet; events receive
// resource-level progress (cmdutil.Factory.ApplyEngine).
type EngineFunc func(fl *fleet.Fleet, events func(stackrun.Event)) (apply.Engine, error)

// applyEnv is the environment of one apply run: live progress on stderr
// (redrawn on a terminal, plain lines when piped), the first interrupt as
// the stop signal, and the engine connected only when the run needs it.
// done stops the progress display; call it before rendering the result.
func applyEnv(ctx context.Context, io *iostreams.IOStreams, fl *fleet.Fleet, eng EngineFunc, parallel int) (env *apply.Env, done func()) {
	display := progress.New(io)
	return &apply.Env{
		Fleet:    fl,
		Engine:   func() (apply.Engine, error) { return eng(fl, display.Handle) },
		Parallel: parallel,
		Log:      io.ErrLines(),
		Events:   display.Handle,
		Stop:     cmdutil.Graceful(ctx, cmdutil.StacksInFlight).Done(),
	}, display.Close
}

// The reports' views live in internal/render/stackview.
var (
	tableView        = stackview.Table
	previewTableView = stackview.PreviewTable
	jsonView         = stackview.JSON
	markdownView     = stackview.Markdown
	statusTable      = stackview.StatusTable
	statusJSON       = stackview.StatusJSON
	unlockFormats    = stackview.UnlockFormats
)

type (
	CellStatus     = stackview.CellStatus
	ServedTable    = stackview.ServedTable
	UnlockReport   = stackview.UnlockReport
	unlockedHolder = stackview.UnlockedHolder
)
