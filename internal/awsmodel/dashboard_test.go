package awsmodel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

const goodDashboard = `{"widgets":[
 {"type":"metric","x":0,"y":0,"width":12,"height":6,"properties":{"region":"us-east-1","title":"5xx","metrics":[
   ["AWS/ApplicationELB","RequestCount","LoadBalancer","app/cell-a/1",{"id":"ra","stat":"Sum","visible":false}],
   [{"expression":"MAX([ra])","id":"worst","label":"worst cell"}]]}},
 {"type":"alarm","x":12,"y":0,"width":12,"height":6,"properties":{"title":"alarms","alarms":["arn:aws:cloudwatch:us-east-1:123456789012:alarm:cellctl-cell-a-5xx-rate"]}},
 {"type":"text","width":24,"height":2,"properties":{"markdown":"hi"}}]}`

func dashboardSample() resource.PropertyMap {
	return resource.PropertyMap{"dashboardName": pv("cellctl-fleet"), "dashboardBody": pv(goodDashboard)}
}

func dashboardCases() []ruleCase {
	bad := func(body string) resource.PropertyMap {
		return resource.PropertyMap{"dashboardName": pv("d"), "dashboardBody": pv(body)}
	}
	return []ruleCase{
		{rule: "cloudwatch.dashboard-body", typ: tDashboard, bad: bad(`{"start":"-PT6H"}`), ok: dashboardSample(), contains: "Should have required property 'widgets'"},
		{rule: "cloudwatch.dashboard-body", typ: tDashboard, bad: bad(strings.Replace(goodDashboard, `"width":12`, `"width":25`, 1)), contains: `/widgets/0/width`},
	}
}

// Each body rule the fleet dashboard relies on, refused as PutDashboard
// refuses it, and the good body accepted.
func TestDashboardBodyRules(t *testing.T) {
	if errs := ValidateDashboardBody(goodDashboard); len(errs) != 0 {
		t.Fatalf("a valid body refused: %v", errs)
	}
	if errs := ValidateDashboardBody(`{"widgets":[]}`); len(errs) != 0 {
		t.Errorf("an empty widgets array is allowed: %v", errs)
	}
	many := make([]string, MaxDashboardWidgets+1)
	for i := range many {
		many[i] = `{"type":"text","properties":{"markdown":"x"}}`
	}
	alarms := make([]string, MaxAlarmWidgetAlarms+1)
	for i := range alarms {
		alarms[i] = fmt.Sprintf(`"arn:aws:cloudwatch:us-east-1:123456789012:alarm:a%d"`, i)
	}
	graph := make([]string, MaxGraphMetrics+1)
	for i := range graph {
		graph[i] = fmt.Sprintf(`["AWS/ApplicationELB","RequestCount","LoadBalancer","app/a/%d",{"id":"m%d","visible":false}]`, i, i)
	}
	for body, want := range map[string]string{
		`{"widgets":[{"type":"metric","width":12,"height":6,"properties":{"region":"us-east-1","metrics":[` + strings.Join(graph, ",") + `]}}]}`: "/widgets/0/properties/metrics",
		`not json`:       "valid JSON object",
		`{"widgets":{}}`: `"/widgets"`,
		`{"widgets":[` + strings.Join(many, ",") + `]}`:                                                 "more than 500 items",
		strings.Replace(goodDashboard, `"height":6`, `"height":1001`, 1):                                "/widgets/0/height",
		strings.Replace(goodDashboard, `"x":12`, `"x":24`, 1):                                           "/widgets/1/x",
		strings.Replace(goodDashboard, `"type":"text"`, `"type":"graph"`, 1):                            "/widgets/2/type",
		strings.Replace(goodDashboard, `"region":"us-east-1",`, ``, 1):                                  "required property 'region'",
		strings.Replace(goodDashboard, `"id":"ra"`, `"id":"Ra"`, 1):                                     `Invalid metric id \"Ra\"`,
		strings.Replace(goodDashboard, `"id":"worst"`, `"id":"ra"`, 1):                                  `Duplicate metric id \"ra\"`,
		strings.Replace(goodDashboard, `"LoadBalancer","app/cell-a/1",`, `"LoadBalancer",`, 1):          "name/value pairs",
		strings.Replace(goodDashboard, `[{"expression"`, `["AWS/X",{"expression"`, 1):                   "An expression takes no namespace",
		strings.Replace(goodDashboard, `"alarms":["arn`, `"alarms":["cellctl-cell-a-5xx-rate","arn`, 1): "Should be an alarm ARN",
		`{"widgets":[{"type":"alarm","properties":{"alarms":[` + strings.Join(alarms, ",") + `]}}]}`:    "1 to 100 alarm ARNs",
		`{"widgets":[{"type":"alarm","properties":{"alarms":[]}}]}`:                                     "1 to 100 alarm ARNs",
		`{"widgets":[{"type":"metric"}]}`:                                                               "required property 'properties'",
	} {
		errs := strings.Join(ValidateDashboardBody(body), "; ")
		if !strings.Contains(errs, want) {
			t.Errorf("body %.80s…: errors %q, want %q", body, errs, want)
		}
	}
}

// The dashboard resource: its id is its name, its ARN global; a bad name
// is refused at Check as the provider refuses it.
func TestDashboardResource(t *testing.T) {
	m := NewMock(Env{})
	id, outs, err := m.NewResource(tDashboard, "fleet", dashboardSample(), "")
	if err != nil {
		t.Fatal(err)
	}
	if id != "cellctl-fleet" || str(outs, "dashboardArn") != "arn:aws:cloudwatch::123456789012:dashboard/cellctl-fleet" {
		t.Errorf("id %s outputs %v", id, outs)
	}
	bad := dashboardSample()
	bad["dashboardName"] = pv("fleet dashboard")
	if _, _, err := m.NewResource(tDashboard, "fleet2", bad, ""); err == nil || !strings.Contains(err.Error(), "dashboardName") {
		t.Errorf("a name with a space: %v", err)
	}
	bad = dashboardSample()
	bad["dashboardBody"] = pv(`{"widgets":[{"type":"metric","properties":{"metrics":[]}}]}`)
	if _, _, err := m.NewResource(tDashboard, "fleet3", bad, ""); err == nil || !strings.Contains(err.Error(), "InvalidParameterInput") {
		t.Errorf("a metric widget without region: %v", err)
	}
}
