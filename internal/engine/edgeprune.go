package engine

import (
	"context"
	"fmt"
	"sort"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/edgeversions"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router/component"
)

// After a router up succeeded, the edge function's old versions are
// deleted (internal/edgeversions): every routing-table change publishes a
// version of up to ~19 MiB and Lambda keeps each one against the Region's
// code storage quota. Which versions something still runs is read from the
// deployed state — every distribution's Lambda@Edge associations, primary
// and staging — and from the run's own traffic split (the version a canary
// pinned the primary to, its rollback target); never from names. The
// prune reaches Lambda as every other direct AWS call does: through the
// cloud bundle (AWS, or the simulator's Lambda API), in us-east-1 of the
// router's account. What it could not delete (CloudFront's replicas last
// hours) is a note of the run and is tried again on the next router
// change; it never fails the change.

const lambdaFunctionType = "aws:lambda/function:Function"

// edgeUse is what the router's deployed state says about its edge
// functions: each published function (name) and the versions the
// distributions and the run reference.
type edgeUse struct {
	functions []string
	refs      map[string][]edgeversions.Reference // function ARN → references
	arnOf     map[string]string                   // function name → ARN
}

// edgeUseOf reads the router's deployed resources.
func edgeUseOf(d *deployment, req stackrun.Request) edgeUse {
	u := edgeUse{refs: map[string][]edgeversions.Reference{}, arnOf: map[string]string{}}
	if d == nil {
		return u
	}
	primary := component.PrimaryDistributionName(fleet.RouterStack)
	for _, r := range d.Resources {
		if r.Type != lambdaFunctionType {
			continue
		}
		if pub, _ := r.Inputs["publish"].(bool); !pub {
			continue
		}
		name, _ := r.Outputs["name"].(string)
		arn, _ := r.Outputs["arn"].(string)
		if name == "" || arn == "" {
			continue
		}
		u.functions = append(u.functions, name)
		u.arnOf[name] = arn
	}
	sort.Strings(u.functions)
	for _, r := range d.Resources {
		if r.Type != distributionType {
			continue
		}
		by := "staging distribution " + urnName(r.URN)
		if urnName(r.URN) == primary {
			by = "primary distribution " + urnName(r.URN)
		}
		if r.ID != "" {
			by += " (" + r.ID + ")"
		}
		for _, a := range lambdaArns(r.Outputs) {
			for _, fn := range u.functions {
				if base := u.arnOf[fn]; len(a) > len(base) && a[:len(base)+1] == base+":" {
					u.refs[base] = append(u.refs[base], edgeversions.Reference{ARN: a, By: by})
				}
			}
		}
	}
	if t := req.Inputs.Router; t != nil && t.PrimaryFunctionArn != "" {
		for _, fn := range u.functions {
			if base := u.arnOf[fn]; len(t.PrimaryFunctionArn) > len(base) && t.PrimaryFunctionArn[:len(base)+1] == base+":" {
				u.refs[base] = append(u.refs[base], edgeversions.Reference{ARN: t.PrimaryFunctionArn, By: "the canary's primary (its rollback target)"})
			}
		}
	}
	return u
}

// lambdaArns are the Lambda@Edge ARNs of a distribution's cache behaviors
// (the default and every ordered one).
func lambdaArns(outputs map[string]any) []string {
	var out []string
	behaviors := []any{outputs["defaultCacheBehavior"]}
	if ob, ok := outputs["orderedCacheBehaviors"].([]any); ok {
		behaviors = append(behaviors, ob...)
	}
	for _, b := range behaviors {
		bm, ok := b.(map[string]any)
		if !ok {
			continue
		}
		as, _ := bm["lambdaFunctionAssociations"].([]any)
		for _, a := range as {
			if am, ok := a.(map[string]any); ok {
				if s, ok := am["lambdaArn"].(string); ok && s != "" {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// pruneEdgeVersions deletes the router's unused edge function versions
// after a successful router up and returns the run's notes about it.
func (e *Engine) pruneEdgeVersions(ctx context.Context, req stackrun.Request) []string {
	f := e.opts.Fleet
	if f == nil || f.Router == nil {
		return nil
	}
	d, err := e.deployed(ctx, fleet.RouterStack)
	if err != nil {
		return []string{fmt.Sprintf("old edge function versions were not pruned (tried again on the next router change): reading the router's state: %v", err)}
	}
	u := edgeUseOf(d, req)
	if len(u.functions) == 0 {
		return nil
	}
	t, err := e.cloud.TargetOf(ctx, f.Router.Access().InRegion(component.EdgeRegion))
	var api *awsapi.Lambda
	if err == nil {
		api, err = awsapi.NewLambda(ctx, t)
	}
	if err != nil {
		return []string{fmt.Sprintf("old edge function versions were not pruned (tried again on the next router change): %v", err)}
	}
	var notes []string
	for _, fn := range u.functions {
		rep := edgeversions.Prune(ctx, api, edgeversions.Options{Function: fn, References: u.refs[u.arnOf[fn]], Keep: f.Router.EdgeVersionsKept})
		notes = append(notes, rep.Notes()...)
	}
	return notes
}
