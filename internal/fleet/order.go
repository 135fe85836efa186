package fleet

// The stack ordering, defined once: every cell before the router, because
// the router reads the cells' stack outputs (their ALB DNS names) and must
// only route to cells that exist; a teardown runs the phases in reverse.
// Cells within a phase share nothing, so they run in parallel. The offline
// render, the engine's run plan and the stack selection all order stacks
// with these two functions.

// Phases splits stack names into the phases they deploy in, keeping the
// given order within a phase: the cells, then the router. Empty phases are
// left out.
func Phases(names []string) [][]string {
	var cells, router []string
	for _, n := range names {
		if n == RouterStack {
			router = append(router, n)
		} else {
			cells = append(cells, n)
		}
	}
	var out [][]string
	for _, p := range [][]string{cells, router} {
		if len(p) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// TeardownPhases is Phases in reverse: the router stops routing to the
// cells before they go.
func TeardownPhases(names []string) [][]string {
	p := Phases(names)
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// InDeployOrder returns names ordered as they deploy (cells, then the
// router).
func InDeployOrder(names []string) []string {
	var out []string
	for _, p := range Phases(names) {
		out = append(out, p...)
	}
	return out
}
