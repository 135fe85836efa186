// Package simtest drives the simulated provider (internal/sim/provider)
// the way the engine does — Check, then Create, Update, Read, Delete —
// against a cloud in a temporary directory, and builds what the
// simulator's tests share: a cell's serving path with the cell template's
// alarms, a settable clock, edge function builds. Only tests import it.
package simtest
