package cmdutil

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/pflag"
)

// bakeScale is the --bake-scale flag: a fraction 0 < F ≤ 1 that shortens
// every bake of a rehearsal. It is checked when the flag is parsed, so a
// bad value (0, negative, NaN, ±Inf, overflow, more than 1) exits 1 before
// anything runs; unset leaves the target 0, which means "bake as
// configured". strconv accepts "NaN" and "Inf", and NaN fails every
// comparison, so the check is written as what is allowed.
type bakeScale struct{ p *float64 }

func (b bakeScale) String() string {
	if b.p == nil || *b.p == 0 {
		return ""
	}
	return strconv.FormatFloat(*b.p, 'g', -1, 64)
}

func (b bakeScale) Type() string { return "fraction" }

func (b bakeScale) Set(s string) error {
	v, err := ParseFraction(s)
	if err != nil {
		return err
	}
	*b.p = v
	return nil
}

// ParseFraction reads a finite number more than 0 and at most 1.
func ParseFraction(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%q is out of range: allowed is more than 0 and at most 1", s)
		}
		return 0, fmt.Errorf("%q is not a number: allowed is more than 0 and at most 1, e.g. 0.01", s)
	}
	if !(v > 0 && v <= 1) || math.IsNaN(v) {
		return 0, fmt.Errorf("%s: allowed is more than 0 and at most 1, e.g. 0.01", s)
	}
	return v, nil
}

// BakeScaleVar binds --bake-scale to p (0 when the flag is not given).
func BakeScaleVar(fl *pflag.FlagSet, p *float64, usage string) {
	fl.Var(bakeScale{p}, "bake-scale", usage+"; allowed: more than 0, at most 1")
}

// ParseQuantity reads a finite number ≥ 0 that fits the float64 AWS's
// JSON APIs carry (no NaN, no ±Inf, no overflow), e.g. a quota value.
func ParseQuantity(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%q is out of range: a finite number ≥ 0", s)
		}
		return 0, fmt.Errorf("%q is not a number: a finite number ≥ 0", s)
	}
	if !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: a finite number ≥ 0", s)
	}
	return v, nil
}
