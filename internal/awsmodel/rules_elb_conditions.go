package awsmodel

import "fmt"

// ALB listener rule condition limits. A rotation of the origin-verify
// secret depends on them: for its duration each cell's rule matches
// X-Cell-Id (one value) and X-Origin-Verify with two values (the current
// and the next secret), three match evaluations in all.
const (
	maxValuesPerCondition = 3
	maxValuesPerRule      = 5
	maxConditionValueLen  = 128
)

func init() {
	rules = append(rules, Rule{
		ID: "elbv2.rule-condition-values",
		Doc: "Elastic Load Balancing, Application Load Balancers, Condition types for listener rules: Condition basics " +
			"(up to three match evaluations per condition, up to five per rule; each http-header value at most 128 characters) " +
			"https://docs.aws.amazon.com/elasticloadbalancing/latest/application/rule-condition-types.html",
		Code:    "ValidationError",
		applies: types(tListenerRule),
		check: func(r ruleInput) string {
			total := 0
			for i, cond := range objects(r.in, "conditions") {
				n := 0
				for _, k := range []string{"hostHeader", "httpHeader", "httpRequestMethod", "pathPattern", "sourceIp"} {
					if c := object(cond, k); c != nil {
						vals := array(c, "values")
						n += len(vals)
						if k == "httpHeader" {
							for _, v := range vals {
								if v = unwrap(v); v.IsString() && len(v.StringValue()) > maxConditionValueLen {
									return fmt.Sprintf("conditions[%d]: a condition value can be at most %d characters, got %d", i, maxConditionValueLen, len(v.StringValue()))
								}
							}
						}
					}
				}
				n += len(array(cond, "queryStrings"))
				if n > maxValuesPerCondition {
					return fmt.Sprintf("conditions[%d]: a condition can have at most '%d' values, got %d", i, maxValuesPerCondition, n)
				}
				total += n
			}
			if total > maxValuesPerRule {
				return fmt.Sprintf("A rule can only have '%d' condition values, got %d", maxValuesPerRule, total)
			}
			return ""
		},
	})
}
