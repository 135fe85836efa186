package awsmodel

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// The CloudWatch dashboard (aws:cloudwatch/dashboard:Dashboard), which the
// router stack builds for the fleet. PutDashboard validates the body and
// refuses the whole dashboard with DashboardInvalidInputError
// (InvalidParameterInput) listing each violation; the rules below are the
// ones the fleet dashboard relies on.
const tDashboard = "aws:cloudwatch/dashboard:Dashboard"

// DashboardDoc cites the body rules.
const DashboardDoc = "Amazon CloudWatch API Reference, Dashboard Body Structure and Syntax " +
	"(https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/CloudWatch-Dashboard-Body-Structure.html)"

// Limits from that document and PutDashboard.
const (
	// "It can include an array of between 0 and 500 widget objects ... The
	// dashboard must include a widgets array, but that array can be empty."
	MaxDashboardWidgets = 500
	// Widgets Array Structure: width "Valid Values: 1–24", height "Valid
	// Values: 1–1000", x "Valid Values: 0–23".
	MaxWidgetWidth  = 24
	MaxWidgetHeight = 1000
	// Properties of an Alarm Status Widget Object: alarms "An array of alarm
	// ARNs to include in the widget. The array can have 1-100 ARNs."
	MaxAlarmWidgetAlarms = 100
	// PutDashboard DashboardName: "Valid characters are A–Z, a–z, 0–9, "-",
	// and "_"", up to 255 characters.
	MaxDashboardNameLen = 255
	// Properties of a Metric Widget Object: metrics "Array of metrics …
	// You can include up to 500 metrics and expressions in one graph"
	// (hidden ones — "visible": false inputs of an expression — count too;
	// CloudWatch User Guide, Graphing metrics: "You can add up to 500
	// metrics to a graph").
	MaxGraphMetrics = 500
)

var (
	reDashboardName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// A metric or expression id in a metrics array: GetMetricData's rule,
	// "The first character must be a lowercase letter" then letters, digits
	// and underscores.
	reMetricID = regexp.MustCompile(`^[a-z][a-zA-Z0-9_]*$`)
	reAlarmARN = regexp.MustCompile(`^arn:[a-z-]+:cloudwatch:[a-z0-9-]+:[0-9]{12}:alarm:.+$`)
	// widget types the document defines.
	widgetTypes = []string{"metric", "text", "log", "alarm", "explorer", "custom"}
)

// ValidateDashboardBody returns AWS's message for every rule the body
// breaks, or nil. The mocks and the simulator refuse such a dashboard; the
// router's tests call it on the body the program generates.
func ValidateDashboardBody(body string) []string {
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		return []string{"The field DashboardBody must be a valid JSON object"}
	}
	var errs []string
	fail := func(path, format string, args ...any) {
		errs = append(errs, fmt.Sprintf(`{"dataPath": %q, "message": %q}`, path, fmt.Sprintf(format, args...)))
	}
	raw, ok := doc["widgets"]
	if !ok {
		fail("", "Should have required property 'widgets'")
		return errs
	}
	widgets, ok := raw.([]any)
	if !ok {
		fail("/widgets", "Should be array")
		return errs
	}
	if len(widgets) > MaxDashboardWidgets {
		fail("/widgets", "Should NOT have more than %d items", MaxDashboardWidgets)
	}
	for i, w := range widgets {
		p := fmt.Sprintf("/widgets/%d", i)
		wm, ok := w.(map[string]any)
		if !ok {
			fail(p, "Should be object")
			continue
		}
		typ, _ := wm["type"].(string)
		if !contains(widgetTypes, typ) {
			fail(p+"/type", "Should be equal to one of the allowed values: %s", strings.Join(widgetTypes, ", "))
		}
		intIn := func(k string, lo, hi float64) {
			v, ok := wm[k]
			if !ok {
				return
			}
			n, isNum := v.(float64)
			if !isNum || n != float64(int64(n)) || n < lo || n > hi {
				fail(p+"/"+k, "Should be an integer from %g to %g", lo, hi)
			}
		}
		intIn("width", 1, MaxWidgetWidth)
		intIn("height", 1, MaxWidgetHeight)
		intIn("x", 0, MaxWidgetWidth-1)
		intIn("y", 0, 1e9)
		props, ok := wm["properties"].(map[string]any)
		if !ok {
			fail(p, "Should have required property 'properties'")
			continue
		}
		switch typ {
		case "metric":
			validateMetricWidget(p+"/properties", props, fail)
		case "alarm":
			alarms, ok := props["alarms"].([]any)
			if !ok || len(alarms) == 0 || len(alarms) > MaxAlarmWidgetAlarms {
				fail(p+"/properties/alarms", "Should be an array of 1 to %d alarm ARNs", MaxAlarmWidgetAlarms)
				continue
			}
			for j, a := range alarms {
				if s, _ := a.(string); !reAlarmARN.MatchString(s) {
					fail(fmt.Sprintf("%s/properties/alarms/%d", p, j), "Should be an alarm ARN, got %v", a)
				}
			}
		}
	}
	return errs
}

