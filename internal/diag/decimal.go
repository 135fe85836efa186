package diag

import "regexp"

// The one spelling of numbers in cellctl's YAML files: plain decimal
// digits. YAML also reads 1_0, 0x10, 0o10, +5 and 010 as integers, and
// Pulumi, YAML 1.1 and YAML 1.2 readers disagree on what some of them
// mean, so a value such as max_parallel: 010 must not mean 8 to one tool
// and 10 to another. The fleet loader and waves.yaml share these.
var (
	DecimalInt    = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	DecimalNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)
)

// DecimalHint is what an integer written otherwise is told.
const DecimalHint = "written as plain decimal digits such as 10 (no underscores, + signs, leading zeros, exponents or 0x/0o prefixes)"
