package awsmodel

import (
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// headerRule is a listener rule matching X-Cell-Id and X-Origin-Verify
// with the given origin values.
func headerRule(origin ...any) resource.PropertyMap {
	return resource.PropertyMap{
		"listenerArn": pv("arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/cell-a-alb/0123456789abcdef/fedcba9876543210"),
		"actions":     pv([]any{map[string]any{"type": "forward", "targetGroupArn": "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/tg/0123456789abcdef"}}),
		"conditions": pv([]any{
			map[string]any{"httpHeader": map[string]any{"httpHeaderName": "X-Cell-Id", "values": []any{"cell-a"}}},
			map[string]any{"httpHeader": map[string]any{"httpHeaderName": "X-Origin-Verify", "values": origin}},
		}),
	}
}

// elbConditionCases: a rotating cell (two origin values) is accepted; a
// third and fourth value, five in the rule or a value longer than 128
// characters are refused as AWS refuses them.
func elbConditionCases() []ruleCase {
	const id = "elbv2.rule-condition-values"
	long := strings.Repeat("x", 129)
	return []ruleCase{
		{rule: id, typ: tListenerRule, bad: headerRule("a", "b", "c", "d"), ok: headerRule("current", "next"), contains: "at most '3' values"},
		{rule: id, typ: tListenerRule, bad: func() resource.PropertyMap {
			m := headerRule("a", "b", "c")
			conds := m["conditions"].ArrayValue()
			conds = append(conds, pv(map[string]any{"httpHeader": map[string]any{"httpHeaderName": "X-Other", "values": []any{"x", "y", "z"}}}))
			m["conditions"] = resource.NewArrayProperty(conds)
			return m
		}(), ok: headerRule("a", "b", "c"), contains: "only have '5' condition values"},
		{rule: id, typ: tListenerRule, bad: headerRule(long), ok: headerRule(strings.Repeat("x", 128)), contains: "at most 128 characters"},
	}
}