func validateMetricWidget(p string, props map[string]any, fail func(string, string, ...any)) {
	// "region: The region of the metric. Required: Yes"
	if r, _ := props["region"].(string); r == "" {
		fail(p, "Should have required property 'region'")
	}
	metrics, ok := props["metrics"].([]any)
	if !ok {
		fail(p, "Should have required property 'metrics'")
		return
	}
	if len(metrics) > MaxGraphMetrics {
		fail(p+"/metrics", "Should NOT have more than %d items (a graph holds at most %d metrics and expressions, hidden ones included); it has %d", MaxGraphMetrics, MaxGraphMetrics, len(metrics))
	}
	ids := map[string]bool{}
	for j, m := range metrics {
		mp := fmt.Sprintf("%s/metrics/%d", p, j)
		arr, ok := m.([]any)
		if !ok || len(arr) == 0 {
			fail(mp, "Should be a non-empty array")
			continue
		}
		// Trailing rendering-properties object.
		var opts map[string]any
		if o, isObj := arr[len(arr)-1].(map[string]any); isObj {
			opts, arr = o, arr[:len(arr)-1]
		}
		if id, has := opts["id"]; has {
			s, _ := id.(string)
			if !reMetricID.MatchString(s) {
				fail(mp, "Invalid metric id %q: it must start with a lowercase letter and hold only letters, digits and '_'", s)
			} else if ids[s] {
				fail(mp, "Duplicate metric id %q", s)
			}
			ids[s] = true
		}
		if _, isExpr := opts["expression"]; isExpr {
			if len(arr) != 0 {
				fail(mp, "An expression takes no namespace, metric name or dimensions")
			}
			continue
		}
		// [Namespace, MetricName, DimName, DimValue, …]; "..." and "." repeat
		// the previous row's values.
		if len(arr) < 2 {
			fail(mp, "A metric needs a namespace and a metric name")
			continue
		}
		if len(arr)%2 != 0 {
			fail(mp, "Dimensions come in name/value pairs")
		}
		for _, v := range arr {
			if _, isStr := v.(string); !isStr {
				fail(mp, "Namespace, metric name and dimensions must be strings")
				break
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func init() {
	register(&typeSpec{
		token:    tDashboard,
		api:      apiInfo{"CloudWatch", "CloudWatch Dashboard", ops("PutDashboard", "PutDashboard", "DeleteDashboards", "GetDashboard")},
		required: []string{"dashboardBody", "dashboardName"},
		replace:  []string{"dashboardName"},
		// Amazon CloudWatch API Reference, PutDashboard: creates a
		// dashboard or updates an existing one, whose entire contents are
		// replaced (dashboards are global). A duplicate name is a silent
		// takeover.
		unique: []uniqueRule{{key: globalScoped("dashboardName"), message: "dashboard", silent: "PutDashboard would replace its body"}},
		compute: func(c *calc) error {
			c.id = c.outStr("dashboardName")
			// Dashboards are global to the account: no region in the ARN.
			c.set("dashboardArn", c.env.ARN("cloudwatch", "", c.env.Account, "dashboard/"+c.id))
			return nil
		},
		validate: func(v *validator) {
			v.name("dashboardName", MaxDashboardNameLen, reDashboardName, "A-Z, a-z, 0-9, - and _")
			v.jsonDoc("dashboardBody")
		},
	})
	rules = append(rules, Rule{
		ID:      "cloudwatch.dashboard-body",
		Doc:     DashboardDoc,
		Code:    "InvalidParameterInput",
		applies: types(tDashboard),
		check: func(r ruleInput) string {
			if !known(r.in, "dashboardBody") {
				return ""
			}
			errs := ValidateDashboardBody(str(r.in, "dashboardBody"))
			if len(errs) == 0 {
				return ""
			}
			return fmt.Sprintf("The dashboard body is invalid, there are %d validation errors: [%s]", len(errs), strings.Join(errs, ", "))
		},
	})
}
