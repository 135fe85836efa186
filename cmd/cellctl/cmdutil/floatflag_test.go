package cmdutil

import (
	"testing"

	"github.com/spf13/pflag"
)

// Every bad --bake-scale is refused when the flag is parsed (exit 1 before
// anything runs): 0 and NaN were accepted and then the full bake ran.
func TestBakeScaleRefusedOutsideZeroToOne(t *testing.T) {
	for _, v := range []string{"0", "-0", "-0.5", "1.01", "NaN", "nan", "Inf", "+Inf", "-Inf", "1e400", "-1e400", "", "half"} {
		fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var got float64
		BakeScaleVar(fl, &got, "scale")
		if err := fl.Parse([]string{"--bake-scale=" + v}); err == nil {
			t.Errorf("--bake-scale %q accepted as %g", v, got)
		}
	}
	for _, v := range []string{"1", "0.5", "1e-3", "0.002"} {
		fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var got float64
		BakeScaleVar(fl, &got, "scale")
		if err := fl.Parse([]string{"--bake-scale", v}); err != nil || got <= 0 || got > 1 {
			t.Errorf("--bake-scale %s: %g %v", v, got, err)
		}
	}
}

func TestQuantityRefusesWhatJSONCannotCarry(t *testing.T) {
	for _, v := range []string{"-1", "NaN", "Inf", "-Inf", "1e400", "x"} {
		if q, err := ParseQuantity(v); err == nil {
			t.Errorf("%q accepted as %g", v, q)
		}
	}
	for _, v := range []string{"0", "10", "1e20"} {
		if _, err := ParseQuantity(v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
}
