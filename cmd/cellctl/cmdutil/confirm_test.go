package cmdutil

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/iostreams"
)

func TestConfirmationAsksAtATerminal(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   error
	}{
		{"y\n", nil},
		{"YES\n", nil},
		{" yes \n", nil},
		{"y", nil}, // no newline before EOF
		{"n\n", ErrNotConfirmed},
		{"\n", ErrNotConfirmed}, // the default is no
		{"yep\n", ErrNotConfirmed},
		{"", ErrNotConfirmed}, // EOF: nobody answered
	} {
		ios, in, _, errOut := iostreams.Test()
		ios.SetTTY(true, true, true)
		in.WriteString(tc.answer)
		err := Confirmation{IO: ios, Verb: "up"}.Ask(context.Background(), text("plan: up 1 stack\n  up cell-b (81 resources)\n"))
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("answer %q: got %v, want %v", tc.answer, err, tc.want)
		}
		if got := errOut.String(); !strings.HasPrefix(got, "plan: up 1 stack\n  up cell-b (81 resources)\nGo ahead? [y/N] ") {
			t.Errorf("the question shows what will change, then asks: %q", got)
		}
	}
}

func TestConfirmationWithYesAsksNothing(t *testing.T) {
	for _, tty := range []bool{true, false} {
		ios, _, _, errOut := iostreams.Test()
		ios.SetTTY(tty, tty, tty)
		err := Confirmation{IO: ios, Yes: true, Verb: "deploy"}.Ask(context.Background(), func() (string, error) {
			t.Fatal("--yes: nothing is described")
			return "", nil
		})
		if err != nil || errOut.Len() > 0 {
			t.Fatalf("--yes: %v, printed %q", err, errOut.String())
		}
	}
}

// Where nobody can answer, a fleet-changing verb without --yes fails at
// once, naming both ways to say yes.
func TestConfirmationWithNoTerminalNeedsYes(t *testing.T) {
	for _, tty := range [][2]bool{{false, false}, {false, true}, {true, false}} {
		ios, _, _, _ := iostreams.Test()
		ios.SetTTY(true, tty[1], tty[0])
		err := Confirmation{IO: ios, Verb: "drain"}.Ask(context.Background(), func() (string, error) {
			t.Fatal("nobody to show it to: nothing is described")
			return "", nil
		})
		if err == nil {
			t.Fatalf("stdin tty %v, stderr tty %v: want a refusal", tty[0], tty[1])
		}
		for _, want := range []string{"cellctl drain changes the fleet", "--yes", SkipConfirmationsEnv + "=true", "nothing was changed"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q lacks %q", err, want)
			}
		}
	}
}

// Ctrl-C at the prompt ends the wait: the answer is no.
func TestConfirmationGivesUpWhenInterrupted(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	ios.SetTTY(true, true, true)
	r, w := io.Pipe()
	defer w.Close()
	ios.In = r
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted"))
	if err := (Confirmation{IO: ios, Verb: "up"}).Ask(ctx, text("plan")); !errors.Is(err, ErrNotConfirmed) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("got %v", err)
	}
}

func TestSkipConfirmations(t *testing.T) {
	for v, want := range map[string]bool{"": false, "true": true, "1": true, "false": false, "0": false} {
		got, err := SkipConfirmations(v)
		if err != nil || got != want {
			t.Errorf("%q: got %v, %v", v, got, err)
		}
	}
	if _, err := SkipConfirmations("yes please"); err == nil || !strings.Contains(err.Error(), `CELLCTL_SKIP_CONFIRMATIONS="yes please": want true or false`) {
		t.Fatalf("got %v", err)
	}
}

// A description that fails is the error: nothing is asked.
func TestConfirmationSummaryError(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	ios.SetTTY(true, true, true)
	boom := errors.New("reading cell-b's outputs: boom")
	if err := (Confirmation{IO: ios, Verb: "deploy"}).Ask(context.Background(), func() (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if errOut.Len() > 0 {
		t.Fatalf("asked anyway: %q", errOut.String())
	}
}

func text(s string) func() (string, error) { return func() (string, error) { return s, nil } }
