package route

import (
	"context"
	"errors"
	"fmt"

	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/component"
)

// servedTables reads which table each deployed distribution serves; what
// cannot be read is a note on stderr, never a failure of the lookup.
func servedTables(opts *RouteOptions, local *router.Table) []ServedTable {
	if opts.Deployed == nil {
		return nil
	}
	ctx := opts.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	outs, err := opts.Deployed(ctx)
	note := func(format string, args ...any) {
		if opts.IO != nil {
			fmt.Fprintf(opts.IO.ErrOut, "note: "+format+"\n", args...)
		}
	}
	switch {
	case errors.Is(err, engine.ErrNotDeployed):
		note("the router stack is not deployed: no edge serves a table yet")
		return nil
	case err != nil:
		note("cannot read which table the deployed router serves: %v", err)
		return nil
	}
	served := component.ReadServedTables(outs)
	if served == nil {
		note("the deployed router predates table checksums (it serves table version %v); the next `cellctl up router` publishes them", outs["tableVersion"])
		return nil
	}
	out := make([]ServedTable, len(served))
	for i, s := range served {
		out[i] = ServedTable{ServedTable: s, Current: s.Known && s.Version == local.Version() && s.Checksum == local.Checksum()}
	}
	return out
}
