package awsmodel

import (
	"errors"
	"strings"
	"testing"
)

func ecsCode(err error) string {
	var e *ECSError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Every API rule cites its document and names AWS's error code.
func TestAPIRulesCite(t *testing.T) {
	seen := map[string]bool{}
	for _, list := range [][]APIRule{ECSTaskRules, LogsRules, DataAPIRules} {
		for _, r := range list {
			if seen[r.ID] || r.Doc == "" || r.Code == "" || !strings.Contains(r.Doc, "AWS") && !strings.Contains(r.Doc, "Amazon") && !strings.Contains(r.Doc, "API Reference") && !strings.Contains(r.Doc, "Guide") {
				t.Errorf("rule %+v: a unique id, a cited document and a code are required", r)
			}
			seen[r.ID] = true
		}
	}
}

func TestTaskDefRefs(t *testing.T) {
	for _, tc := range []struct {
		ref, family string
		rev         int
		ok          bool
	}{
		{"cellctl-a-migrate", "cellctl-a-migrate", 0, true},
		{"cellctl-a-migrate:7", "cellctl-a-migrate", 7, true},
		{"arn:aws:ecs:us-east-1:123456789012:task-definition/cellctl-a-migrate:3", "cellctl-a-migrate", 3, true},
		{"arn:aws:ecs:us-east-1:123456789012:task-definition/cellctl-a-migrate", "cellctl-a-migrate", 0, true},
		{"cellctl-a-migrate:0", "", 0, false},
		{"cellctl-a-migrate:x", "", 0, false},
		{"bad family!", "", 0, false},
		{"arn:aws:s3:::bucket", "", 0, false},
	} {
		got, err := ParseTaskDefRef(tc.ref, "Unable to describe task definition.")
		if (err == nil) != tc.ok || tc.ok && (got.Family != tc.family || got.Revision != tc.rev) {
			t.Errorf("%q = %+v, %v", tc.ref, got, err)
		}
		if !tc.ok && (ecsCode(err) != ECSClient || !strings.Contains(err.Error(), "Unable to describe")) {
			t.Errorf("%q: %v", tc.ref, err)
		}
	}
	if ECSTaskID("arn:aws:ecs:us-east-1:123456789012:task/cellctl-a/0123456789abcdef0123456789abcdef") != "0123456789abcdef0123456789abcdef" || ECSTaskID("nope") != "" {
		t.Error("task ids")
	}
	if ECSClusterName("") != "default" || ECSClusterName("arn:aws:ecs:us-east-1:123456789012:cluster/cellctl-a") != "cellctl-a" {
		t.Error("cluster names")
	}
}

func TestRunTaskChecks(t *testing.T) {
	if CheckRunTaskCount(0, false) != nil || CheckRunTaskCount(10, true) != nil || ecsCode(CheckRunTaskCount(11, true)) != ECSInvalidParameter || ecsCode(CheckRunTaskCount(0, true)) != ECSInvalidParameter {
		t.Error("count is 1 to 10")
	}
	if ecsCode(CheckLaunchType("FARGATE", 1)) != ECSInvalidParameter || ecsCode(CheckLaunchType("LAMBDA", 0)) != ECSInvalidParameter || CheckLaunchType("FARGATE", 0) != nil {
		t.Error("launch types")
	}
	if CheckLaunchCompatibility("FARGATE", []string{"EC2", "FARGATE"}) != nil || !strings.Contains(CheckLaunchCompatibility("FARGATE", []string{"EC2"}).Error(), "does not support launch_type FARGATE") {
		t.Error("compatibility")
	}
	subnets := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "subnet-1"
		}
		return out
	}
	for _, tc := range []struct {
		mode string
		cfg  *AwsVpcConfig
		ok   bool
	}{
		{"awsvpc", &AwsVpcConfig{Subnets: subnets(1), AssignPublicIP: "DISABLED"}, true},
		{"awsvpc", &AwsVpcConfig{Subnets: subnets(16), SecurityGroups: subnets(5)}, true},
		{"awsvpc", nil, false},
		{"awsvpc", &AwsVpcConfig{}, false},
		{"awsvpc", &AwsVpcConfig{Subnets: subnets(17)}, false},
		{"awsvpc", &AwsVpcConfig{Subnets: subnets(1), SecurityGroups: subnets(6)}, false},
		{"awsvpc", &AwsVpcConfig{Subnets: subnets(1), AssignPublicIP: "YES"}, false},
		{"bridge", nil, true},
		{"bridge", &AwsVpcConfig{Subnets: subnets(1)}, false},
	} {
		if err := CheckNetworkConfiguration(tc.mode, tc.cfg); (err == nil) != tc.ok || err != nil && ecsCode(err) != ECSInvalidParameter {
			t.Errorf("%s %+v: %v", tc.mode, tc.cfg, err)
		}
	}
	if CheckStartedBy("cellctl") != nil || CheckStartedBy("ecs-svc/123_x") != nil || CheckStartedBy("cell ctl") == nil || CheckStartedBy(strings.Repeat("a", 129)) == nil {
		t.Error("startedBy")
	}
	if CheckDescribeTasks(0) == nil || CheckDescribeTasks(101) == nil || CheckDescribeTasks(100) != nil || CheckStopReason(strings.Repeat("x", 256)) == nil {
		t.Error("describe/stop limits")
	}
	if CheckTaskDefActive("INACTIVE") == nil || CheckTaskDefActive("ACTIVE") != nil {
		t.Error("active")
	}
}

