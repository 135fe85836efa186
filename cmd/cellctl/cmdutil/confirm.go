package cmdutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/routing"
	"github.com/cellctl/cellctl/internal/runplan"
)

// SkipConfirmationsEnv answers yes to every confirmation when true, as
// --yes does: what a CI job or a script sets once (pulumi's own is
// PULUMI_SKIP_CONFIRMATIONS).
const SkipConfirmationsEnv = "CELLCTL_SKIP_CONFIRMATIONS"

// SkipConfirmations reads SkipConfirmationsEnv's value ("" is false).
func SkipConfirmations(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", SkipConfirmationsEnv, v)
	}
	return b, nil
}

// ErrNotConfirmed is an operator's "no": nothing was changed.
var ErrNotConfirmed = errors.New("not confirmed; nothing was changed")

// Confirmation is the question a fleet-changing verb asks once its change
// is planned and every check before its first write has passed.
type Confirmation struct {
	IO *iostreams.IOStreams
	// Yes is --yes (or CELLCTL_SKIP_CONFIRMATIONS): nothing is asked.
	Yes bool
	// Verb names the command in the refusal ("up", "cell add").
	Verb string
}

// Ask asks at a terminal, showing summary (called only when there is
// someone to show it to), and returns nil for a yes. Where no one can
// answer — stdin or stderr is not a terminal — and there is no --yes, it
// refuses, naming both ways to say yes: a fleet is never changed because
// nobody was there to say no. Bad input and every read-only check come
// first, so a refusal here means the change itself was sound.
func (c Confirmation) Ask(ctx context.Context, summary func() (string, error)) error {
	if c.Yes {
		return nil
	}
	if c.IO == nil || !c.IO.CanPrompt() {
		return fmt.Errorf("cellctl %s changes the fleet and asks first, but there is no terminal to answer on: pass --yes (or set %s=true) to go ahead; nothing was changed", c.Verb, SkipConfirmationsEnv)
	}
	text, err := summary()
	if err != nil {
		return err
	}
	fmt.Fprintf(c.IO.ErrOut, "%s\nGo ahead? [y/N] ", strings.TrimRight(text, "\n"))
	answer, err := readLine(ctx, c.IO.In)
	if err != nil {
		fmt.Fprintln(c.IO.ErrOut)
		return fmt.Errorf("%w (%v)", ErrNotConfirmed, err)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return ErrNotConfirmed
}

// readLine reads one line from r, or gives up when ctx ends (Ctrl-C at
// the prompt): the read itself cannot be interrupted, so it runs aside.
func readLine(ctx context.Context, r io.Reader) (string, error) {
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		if err == io.EOF && s != "" {
			err = nil
		}
		got <- line{s, err}
	}()
	select {
	case l := <-got:
		return l.s, l.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// Proposal asks c with a lifecycle change described as its dry run shows
// it: cell add's steps, then each routing transition's moves and per-cell
// load.
func (c Confirmation) Proposal(ctx context.Context, p lifecycle.Proposal) error {
	return c.Ask(ctx, func() (string, error) {
		var b strings.Builder
		for _, s := range p.Steps {
			fmt.Fprintf(&b, "will %s\n", s)
		}
		for _, tr := range p.Transitions {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			routing.Transition(render.Err(c.IO), &b, tr)
		}
		return b.String(), nil
	})
}

// Plan asks c with the run plan an up executes, as --dry-run prints it.
func (c Confirmation) Plan(ctx context.Context, p *runplan.Plan) error {
	return c.Ask(ctx, func() (string, error) {
		var b strings.Builder
		err := p.Describe(&b)
		return b.String(), err
	})
}
