package quota

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/plan"
)

// costFunc is what one rendered cell consumes of the quota code.
type costFunc func(code string, scope Scope, cell *plan.Stack) (float64, error)

// Cost is what a cell consumes of one quota, counted from its rendered
// plan (the cell program under Pulumi mocks, with the cell's own config).
func (e Entry) Cost(cell *plan.Stack) (float64, error) {
	if e.cost == nil {
		return 0, nil
	}
	return e.cost(e.Code, e.Scope, cell)
}

// recordedCloud answers lookups from a rendered stack: a Fargate
// service's task definition, for fargateCost.
type recordedCloud struct{ byID map[string]*offline.Resource }

func newRecordedCloud(rs []*offline.Resource) *recordedCloud {
	c := &recordedCloud{byID: map[string]*offline.Resource{}}
	for _, r := range rs {
		if r.ID != "" {
			c.byID[r.ID] = r
		}
		if arn, ok := r.Outputs["arn"]; ok && arn.IsString() {
			c.byID[arn.StringValue()] = r
		}
	}
	return c
}

func (c *recordedCloud) Lookup(ref string) (string, resource.PropertyMap, bool) {
	if r, ok := c.byID[ref]; ok {
		return r.Type, r.Outputs, true
	}
	return "", nil, false
}

func (c *recordedCloud) Next(string) int { return 1 }

// modelCost counts a quota with awsmodel's rules over the rendered
// resources: summed over the region or account, or — for a per-zone or
// per-group quota — the fullest zone or group of the cell (inbound and
// outbound rules are separate values of the same quota).
//
// The counting is plan.QuotaDemand's, the one arithmetic `plan --strict`
// sums a whole region with, so the audit, up's preflight and the offline
// plan cannot disagree on what a cell needs.
func modelCost(code string, scope Scope, cell *plan.Stack) (float64, error) {
	byKey := map[string]float64{}
	for _, d := range plan.QuotaDemand([]*plan.Stack{cell}) {
		if d.Code == code || d.Code == code+"#egress" {
			byKey[d.Scope] += d.Amount
		}
	}
	total, most := 0.0, 0.0
	for k, n := range byKey {
		if strings.HasSuffix(k, "?") && scope == ScopeAZ {
			return 0, fmt.Errorf("%s: a NAT gateway's zone could not be told from the plan", cell.Name)
		}
		total += n
		most = max(most, n)
	}
	if scope == ScopeAZ || scope == ScopeGroup {
		return most, nil
	}
	return total, nil
}

// typeCost counts the custom resources of a type.
func typeCost(typ string) costFunc {
	return func(_ string, _ Scope, cell *plan.Stack) (float64, error) {
		n := 0
		for _, r := range cell.Recorded() {
			if r.Custom && r.Type == typ {
				n++
			}
		}
		return float64(n), nil
	}
}

// fargateCost is the vCPUs a cell's Fargate services run at the peak of a
// deployment: desiredCount × the deployment's maximum percent (ECS
// default 200: a rolling deployment starts the new tasks before it stops
// the old) × the task definition's cpu units / 1024.
func fargateCost(_ string, _ Scope, cell *plan.Stack) (float64, error) {
	rs := cell.Recorded()
	cloud := newRecordedCloud(rs)
	total := 0.0
	for _, r := range rs {
		if !r.Custom || r.Type != "aws:ecs/service:Service" {
			continue
		}
		if lt := r.Inputs["launchType"]; lt.IsString() && lt.StringValue() != "FARGATE" {
			continue
		}
		desired := 1.0 // the ECS default
		if d := r.Inputs["desiredCount"]; d.IsNumber() {
			desired = d.NumberValue()
		}
		peak := 200.0
		if p := r.Inputs["deploymentMaximumPercent"]; p.IsNumber() {
			peak = p.NumberValue()
		}
		ref := r.Inputs["taskDefinition"]
		if ref.IsComputed() || ref.IsOutput() {
			ref = r.Outputs["taskDefinition"]
		}
		typ, td, ok := cloud.Lookup(stringOf(ref))
		if !ok || typ != "aws:ecs/taskDefinition:TaskDefinition" {
			return 0, fmt.Errorf("%s: service %s: its task definition is not in the plan", cell.Name, r.Name)
		}
		cpu, err := strconv.ParseFloat(stringOf(td["cpu"]), 64)
		if err != nil {
			return 0, fmt.Errorf("%s: task definition cpu %q: %w", cell.Name, stringOf(td["cpu"]), err)
		}
		total += desired * peak / 100 * cpu / 1024
	}
	return total, nil
}

func stringOf(v resource.PropertyValue) string {
	switch {
	case v.IsString():
		return v.StringValue()
	case v.IsSecret():
		return stringOf(v.SecretValue().Element)
	case v.IsOutput():
		return stringOf(v.OutputValue().Element)
	}
	return ""
}
