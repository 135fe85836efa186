// Package canary is the data model of a router canary: how the router
// stack splits viewer traffic between its primary CloudFront distribution
// and its continuous-deployment staging distribution, and which edge
// function version each one runs. It imports nothing heavy, so the run
// request (internal/stackrun), the fleet model, the router component and
// the AWS rules (internal/awsmodel, through internal/awsfacts) share one
// definition of every limit.
package canary

import (
	"fmt"
	"strings"

	"github.com/cellctl/cellctl/internal/awsfacts"
)

// Phase is where a router canary stands.
type Phase string

const (
	// Stable: no canary. The staging distribution runs what the primary
	// runs and the continuous deployment policy is disabled, so the
	// primary serves every request.
	Stable Phase = "stable"
	// Header: the staging distribution runs the candidate version and
	// receives only requests carrying Header: HeaderValue (a smoke test).
	Header Phase = "header"
	// Weight: the staging distribution runs the candidate version and
	// receives Weight of all viewer requests.
	Weight Phase = "weight"
)

// AWS's limits on a continuous deployment policy (internal/awsfacts holds
// them with their sources; the simulator's rules read the same).
const (
	MaxWeight    = awsfacts.CloudFrontCDMaxWeight
	HeaderPrefix = awsfacts.CloudFrontCDHeaderPrefix
	MinStickyTTL = awsfacts.CloudFrontCDMinStickyTTL
	MaxStickyTTL = awsfacts.CloudFrontCDMaxStickyTTL
)

// DefaultHeader is the header cellctl's smoke phase routes on.
const DefaultHeader = HeaderPrefix + "cellctl-canary"

// Traffic is the router stack's traffic split for one run: a program
// input (stackrun.Inputs.Router), never stack configuration.
type Traffic struct {
	Phase Phase `json:"phase"`
	// PrimaryFunctionArn is the qualified ARN of the edge function version
	// the primary distribution runs. Empty: the function's newest version
	// (a first deploy, or a promotion). Required in the Header and Weight
	// phases: the primary keeps what it ran before the canary.
	PrimaryFunctionArn string `json:"primaryFunctionArn,omitempty"`
	// HeaderValue is the value of DefaultHeader that selects the staging
	// distribution in the Header phase.
	HeaderValue string `json:"headerValue,omitempty"`
	// Weight is the share of viewer requests (0–0.15) the staging
	// distribution receives in the Weight phase.
	Weight float64 `json:"weight,omitempty"`
	// IdleTTL and MaximumTTL (seconds) keep a viewer on one distribution
	// for a session in the Weight phase; 0: no session stickiness.
	IdleTTL    int `json:"idleTtl,omitempty"`
	MaximumTTL int `json:"maximumTtl,omitempty"`
}

// Validate checks t against AWS's limits and the phases' needs, so a bad
// value is refused before the engine runs.
func (t Traffic) Validate() error {
	switch t.Phase {
	case Stable:
		return nil
	case Header:
		if t.PrimaryFunctionArn == "" {
			return fmt.Errorf("router canary: the header phase needs the primary's current function version")
		}
		if t.HeaderValue == "" || strings.ContainsAny(t.HeaderValue, " \t\r\n") {
			return fmt.Errorf("router canary: header value %q: a non-empty token without spaces", t.HeaderValue)
		}
		return nil
	case Weight:
		if t.PrimaryFunctionArn == "" {
			return fmt.Errorf("router canary: the weight phase needs the primary's current function version")
		}
		if err := CheckWeight(t.Weight); err != nil {
			return err
		}
		return CheckStickiness(t.IdleTTL, t.MaximumTTL)
	}
	return fmt.Errorf("router canary: unknown phase %q (allowed: stable, header, weight)", t.Phase)
}

// CheckWeight refuses a staging weight outside (0, MaxWeight].
func CheckWeight(w float64) error {
	if !(w > 0 && w <= MaxWeight) {
		return fmt.Errorf("router canary: weight %g: CloudFront sends at most %g (15%%) of requests to a staging distribution; allowed: more than 0, at most %g", w, MaxWeight, MaxWeight)
	}
	return nil
}

// CheckStickiness refuses session TTLs CloudFront does not accept (both 0
// means no stickiness).
func CheckStickiness(idle, maximum int) error {
	if idle == 0 && maximum == 0 {
		return nil
	}
	for _, v := range []struct {
		name string
		v    int
	}{{"idle TTL", idle}, {"maximum TTL", maximum}} {
		if v.v < MinStickyTTL || v.v > MaxStickyTTL {
			return fmt.Errorf("router canary: session stickiness %s %ds: allowed %d–%d seconds", v.name, v.v, MinStickyTTL, MaxStickyTTL)
		}
	}
	if idle > maximum {
		return fmt.Errorf("router canary: session stickiness idle TTL %ds exceeds the maximum TTL %ds", idle, maximum)
	}
	return nil
}
