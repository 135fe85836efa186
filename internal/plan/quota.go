package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/offline"
)

// Demand is what some rendered stacks need of one quota in one of its
// scope values: a region, a zone, a VPC, a security group and direction,
// or the account.
type Demand struct {
	// Code is the quota's code ("ec2/L-0263D0A3"; inbound and outbound
	// rules of a security group are "…#egress" for the outbound half).
	Code string `json:"code"`
	// Scope is the scope value AWS counts the quota in: the region name
	// for a per-region quota, the zone, the VPC id, "account"….
	Scope string `json:"scope"`
	// Region is the region the scope lies in ("account" for account-wide
	// quotas).
	Region string `json:"region"`
	// Account is the account the stacks live in ("" = the caller's own):
	// quotas stop at the account, so stacks of different accounts never
	// count together.
	Account string  `json:"account,omitempty"`
	Amount  float64 `json:"amount"`
	// Stacks are the stacks whose resources consume it, sorted.
	Stacks []string `json:"stacks"`
}

// QuotaDemand sums what the stacks' resources consume of every quota
// internal/awsmodel knows, per scope value, as AWS counts it: every
// stack's resources in one account and region count together against
// that region's value, and every stack's of one account against an
// account-wide quota
// (awsmodel.QuotaUsage decides what each resource consumes and where).
// It is the one arithmetic of "what do these cells need": `plan --strict`
// judges the whole fleet with it, and the quota audit and `up`'s quota
// preflight count a cell, or the cells about to be created, with it.
func QuotaDemand(stacks []*Stack) []Demand {
	var all []*offline.Resource
	region := map[*offline.Resource]*Stack{}
	for _, s := range stacks {
		for _, r := range s.recorded {
			all = append(all, r)
			region[r] = s
		}
	}
	cloud := recordedCloud(all)
	type key struct{ code, scope, account string }
	sums := map[key]*Demand{}
	var order []key
	for _, r := range all {
		if !r.Custom {
			continue
		}
		s := region[r]
		env := awsmodel.Env{Partition: "aws", Account: renderAccount(s.Account), Region: s.Region}
		for _, u := range awsmodel.QuotaUsage(r.Type, env, r.Outputs, cloud) {
			k := key{u.Code, u.Scope, s.Account}
			d := sums[k]
			if d == nil {
				d = &Demand{Code: u.Code, Scope: u.Scope, Region: s.Region, Account: s.Account}
				if u.Scope == "account" {
					d.Region = "account"
				}
				sums[k] = d
				order = append(order, k)
			}
			d.Amount += u.Amount
			if !containsString(d.Stacks, s.Name) {
				d.Stacks = append(d.Stacks, s.Name)
			}
		}
	}
	out := make([]Demand, 0, len(order))
	for _, k := range order {
		d := *sums[k]
		sort.Strings(d.Stacks)
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Code != out[j].Code {
			return out[i].Code < out[j].Code
		}
		if out[i].Account != out[j].Account {
			return out[i].Account < out[j].Account
		}
		return out[i].Scope < out[j].Scope
	})
	return out
}

// DefaultVPC is what the default VPC AWS creates in every region of an
// account consumes: a VPC (it counts toward VPCs per Region) and its
// internet gateway. An account that deleted its default VPC has one more
// of each; counting it is the fail-closed side. (Amazon VPC User Guide,
// "Default VPCs": every account has a default VPC with an internet
// gateway in each Region; "Amazon VPC quotas": VPCs per Region, Internet
// gateways per Region.)
var DefaultVPC = []awsfacts.Quota{awsfacts.VPCsPerRegion, awsfacts.InternetGatewaysPerRegion}

// QuotaIncrease is an adjustable quota the stacks need above AWS's
// default: a request, not a violation (an account may already have it).
type QuotaIncrease struct {
	Code    string   `json:"code"`
	Name    string   `json:"name"`
	Region  string   `json:"region"`
	Account string   `json:"account,omitempty"`
	Scope   string   `json:"scope"`
	Default float64  `json:"default"`
	Needed  float64  `json:"needed"`
	Stacks  []string `json:"stacks"`
	Request string   `json:"request"`
}

func (q QuotaIncrease) String() string {
	in := q.Scope
	if q.Account != "" {
		in = "account " + q.Account + ", " + q.Scope
	}
	return fmt.Sprintf("%s (%s) in %s: needs %g, AWS's default is %g: %s", q.Code, q.Name, in, q.Needed, q.Default, q.Request)
}

