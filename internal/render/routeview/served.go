package routeview

import (
	"fmt"

	"github.com/cellctl/cellctl/router/component"
)

// ServedTable is the table one distribution of the deployed router
// serves, compared with the local table.
type ServedTable struct {
	component.ServedTable
	// Current is true when it serves the local table (same version and
	// checksum).
	Current bool `json:"current"`
}

// servedText says what one distribution serves, for people.
func servedText(s ServedTable) string {
	if !s.Known {
		return fmt.Sprintf("%s distribution: an earlier edge function version (%s), not this table: its description names its table", s.Distribution, s.FunctionArn)
	}
	t := fmt.Sprintf("%s distribution: serves version %d %s", s.Distribution, s.Version, s.Checksum)
	if s.Current {
		return t + " (this table)"
	}
	return t + " (stale: not this table)"
}
