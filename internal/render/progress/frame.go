package progress

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// FrameWidth is the columns a line of a live frame may take: a wrapped
// line would break the cursor arithmetic of the next frame.
const FrameWidth = 150

// Frame writes a live display's block of lines in place: each Draw moves
// the cursor up over the previous frame, clears and writes each line cut
// to one terminal row (visible columns, styling kept, "…" where cut), and
// remembers how many lines it drew (a shorter frame clears what is left
// of the previous one). The run progress (Display) and the
// rollout display (internal/render/deployview) draw through it.
type Frame struct {
	w io.Writer
	// Width is the visible columns a line may take (0: FrameWidth).
	Width int
	drawn int
}

// NewFrame returns a frame writing to w.
func NewFrame(w io.Writer) *Frame { return &Frame{w: w} }

// Draw replaces the previous frame with lines, in one write.
func (f *Frame) Draw(lines []string) {
	var b strings.Builder
	if f.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", f.drawn)
	}
	width := f.Width
	if width <= 0 {
		width = FrameWidth
	}
	for _, l := range lines {
		b.WriteString("\x1b[2K")
		b.WriteString(ansi.Truncate(l, width, "…"))
		b.WriteString("\n")
	}
	if len(lines) < f.drawn {
		// A shorter frame: what is left of the previous one goes.
		b.WriteString("\x1b[J")
	}
	f.drawn = len(lines)
	if b.Len() > 0 {
		io.WriteString(f.w, b.String())
	}
}

// Above clears the frame and writes line where it was; the next Draw
// draws the frame below it.
func (f *Frame) Above(line string) {
	var b strings.Builder
	if f.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", f.drawn)
		f.drawn = 0
	}
	b.WriteString(line)
	b.WriteString("\n")
	io.WriteString(f.w, b.String())
}