// QuotaJudgement is the offline verdict of the whole report's quota
// demand against AWS's default values.
type QuotaJudgement struct {
	// Violations: hard limits (not adjustable) the fleet passes.
	Violations []awsmodel.Violation
	// Increases: adjustable quotas the fleet needs above the default,
	// with the request that raises each.
	Increases []QuotaIncrease
}

const quotaSumDoc = "Service Quotas (each quota's default and Adjustable column); Amazon VPC User Guide, Default VPCs (counted in VPCs and internet gateways per Region)"

// JudgeQuotas sums the report's demand per region and account
// (QuotaDemand, plus the default VPC of every region with a stack) and
// compares it with AWS's defaults. Passing a hard limit is a violation;
// passing an adjustable default is a quota increase the fleet needs.
func (r *Report) JudgeQuotas() QuotaJudgement {
	demand := QuotaDemand(r.Stacks)
	// Every region of every account the stacks live in has its default
	// VPC.
	type place struct{ account, region string }
	places := map[place]bool{}
	for _, s := range r.Stacks {
		places[place{s.Account, s.Region}] = true
	}
	for p := range places {
		for _, q := range DefaultVPC {
			found := false
			for i := range demand {
				if demand[i].Code == q.Code && demand[i].Scope == p.region && demand[i].Account == p.account {
					demand[i].Amount++
					demand[i].Stacks = append(demand[i].Stacks, "default VPC")
					found = true
				}
			}
			if !found {
				demand = append(demand, Demand{Code: q.Code, Scope: p.region, Region: p.region, Account: p.account, Amount: 1, Stacks: []string{"default VPC"}})
			}
		}
	}
	// The router's edge function holds its kept versions' code in
	// us-east-1's Lambda code storage.
	if d, ok := r.edgeStorageDemand(); ok {
		demand = append(demand, d)
	}
	sort.SliceStable(demand, func(i, j int) bool {
		if demand[i].Code != demand[j].Code {
			return demand[i].Code < demand[j].Code
		}
		if demand[i].Account != demand[j].Account {
			return demand[i].Account < demand[j].Account
		}
		return demand[i].Scope < demand[j].Scope
	})
	var j QuotaJudgement
	for _, d := range demand {
		q, ok := awsmodel.QuotaDefByCode(strings.TrimSuffix(d.Code, "#egress"))
		if !ok || d.Amount <= q.Default {
			continue
		}
		if q.Adjustable {
			region := d.Region
			if region == "account" {
				region = "us-east-1"
			}
			j.Increases = append(j.Increases, QuotaIncrease{Code: q.Code, Name: q.Name, Region: d.Region, Account: d.Account, Scope: d.Scope, Default: q.Default, Needed: d.Amount, Stacks: d.Stacks,
				Request: fmt.Sprintf("aws service-quotas request-service-quota-increase --region %s --service-code %s --quota-code %s --desired-value %g",
					region, q.ServiceCode(), q.QuotaCode(), d.Amount)})
			continue
		}
		stack := ""
		if len(d.Stacks) > 0 {
			stack = d.Stacks[0]
		}
		j.Violations = append(j.Violations, awsmodel.Violation{Rule: "quota." + q.Code, Doc: quotaSumDoc, Stack: stack, Type: q.Type, Name: d.Scope, Code: q.ErrorCode,
			Message: fmt.Sprintf("%s: %s needs %g (stacks %s) and the limit %g is not adjustable (%s)", q.Name, scopeIn(d), d.Amount, strings.Join(d.Stacks, ", "), q.Default, q.ErrorMessage)})
	}
	return j
}

// scopeIn names a demand's scope with its account when it has one.
func scopeIn(d Demand) string {
	if d.Account == "" {
		return d.Scope
	}
	return "account " + d.Account + ", " + d.Scope
}

// recordedCloud answers awsmodel's lookups (a NAT gateway's subnet, a
// listener's load balancer) over rendered resources.
type recorded map[string]*offline.Resource

func recordedCloud(rs []*offline.Resource) recorded {
	c := recorded{}
	for _, r := range rs {
		if r.ID != "" {
			c[r.ID] = r
		}
		if arn, ok := r.Outputs["arn"]; ok && arn.IsString() {
			c[arn.StringValue()] = r
		}
	}
	return c
}

func (c recorded) Lookup(ref string) (string, resource.PropertyMap, bool) {
	if r, ok := c[ref]; ok {
		return r.Type, r.Outputs, true
	}
	return "", nil, false
}

func (c recorded) Next(string) int { return 1 }

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
