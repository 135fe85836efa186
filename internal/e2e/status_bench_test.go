package e2e

import (
	"testing"
	"time"
)

// BenchmarkStatus is `cellctl status` on the deployed demo fleet (four
// cells and the router, the file backend): what an operator, and the
// preflights of deploy and drift, pay to read the backend. cpu-s/op is
// cellctl's CPU and that of every process it waited for.
func BenchmarkStatus(b *testing.B) {
	dir := b.TempDir()
	copyFleetFiles(b, dir)
	addDemoZones(b, dir)
	mustRun(b, dir, "up")
	var cpu time.Duration
	for b.Loop() {
		cpu += mustRun(b, dir, "status").cpu
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