func TestRegisterTaskDefinitionChecks(t *testing.T) {
	ok := TaskDefinitionSpec{Family: "cellctl-a-migrate", NetworkMode: "awsvpc", CPU: "256", Memory: "512", RequiresCompatibilities: []string{"FARGATE"},
		Containers: []ContainerSpec{{Name: "migrate", Image: "registry/app:v2"}}}
	if err := CheckRegisterTaskDefinition(ok); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*TaskDefinitionSpec){
		"family":     func(s *TaskDefinitionSpec) { s.Family = "a b" },
		"containers": func(s *TaskDefinitionSpec) { s.Containers = nil },
		"image":      func(s *TaskDefinitionSpec) { s.Containers = []ContainerSpec{{Name: "x"}} },
		"duplicate":  func(s *TaskDefinitionSpec) { s.Containers = append(s.Containers, s.Containers[0]) },
		"bridge":     func(s *TaskDefinitionSpec) { s.NetworkMode = "bridge" },
		"size":       func(s *TaskDefinitionSpec) { s.Memory = "4096" },
	} {
		s := ok
		s.Containers = append([]ContainerSpec(nil), ok.Containers...)
		mod(&s)
		if ecsCode(CheckRegisterTaskDefinition(s)) != ECSClient {
			t.Errorf("%s: accepted", name)
		}
	}
	if c := TaskCompatibilities("awsvpc", "256", "512"); len(c) != 2 || c[1] != "FARGATE" {
		t.Errorf("compatibilities = %v", c)
	}
	if c := TaskCompatibilities("bridge", "", ""); len(c) != 1 {
		t.Errorf("compatibilities = %v", c)
	}
	if AwslogsStream("migrate", "app", "abc") != "migrate/app/abc" || CannotPullReason("x") != "CannotPullContainerError: x" {
		t.Error("awslogs stream, pull reason")
	}
}

func TestGetLogEventsPages(t *testing.T) {
	// 5 events, pages of 2 from the head: [0,2) [2,4) [4,5) then the same token.
	p, _ := GetLogEventsPage(5, 2, true, "")
	if p.From != 0 || p.To != 2 {
		t.Fatalf("first = %+v", p)
	}
	var tok string
	var seen []int
	tok = p.Forward
	for range 5 {
		q, err := GetLogEventsPage(5, 2, true, tok)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, q.To-q.From)
		if q.Forward == tok {
			break
		}
		tok = q.Forward
	}
	if len(seen) != 3 || seen[0] != 2 || seen[1] != 1 || seen[2] != 0 {
		t.Errorf("page sizes = %v", seen)
	}
	tail, _ := GetLogEventsPage(5, 2, false, "")
	if tail.From != 3 || tail.To != 5 {
		t.Errorf("tail = %+v", tail)
	}
	back, _ := GetLogEventsPage(5, 2, false, tail.Back)
	if back.From != 1 || back.To != 3 {
		t.Errorf("back = %+v", back)
	}
	start, _ := GetLogEventsPage(5, 2, false, logToken('b', 0))
	if start.From != 0 || start.To != 0 || start.Back != logToken('b', 0) {
		t.Errorf("at the head = %+v", start)
	}
	for _, bad := range []string{"x", "f/abc/s", logToken('f', 9)} {
		if _, err := GetLogEventsPage(5, 2, true, bad); err == nil {
			t.Errorf("token %q accepted", bad)
		}
	}
	if _, err := CheckLogEventsLimit(0, true); err == nil {
		t.Error("limit 0")
	}
	if n, _ := CheckLogEventsLimit(0, false); n != 10000 {
		t.Error("default limit")
	}
	if g, err := LogGroupParam("", "arn:aws:logs:us-east-1:123456789012:log-group:/cellctl/a:*"); err != nil || g != "/cellctl/a" {
		t.Errorf("identifier = %q %v", g, err)
	}
	if _, err := LogGroupParam("a", "b"); err == nil {
		t.Error("both names")
	}
}

func TestDataAPIChecks(t *testing.T) {
	region, account, id, err := DataAPIResource("arn:aws:rds:us-east-1:123456789012:cluster:cellctl-a-db")
	if err != nil || region != "us-east-1" || account != "123456789012" || id != "cellctl-a-db" {
		t.Fatalf("= %s %s %s %v", region, account, id, err)
	}
	var de *DataAPIError
	if _, _, _, err := DataAPIResource("arn:aws:rds:us-east-1:123456789012:db:cellctl-a-db-1"); !errors.As(err, &de) || de.Code != DataHTTPEndpointOff ||
		!strings.HasPrefix(de.Message, "HttpEndpoint is not enabled for resource ") {
		t.Errorf("an instance ARN: %v", err)
	}
	if err := CheckDataStatement("SELECT 1", "app", ""); err != nil {
		t.Error(err)
	}
	for _, err := range []error{CheckDataStatement("", "app", ""), CheckDataStatement(strings.Repeat("x", 65537), "", ""), CheckDataStatement("SELECT 1", strings.Repeat("d", 65), "")} {
		if !errors.As(err, &de) || de.Code != DataBadRequest {
			t.Errorf("accepted: %v", err)
		}
	}
	if err := DataDatabaseErr("ERROR: relation \"x\" does not exist", "42P01"); !strings.HasSuffix(err.Error(), "; SQLState: 42P01") {
		t.Error(err)
	}
}
