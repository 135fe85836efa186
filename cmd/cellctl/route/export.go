package route

import (
	"io"

	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/router"
)

// PrintTransition renders the report of a routing table transition for
// the lifecycle commands (drain, undrain, migrate, cell add).
func PrintTransition(s *render.Styles, w io.Writer, tr *router.Transition) {
	printTransition(s, w, tr)
}
