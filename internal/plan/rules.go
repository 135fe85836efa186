package plan

import (
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
)

// Rules runs every AWS rule internal/awsmodel knows over every resource of
// the report, quotas per scope included (what `cellctl plan --strict`
// reports). The mocks already refused any resource an API rule rejects
// while rendering; this adds what no single resource shows: quota sums,
// rules AWS only enforces later (a 502 at request time, a failed next up),
// and AWS types the model does not know, which no rule could have checked.
//
// Quotas are judged over the whole report, never per stack: AWS counts a
// region's VPCs or Elastic IPs over every cell in it (and the default
// VPC), so nine single-NAT cells in one region need nine Elastic IPs even
// though each stack alone needs one. Audit's own per-stack quota sums are
// therefore replaced by JudgeQuotas' (hard limits only; adjustable
// defaults become the increases JudgeQuotas lists).
func (r *Report) Rules() []awsmodel.Violation {
	var out []awsmodel.Violation
	for _, s := range r.Stacks {
		for _, v := range awsmodel.Audit(auditResources(s, r.at)) {
			if !strings.HasPrefix(v.Rule, "quota.") {
				out = append(out, v)
			}
		}
	}
	return append(out, r.JudgeQuotas().Violations...)
}

// auditResources turns a rendered stack into audit input, each resource in
// the environment of the provider that creates it (the router's
// us-east-1 provider, with its default tags).
func auditResources(s *Stack, at time.Time) []awsmodel.AuditResource {
	base := awsmodel.Env{Partition: "aws", Account: renderAccount(s.Account), Region: s.Region}
	envs := map[string]awsmodel.Env{}
	for _, r := range s.recorded {
		if r.Type == awsmodel.ProviderType {
			if env, err := awsmodel.ProviderEnv(r.Inputs, base); err == nil {
				envs[r.URN] = env
			}
		}
	}
	var out []awsmodel.AuditResource
	for _, r := range s.recorded {
		if !r.Custom {
			continue
		}
		env := base
		if i := strings.LastIndex(r.Provider, "::"); i >= 0 {
			if e, ok := envs[r.Provider[:i]]; ok {
				env = e
			}
		}
		outputs := r.Outputs
		if outputs == nil {
			outputs = resource.PropertyMap{}
		}
		out = append(out, awsmodel.AuditResource{Stack: s.Name, Type: r.Type, Name: r.Name, ID: r.ID,
			Inputs: r.Inputs, Outputs: outputs, Env: env, At: at})
	}
	return out
}
