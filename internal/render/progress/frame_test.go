package progress

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/render"
)

// Each frame moves up over the one before it, clears and rewrites each
// line; a line wider than a row is cut at its visible width, its styling
// kept, so the cursor arithmetic of the next frame holds.
func TestFrameRedrawsInPlaceAndCutsToOneRow(t *testing.T) {
	var b bytes.Buffer
	f := NewFrame(&b)
	f.Width = 10
	f.Draw([]string{"cell-a", "cell-b"})
	if got := b.String(); got != "\x1b[2Kcell-a\n\x1b[2Kcell-b\n" {
		t.Errorf("first frame %q", got)
	}
	b.Reset()
	styled := render.NewStyles(&b, true).Bad("0123456789abcdef")
	f.Draw([]string{styled})
	got := b.String()
	if !strings.HasPrefix(got, "\x1b[2A\x1b[2K") || !strings.Contains(got, "012345678…") || strings.Contains(got, "9a") || !strings.Contains(got, "\x1b[") {
		t.Errorf("second frame %q: want up 2, the styled line cut to 10 columns", got)
	}
	b.Reset()
	f.Above("rollout started")
	if got := b.String(); got != "\x1b[1A\x1b[Jrollout started\n" {
		t.Errorf("above %q", got)
	}
	b.Reset()
	f.Draw([]string{"x"})
	if got := b.String(); got != "\x1b[2Kx\n" {
		t.Errorf("the frame after a line above moved up over it: %q", got)
	}
	b.Reset()
	f.Draw(nil)
	if got := b.String(); got != "\x1b[1A\x1b[J" {
		t.Errorf("an empty frame after a line: %q", got)
	}
}

// A multi-byte rune is never split (the run progress once cut lines at
// byte 140, which could split the spinner or a name).
func TestFrameCutsByColumnsNotBytes(t *testing.T) {
	var b bytes.Buffer
	f := NewFrame(&b)
	f.Width = 4
	f.Draw([]string{"⠋⠙⠹⠸⠼⠴"})
	if got := b.String(); got != "\x1b[2K⠋⠙⠹…\n" {
		t.Errorf("%q", got)
	}
}
