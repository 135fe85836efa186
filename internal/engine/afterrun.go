package engine

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

// afterRun answers, from an up's or a destroy's own engine events, the
// questions the Automation API asks the CLI right after that operation:
// Stack.Up runs `stack output --json`, `stack output --json --show-secrets`
// and `stack history --json … --page-size 1 --page 1`; Stack.Destroy the
// history. Each is a start of the CLI (about a quarter of a CPU-second
// before it does anything, plus a PBKDF2 derivation of the passphrase's
// key where it decrypts), three of an up's five, and the answers are
// already in the events the operation just streamed: its summary event
// holds the resource changes and the stack resource's outputs event holds
// the outputs, secrets masked as "[secret]".
//
// It answers only the very next such calls for the same stack, with the
// arguments the SDK passes today, once the operation succeeded and its
// summary arrived; anything else — another command in between, other
// flags, an operation run without tap, events that never came — runs the
// CLI as before. What cellctl reads from the answers is the same either
// way: the resource counts, and the outputs with every secret masked
// (maskOutputs). TestAfterRunAnswersAsTheCLIDoes compares the two with the
// real CLI.
//
// One afterRun serves one workspace (one stack), so answers never cross
// stacks.
type afterRun struct {
	inner auto.PulumiCommand

	// selected names the stack whose `stack select --stack S` is answered
	// without the CLI: the fleet's file backend holds its checkpoint, so
	// the select (a start of the CLI, about a third of a CPU-second, before
	// every operation of every stack) could only succeed, and what it
	// records — the workspace's current stack, in a workspace made for
	// this one run — is never read: every command the SDK runs names its
	// stack with --stack. A stack the backend lacks, or a scratch or
	// remote backend, is selected by the CLI as before.
	selected string

	mu       sync.Mutex
	seen     *observed // the events of the operation being streamed
	finished *finishedOp
}

// observed is what one operation's events said; summarized is closed
// when its summary event arrived.
type observed struct {
	summary    *apitype.SummaryEvent
	outputs    map[string]any
	summarized chan struct{}
}

// finishedOp is an operation that succeeded and whose questions may be
// answered.
type finishedOp struct {
	stack    string
	destroy  bool
	seen     *observed
	outAsked int // the SDK asks for the outputs twice: masked, then shown
}

// summaryWait bounds the wait for the summary event after the CLI exited
// (the SDK forwards the events it received while the CLI ran; the summary
// is the last).
const summaryWait = 5 * time.Second

func newAfterRun(inner auto.PulumiCommand) *afterRun { return &afterRun{inner: inner} }

// tap is the event channel for the workspace's next operation: observed
// by its afterRun where it has one.
func (w *workspace) tap(out chan events.EngineEvent) chan<- events.EngineEvent {
	if w.after == nil {
		return out
	}
	return w.after.tap(out)
}

func (a *afterRun) Version() semver.Version { return a.inner.Version() }

// tap returns the channel to hand the SDK for the next operation's events:
// each is observed, then passed on to out, which is closed when the SDK
// closes the returned one.
func (a *afterRun) tap(out chan<- events.EngineEvent) chan<- events.EngineEvent {
	obs := &observed{summarized: make(chan struct{})}
	a.mu.Lock()
	a.seen, a.finished = obs, nil
	a.mu.Unlock()
	in := make(chan events.EngineEvent)
	go func() {
		defer close(out)
		for ev := range in {
			switch {
			case ev.SummaryEvent != nil:
				a.mu.Lock()
				if obs.summary == nil {
					obs.summary = ev.SummaryEvent
					close(obs.summarized)
				}
				a.mu.Unlock()
			case ev.ResOutputsEvent != nil && ev.ResOutputsEvent.Metadata.Type == "pulumi:pulumi:Stack" &&
				ev.ResOutputsEvent.Metadata.New != nil:
				outs := ev.ResOutputsEvent.Metadata.New.Outputs
				if outs == nil {
					outs = map[string]any{}
				}
				a.mu.Lock()
				obs.outputs = outs
				a.mu.Unlock()
			}
			out <- ev
		}
	}()
	return in
}

func (a *afterRun) Run(ctx context.Context, workdir string, stdin io.Reader, extraOut, extraErr []io.Writer,
	extraEnv []string, args ...string,
) (string, string, int, error) {
	if a.selected != "" && slices.Equal(args, []string{"stack", "select", "--stack", a.selected}) {
		return "", "", 0, nil
	}
	if out, ok := a.answer(ctx, args); ok {
		return out, "", 0, nil
	}
	stdout, stderr, code, err := a.inner.Run(ctx, workdir, stdin, extraOut, extraErr, extraEnv, args...)
	if err == nil && code == 0 {
		a.remember(args)
	}
	return stdout, stderr, code, err
}

// remember marks a succeeded up or destroy whose events were tapped.
func (a *afterRun) remember(args []string) {
	if len(args) == 0 || (args[0] != "up" && args[0] != "destroy") {
		return
	}
	stack := flagValue(args, "--stack")
	a.mu.Lock()
	defer a.mu.Unlock()
	if stack == "" || a.seen == nil {
		return
	}
	a.finished = &finishedOp{stack: stack, destroy: args[0] == "destroy", seen: a.seen}
	a.seen = nil
}

// answer serves the next post-operation call from what the events held.
func (a *afterRun) answer(ctx context.Context, args []string) (string, bool) {
	a.mu.Lock()
	f := a.finished
	a.finished = nil // any other command ends the window
	a.mu.Unlock()
	if f == nil {
		return "", false
	}
	outputsCall := !f.destroy && f.outAsked < 2 &&
		(slices.Equal(args, []string{"stack", "output", "--json", "--stack", f.stack}) ||
			slices.Equal(args, []string{"stack", "output", "--json", "--show-secrets", "--stack", f.stack}))
	historyCall := isHistoryPage(args, f.stack)
	if !outputsCall && !historyCall {
		return "", false
	}
	select {
	case <-f.seen.summarized:
	case <-ctx.Done():
		return "", false
	case <-time.After(summaryWait):
		return "", false
	}
	a.mu.Lock()
	summary, outputs := f.seen.summary, f.seen.outputs
	a.mu.Unlock()
	if outputsCall {
		if outputs == nil {
			return "", false // no stack resource seen: let the CLI answer
		}
		b, err := json.Marshal(outputs)
		if err != nil {
			return "", false
		}
		f.outAsked++
		a.mu.Lock()
		a.finished = f // the history (and the shown outputs) follow
		a.mu.Unlock()
		return string(b), true
	}
	changes := make(map[string]int, len(summary.ResourceChanges))
	for op, n := range summary.ResourceChanges {
		changes[string(op)] = n
	}
	kind := apitype.UpdateUpdate
	if f.destroy {
		kind = apitype.DestroyUpdate
	}
	b, err := json.Marshal([]auto.UpdateSummary{{Kind: string(kind), Result: "succeeded", ResourceChanges: &changes}})
	if err != nil {
		return "", false
	}
	return string(b), true
}

// isHistoryPage: `stack history --json [--show-secrets] --page-size 1
// --page 1 --stack S`, the SDK's call for the operation's summary.
func isHistoryPage(args []string, stack string) bool {
	tail := []string{"--page-size", "1", "--page", "1", "--stack", stack}
	return slices.Equal(args, append([]string{"stack", "history", "--json"}, tail...)) ||
		slices.Equal(args, append([]string{"stack", "history", "--json", "--show-secrets"}, tail...))
}

func flagValue(args []string, flag string) string {
	for i := len(args) - 2; i >= 0; i-- { // the SDK appends --stack last
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}
