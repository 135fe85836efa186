package awsmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Rules about combinations of inputs, found by the second judge
// (internal/motojudge: moto refused each where awsmodel accepted, or its
// corpus of inputs AWS documents as refused showed awsmodel accepting one
// moto is silent on); each cites AWS's document, moto being no authority.
func init() {
	rules = append(rules,
		Rule{
			ID: "iam.role-policy-size",
			Doc: "IAM User Guide, IAM and AWS STS quotas: the aggregate size of a role's inline policies cannot exceed 10,240 characters " +
				"(IAM does not count white space; not adjustable); PutRolePolicy refuses with LimitExceeded",
			Code:    "LimitExceeded",
			applies: types(tRolePolicy),
			check: func(r ruleInput) string {
				if !known(r.in, "policy") || !known(r.in, "role") {
					return ""
				}
				role := str(r.in, "role")
				total := policySize(str(r.in, "policy"))
				if lister, ok := r.cloud.(Lister); ok {
					for _, o := range lister.List(tRolePolicy) {
						if o.ID == r.id || str(o.Outputs, "role") != role || (r.name != "" && str(o.Outputs, "name") == str(r.in, "name")) {
							continue
						}
						total += policySize(str(o.Outputs, "policy"))
					}
				}
				if total > 10240 {
					return fmt.Sprintf("Maximum policy size of 10240 bytes exceeded for role %s (its inline policies add up to %d)", role, total)
				}
				return ""
			},
		},
		Rule{
			ID: "placement.two-zones",
			Doc: "Elastic Load Balancing API Reference, CreateLoadBalancer: Subnets (an Application Load Balancer needs subnets from at least two Availability Zones; ValidationError); " +
				"Amazon RDS API Reference, CreateDBSubnetGroup: Errors (DBSubnetGroupDoesNotCoverEnoughAZs: at least two Availability Zones)",
			Code:    "ValidationError",
			applies: types(tLB, tDBSubnetGroup),
			codeOf: func(r ruleInput) string {
				if r.typ == tDBSubnetGroup {
					return "DBSubnetGroupDoesNotCoverEnoughAZs"
				}
				return ""
			},
			check: func(r ruleInput) string {
				prop := "subnetIds"
				if r.typ == tLB {
					if t := str(r.in, "loadBalancerType"); t != "" && t != "application" {
						return ""
					}
					prop = "subnets"
				}
				if v, ok := get(r.in, prop); !ok || v.ContainsUnknowns() {
					return ""
				}
				// Judged only when every subnet is known to the cloud:
				// its zone is what counts.
				zones := map[string]bool{}
				for _, id := range strings_(r.in, prop) {
					typ, sn, ok := r.lookup(id)
					if !ok || typ != tSubnet || !known(sn, "availabilityZone") {
						return ""
					}
					zones[str(sn, "availabilityZone")] = true
				}
				if len(zones) == 0 || len(zones) >= 2 {
					return ""
				}
				names := make([]string, 0, len(zones))
				for z := range zones {
					names = append(names, z)
				}
				sort.Strings(names)
				if r.typ == tDBSubnetGroup {
					return fmt.Sprintf("The DB subnet group doesn't meet Availability Zone (AZ) coverage requirement. Current AZ coverage: %s. Add subnets to cover at least 2 AZs.", strings.Join(names, ", "))
				}
				return "At least two subnets in two different Availability Zones must be specified"
			},
		},
		Rule{
			ID: "elbv2.health-check-timeout",
			Doc: "Elastic Load Balancing API Reference, CreateTargetGroup: HealthCheckTimeoutSeconds and HealthCheckIntervalSeconds " +
				"(the timeout must be less than the interval, as the HealthCheck data type states: \"This value must be less than the Interval value\"; " +
				"CreateTargetGroup refuses otherwise with ValidationError)",
			Code:    "ValidationError",
			applies: types(tTargetGroup),
			check: func(r ruleInput) string {
				// Only both given: pulumi-aws leaves the unset one to
				// AWS's protocol-dependent default.
				hc := object(r.in, "healthCheck")
				timeout, okT := number(hc, "timeout")
				interval, okI := number(hc, "interval")
				if okT && okI && timeout >= interval {
					return fmt.Sprintf("Health check timeout '%g' must be smaller than the interval '%g'", timeout, interval)
				}
				return ""
			},
		},
		Rule{
			ID: "rds.instance-engine",
			Doc: "Amazon RDS API Reference, CreateDBInstance: Engine (an Aurora DB instance takes its DB cluster's engine) " +
				"and Errors (InvalidParameterCombination); Amazon Aurora User Guide, Aurora DB clusters",
			Code:    "InvalidParameterCombination",
			applies: types(tClusterInstance),
			check: func(r ruleInput) string {
				engine := str(r.in, "engine")
				if !known(r.in, "engine") || !known(r.in, "clusterIdentifier") {
					return ""
				}
				typ, cluster, ok := r.lookup(str(r.in, "clusterIdentifier"))
				if !ok || typ != tCluster || !known(cluster, "engine") {
					return ""
				}
				if want := str(cluster, "engine"); !strings.EqualFold(want, engine) {
					return fmt.Sprintf("The engine name requested for your DB instance (%s) doesn't match the engine name of your DB cluster (%s).", engine, want)
				}
				return ""
			},
		},
		Rule{
			ID: "elasticache.user-password-required",
			Doc: "ElastiCache API Reference, CreateUser and AuthenticationMode (Passwords: \"the passwords to use for authentication if Type is set to password\", " +
				"at least one) and Errors (InvalidParameterCombination)",
			Code:    "InvalidParameterCombination",
			applies: types(tCacheUser),
			check: func(r ruleInput) string {
				mode := object(r.in, "authenticationMode")
				if str(mode, "type") != "password" {
					return ""
				}
				if _, ok := get(mode, "passwords"); ok {
					return ""
				}
				if _, ok := get(r.in, "passwords"); ok {
					return ""
				}
				return "A user with authentication type password must have at least one password"
			},
		},
	)
}

// policySize is a policy's size as IAM counts it: without white space
// outside its strings.
func policySize(doc string) int {
	var b bytes.Buffer
	if json.Compact(&b, []byte(doc)) != nil {
		return len(doc)
	}
	return b.Len()
}
