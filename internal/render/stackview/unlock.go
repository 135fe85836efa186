package stackview

import (
	"fmt"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
)

// UnlockReport is what `cellctl unlock` did: the locks it removed (none:
// the stack was not locked).
type UnlockReport struct {
	Stack   string           `json:"stack"`
	Removed []UnlockedHolder `json:"removed"`
}

// UnlockedHolder is one lock unlock removed.
type UnlockedHolder struct {
	User  string `json:"user"`
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	Since string `json:"since"`
}

// UnlockFormats are the views of `cellctl unlock`.
var UnlockFormats = []render.Format[UnlockReport]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r UnlockReport) error {
		if len(r.Removed) == 0 {
			_, err := fmt.Fprintf(io.Out, "%s is not locked\n", r.Stack)
			return err
		}
		for _, h := range r.Removed {
			if _, err := fmt.Fprintf(io.Out, "%s: removed the lock of pid %d on %s (%s, since %s)\n", r.Stack, h.PID, h.Host, h.User, h.Since); err != nil {
				return err
			}
		}
		return nil
	}},
	render.JSONFormat(func(r UnlockReport) any { return r }),
}
