package awsmodel

import (
	"fmt"
	"strings"
)

// Rules about combinations of inputs, found by the second judge
// (internal/motojudge: moto refused each where awsmodel accepted); each
// cites AWS's document, moto being no authority.
func init() {
	rules = append(rules,
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
