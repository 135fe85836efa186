package executor

import (
	"errors"
	"os"
	"syscall"
)

// ProcessAlive reports whether the process of a lock holder on this host
// still runs (signal 0 probes without signalling). The deploy command passes
// it as Options.Alive; it is only ever asked about holders on this host.
func ProcessAlive(h Holder) bool {
	if h.PID <= 0 {
		return true // unknown: presume alive, never steal on a guess
	}
	p, err := os.FindProcess(h.PID)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	// EPERM: the process exists but belongs to someone else.
	return err == nil || errors.Is(err, syscall.EPERM)
}
