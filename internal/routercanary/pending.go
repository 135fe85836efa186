package routercanary

import (
	"fmt"
	"time"

	"github.com/cellctl/cellctl/router/canary"
	"github.com/cellctl/cellctl/waves/executor"
)

// Pending is a router canary nobody finished, as `cellctl status` and
// `cellctl health` show it: viewers may reach the staging distribution
// with nothing watching.
type Pending struct {
	// Record is the record it is in ("" when the deployed router is in a
	// canary phase no record accounts for: an older cellctl's, or a run
	// killed before it saved its record).
	Record string `json:"record,omitempty"`
	Phase  string `json:"phase"`
	// Weight is the share of all viewers the staging distribution
	// receives (0 in the smoke phase: only requests with the header).
	Weight float64 `json:"weight"`
	// Since is when the phase began (zero: unknown).
	Since     time.Time `json:"since,omitzero"`
	Primary   string    `json:"primaryFunctionArn,omitempty"`
	Candidate string    `json:"candidateFunctionArn,omitempty"`
	// PrimaryTable is the routing table version the primary serves (0:
	// unknown); CandidateTable the one the staging distribution carries.
	PrimaryTable   int64 `json:"primaryTableVersion,omitempty"`
	CandidateTable int64 `json:"candidateTableVersion,omitempty"`
	// Next is the command that finishes it.
	Next string `json:"next"`
}

func (p *Pending) String() string {
	share := "requests with the smoke header"
	if p.Weight > 0 {
		share = fmt.Sprintf("%g%% of viewers", 100*p.Weight)
	}
	since := ""
	if !p.Since.IsZero() {
		since = " since " + p.Since.UTC().Format(time.RFC3339)
	}
	who := "an unrecorded router canary"
	if p.Record != "" {
		who = "router canary " + p.Record
	}
	return fmt.Sprintf("%s is unfinished: %s phase%s, %s on the staging distribution (%s); %s", who, p.Phase, since, share, p.Candidate, p.Next)
}

// Unfinished is the router canary nobody finished: the newest canary of
// any record (a canary's own, or a rollout's router step) when it is
// unfinished — a newer one supersedes it —, else the deployed router's own outputs when they show a canary
// phase (outs: the router's deployed outputs; nil: not read). nil: none.
func Unfinished(recs []*executor.Record, outs map[string]any) *Pending {
	if rec := latest(recs); rec != nil && rec.Canary.Unfinished() {
		cr := rec.Canary
		p := &Pending{Record: rec.ID, Phase: cr.Phase, Since: cr.PhaseSince, Primary: cr.Primary, Candidate: cr.Candidate,
			PrimaryTable: cr.PrimaryTable, CandidateTable: cr.CandidateTable,
			Next: "run `cellctl router canary` to continue it (or finish its revert), or `cellctl router canary --discard`"}
		if rec.IsRollout() {
			p.Next = fmt.Sprintf("rerun the deploy of rollout %s to continue it, or `cellctl router canary --discard`", rec.ID)
		}
		switch cr.Phase {
		case executor.CanaryWeight, executor.CanaryPromoting:
			p.Weight = cr.Weight
		}
		return p
	}
	phase, _ := outs["canaryPhase"].(string)
	if phase == string(canary.Header) || phase == string(canary.Weight) {
		return &Pending{Phase: phase, Primary: primaryOf(outs), Candidate: stringOf(outs, "stagingFunctionArn"), CandidateTable: tableVersion(outs),
			Next: "run `cellctl router canary --discard` to put the staging distribution back on the primary's version (or `cellctl router canary` to canary it again)"}
	}
	return nil
}

// PrimaryTable is the routing table version the router's primary
// distribution serves: the router's tableVersion output, except while a
// canary is unfinished — then that output is the candidate's, and the
// primary's is the one the canary recorded (known false: not recorded).
func PrimaryTable(recs []*executor.Record, outs map[string]any) (version int64, known bool) {
	if p := Unfinished(recs, outs); p != nil {
		return p.PrimaryTable, p.PrimaryTable > 0
	}
	if _, ok := outs["tableVersion"].(float64); !ok {
		return 0, false
	}
	return tableVersion(outs), true
}

// latest is the record whose canary changed last (nil: no canary).
func latest(recs []*executor.Record) *executor.Record {
	var out *executor.Record
	for _, r := range recs {
		if r.Canary != nil && (out == nil || r.Updated.After(out.Updated)) {
			out = r
		}
	}
	return out
}
