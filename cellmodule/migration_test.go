package cellmodule

import (
	"fmt"
	iampolicy "github.com/cellctl/cellctl/internal/policy"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/isolation"
)

// migrationCells are the test cells with a migration command (cell-g
// also with a rollback command and its own timeout).
func migrationCells() []spec.Cell {
	cells := testCells()
	for i := range cells {
		cells[i].MigrationCommand = []string{"./migrate", "up"}
	}
	cells[1].MigrationRollbackCommand = []string{"./migrate", "down", "1"}
	cells[1].MigrationTimeoutSeconds = 1800
	return cells
}

func runMigrationCell(t *testing.T, s spec.Cell) *cellRun {
	t.Helper()
	r, err := runCell(s, newTestModel(s.Region), nil)
	if err != nil {
		t.Fatalf("NewCell(%s) with migrations: %v", s.ID, err)
	}
	return r
}

var migrationResources = []string{"migrator-role", "migrator-policy", "migrate-sg", "migrate-out-https", "migrate-out-db", "db-in-migrate", "migrate-task"}

// A cell without cells:migrationCommand has no migration resource and no
// migration output; with it, exactly the seven resources and the output.
func TestMigrationResourcesOnlyWithACommand(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		for _, res := range r.rec.Resources() {
			if strings.Contains(res.Name, "migrat") {
				t.Errorf("%s without a migration command", res.Name)
			}
		}
		if _, ok := r.outputs["migration"]; ok {
			t.Error("a migration output without a migration command")
		}
		if r.cell.Migration != (Migration{}) {
			t.Errorf("Migration %+v without a migration command", r.cell.Migration)
		}
	})
	for _, s := range migrationCells() {
		r := runMigrationCell(t, s)
		plainRun := cachedRun(t, testCells()[map[string]int{"cell-a": 0, "cell-g": 1}[s.ID]])
		if got, want := len(r.rec.Resources()), len(plainRun.rec.Resources())+len(migrationResources); got != want {
			t.Errorf("%s: %d resources with migrations, want %d", s.ID, got, want)
		}
		for _, suffix := range migrationResources {
			res := r.one(t, suffix)
			if res.Parent != r.one(t, "task").Parent || !strings.HasSuffix(res.Parent, "::"+s.ID) {
				t.Errorf("%s is not parented to the cell", res.Name)
			}
		}
	}
}

// The migrator's role trusts what the task role trusts and may only log
// in to this cell's database as cellctl_migrator.
func TestMigratorRoleIsLeastPrivilege(t *testing.T) {
	for _, s := range migrationCells() {
		r := runMigrationCell(t, s)
		role, task := in(r.one(t, "migrator-role")), in(r.one(t, "task-role"))
		if !reflect.DeepEqual(policyOf(t, role["assumeRolePolicy"]), policyOf(t, task["assumeRolePolicy"])) {
			t.Errorf("%s: migrator trust %v, task role trust %v", s.ID, role["assumeRolePolicy"], task["assumeRolePolicy"])
		}
		trust := policyOf(t, role["assumeRolePolicy"])
		if got := trust.Statement[0].Condition["StringEquals"]["aws:SourceAccount"]; !reflect.DeepEqual(got, iampolicy.Values{testAccount}) {
			t.Errorf("%s: trust condition %v", s.ID, trust.Statement[0].Condition)
		}
		pol := in(r.one(t, "migrator-policy"))
		if pol["role"] != out(r.one(t, "migrator-role"))["name"] {
			t.Errorf("%s: policy on role %v", s.ID, pol["role"])
		}
		doc := policyOf(t, pol["policy"])
		want := DBUserARN("aws", s.Region, testAccount, str(out(r.one(t, "db"))["clusterResourceId"]), DatabaseMigratorUser)
		if len(doc.Statement) != 1 || doc.Statement[0].Effect != "Allow" ||
			!reflect.DeepEqual(doc.Statement[0].Action, iampolicy.Values{"rds-db:connect"}) || !reflect.DeepEqual(doc.Statement[0].Resource, iampolicy.Values{want}) {
			t.Errorf("%s: migrator policy %+v, want only rds-db:connect on %s", s.ID, doc, want)
		}
		if strings.Contains(str(pol["policy"]), DatabaseAppUser) || strings.Contains(str(pol["policy"]), "*") {
			t.Errorf("%s: the migrator policy names the app user or a wildcard: %s", s.ID, pol["policy"])
		}
		// The app's role does not get the migrator's user.
		if strings.Contains(str(in(r.one(t, "task-policy"))["policy"]), DatabaseMigratorUser) {
			t.Errorf("%s: the task role may log in as the migrator", s.ID)
		}
	}
}

func TestMigrationTaskDefinition(t *testing.T) {
	for _, s := range migrationCells() {
		r := runMigrationCell(t, s)
		td, svc := in(r.one(t, "migrate-task")), in(r.one(t, "task"))
		expect := map[string]any{
			"family": "shop-" + s.ID + "-migrate", "networkMode": "awsvpc", "cpu": itoa(s.TaskCPU), "memory": itoa(s.TaskMemory),
			"executionRoleArn": out(r.one(t, "execution-role"))["arn"], "taskRoleArn": out(r.one(t, "migrator-role"))["arn"],
		}
		for k, v := range expect {
			if td[k] != v {
				t.Errorf("%s: migration task %s = %v, want %v", s.ID, k, td[k], v)
			}
		}
		if !reflect.DeepEqual(strs(td["requiresCompatibilities"]), []string{"FARGATE"}) || !reflect.DeepEqual(td["volumes"], svc["volumes"]) {
			t.Errorf("%s: compatibilities %v, volumes %v", s.ID, td["requiresCompatibilities"], td["volumes"])
		}
		var defs, svcDefs []map[string]any
		mustJSON(t, str(td["containerDefinitions"]), &defs)
		mustJSON(t, str(svc["containerDefinitions"]), &svcDefs)
		if len(defs) != 1 {
			t.Fatalf("%s: %d containers, want 1", s.ID, len(defs))
		}
		c := defs[0]
		if c["name"] != MigrationContainerName || c["image"] != s.Image || c["essential"] != true || c["readonlyRootFilesystem"] != true ||
			!reflect.DeepEqual(strs(c["command"]), s.MigrationCommand) || !reflect.DeepEqual(c["mountPoints"], svcDefs[0]["mountPoints"]) {
			t.Errorf("%s: container %v", s.ID, c)
		}
		if ports, _ := c["portMappings"].([]any); len(ports) != 0 {
			t.Errorf("%s: port mappings %v", s.ID, ports)
		}
		if secrets, _ := c["secrets"].([]any); len(secrets) != 0 {
			t.Errorf("%s: secrets %v, want none", s.ID, secrets)
		}
		envOf := func(c map[string]any) map[string]string {
			env := map[string]string{}
			for _, e := range c["environment"].([]any) {
				env[str(get(e, "name"))] = str(get(e, "value"))
			}
			return env
		}
		env, want := envOf(c), envOf(svcDefs[0])
		delete(want, "PORT")
		want["DB_USER"] = DatabaseMigratorUser
		if !reflect.DeepEqual(env, want) {
			t.Errorf("%s: env %v, want the service's without PORT and with DB_USER=%s: %v", s.ID, env, DatabaseMigratorUser, want)
		}
		lc := c["logConfiguration"]
		if get(lc, "logDriver") != "awslogs" || get(lc, "options", "awslogs-group") != "/cellctl/shop/"+s.ID+"/service" ||
			get(lc, "options", "awslogs-stream-prefix") != MigrationLogStreamPrefix || get(lc, "options", "awslogs-region") != s.Region {
			t.Errorf("%s: log configuration %v", s.ID, lc)
		}
		secretArn := str(get(out(r.one(t, "db")), "masterUserSecrets", 0, "secretArn"))
		if j := str(td["containerDefinitions"]); secretArn == "" || strings.Contains(j, secretArn) || strings.Contains(strings.ToLower(j), "password") {
			t.Errorf("%s: the migration task carries a credential: %s", s.ID, j)
		}
		// The service's own task definition is the one it had.
		if str(svc["containerDefinitions"]) != str(in(cachedRun(t, testCells()[map[string]int{"cell-a": 0, "cell-g": 1}[s.ID]]).one(t, "task"))["containerDefinitions"]) {
			t.Errorf("%s: migrations changed the service's container definitions", s.ID)
		}
	}
}

func TestMigrationSecurityGroup(t *testing.T) {
	for _, s := range migrationCells() {
		r := runMigrationCell(t, s)
		sgID := r.one(t, "migrate-sg").ID
		if in(r.one(t, "migrate-sg"))["vpcId"] != r.idOf("vpc") {
			t.Errorf("%s: the migration group is outside the cell's VPC", s.ID)
		}
		groups := map[string]string{sgID: "migrate", r.one(t, "db-sg").ID: "db"}
		var got []string
		for dir, typ := range map[string]string{"in": "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "out": "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"} {
			for _, res := range r.rec.ByType(typ) {
				i := in(res)
				on, peer := groups[str(i["securityGroupId"])], groups[str(i["referencedSecurityGroupId"])]
				if on != "migrate" && peer != "migrate" {
					continue
				}
				if peer == "" {
					peer = "cidr:" + str(i["cidrIpv4"])
				}
				got = append(got, on+" "+dir+" "+fmtPort(i["fromPort"])+"-"+fmtPort(i["toPort"])+" "+str(i["ipProtocol"])+" "+peer)
			}
		}
		sort.Strings(got)
		want := []string{"db in 5432-5432 tcp migrate", "migrate out 443-443 tcp cidr:0.0.0.0/0", "migrate out 5432-5432 tcp db"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: migration rules\n got %q\nwant %q", s.ID, got, want)
		}
	}
}

func TestMigrationOutputs(t *testing.T) {
	for _, s := range migrationCells() {
		r := runMigrationCell(t, s)
		v, ok := r.outputs["migration"]
		if !ok || !v.Known || v.Secret {
			t.Fatalf("%s: migration output %+v", s.ID, v)
		}
		m, _ := v.Value.(map[string]any)
		want := map[string]any{
			"cluster":         out(r.one(t, "ecs"))["arn"],
			"taskDefinition":  out(r.one(t, "migrate-task"))["arn"],
			"container":       "migrate",
			"subnets":         toAny(r.subnetIDs("private")),
			"securityGroups":  []any{r.one(t, "migrate-sg").ID},
			"logGroup":        "/cellctl/shop/" + s.ID + "/service",
			"logStreamPrefix": "migrate",
			"timeoutSeconds":  float64(s.MigrationTimeoutSeconds),
		}
		gotNorm := map[string]any{}
		for k, e := range m {
			gotNorm[k] = normalizeDeep(e)
		}
		// The render registers subnets in no fixed order: the output must
		// hold the cell's private subnets, whatever order they came in.
		for _, mm := range []map[string]any{gotNorm, want} {
			if l, ok := mm["subnets"].([]any); ok {
				sort.Slice(l, func(i, j int) bool { return fmt.Sprint(l[i]) < fmt.Sprint(l[j]) })
			}
		}
		if !reflect.DeepEqual(gotNorm, want) {
			t.Errorf("%s: migration output\n got %v\nwant %v", s.ID, gotNorm, want)
		}
		if s.ID == "cell-a" && gotNorm["timeoutSeconds"] != float64(spec.DefaultMigrationTimeoutSeconds) {
			t.Errorf("default timeout %v", gotNorm["timeoutSeconds"])
		}
		if sql := normalize(r.outputs["dbBootstrapSql"].Value); sql != DatabaseBootstrapSQL(true) {
			t.Errorf("%s: dbBootstrapSql %v, want the statements with migrations", s.ID, sql)
		}
	}
	forEachCell(t, func(t *testing.T, r *cellRun) {
		if sql := normalize(r.outputs["dbBootstrapSql"].Value); sql != DatabaseBootstrapSQL(false) {
			t.Errorf("dbBootstrapSql %v, want the statements without migrations", sql)
		}
		db := out(r.one(t, "db"))
		if got := normalize(r.outputs["dbClusterArn"].Value); got != db["arn"] || got == "" {
			t.Errorf("dbClusterArn %v, want %v", got, db["arn"])
		}
		if got := r.outputs["dbDataApi"].Value; got != true || in(r.one(t, "db"))["enableHttpEndpoint"] != true {
			t.Errorf("dbDataApi %v, enableHttpEndpoint %v", got, in(r.one(t, "db"))["enableHttpEndpoint"])
		}
	})
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, e := range s {
		out[i] = e
	}
	return out
}

func normalizeDeep(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeDeep(e)
		}
		return out
	case []string:
		return toAny(x)
	}
	return normalize(v)
}

// Where AWS offers no Data API for the cluster (an old minor, a region
// without it), the cluster does not ask for one; with migrations there
// the template refuses, like the loader.
func TestDataAPIOnlyWhereAWSOffersIt(t *testing.T) {
	s := testCells()[1]
	s.AuroraEngineVersion = "15.2"
	r := runMigrationCell(t, s)
	if in(r.one(t, "db"))["enableHttpEndpoint"] != false || r.outputs["dbDataApi"].Value != false {
		t.Errorf("15.2 asks for the Data API: %v", in(r.one(t, "db"))["enableHttpEndpoint"])
	}
	s.MigrationCommand = []string{"./migrate", "up"}
	if _, err := runCell(s, newTestModel(s.Region), nil); err == nil || !strings.Contains(err.Error(), "RDS Data API needs Aurora PostgreSQL 15.3") {
		t.Errorf("migrations on 15.2: %v", err)
	}
	s = testCells()[0]
	s.MigrationRollbackCommand = []string{"./migrate", "down"}
	if _, err := runCell(s, newTestModel(s.Region), nil); err == nil || !strings.Contains(err.Error(), "migrationCommand is not") {
		t.Errorf("a rollback command alone: %v", err)
	}
}

// With migrations both cells pass every AWS rule (descriptions, names,
// quotas) and the isolation audit.
func TestMigrationCellsPassRulesAndIsolation(t *testing.T) {
	var cells []isolation.Cell
	for _, s := range migrationCells() {
		r, err := runCell(s, awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: testAccount, Region: s.Region}), nil)
		if err != nil {
			t.Fatalf("%s under the AWS model: %v", s.ID, err)
		}
		var rs []awsmodel.AuditResource
		for _, res := range r.rec.Resources() {
			rs = append(rs, awsmodel.AuditResource{Stack: s.ID, Type: res.Type, Name: res.Name, ID: res.ID,
				Inputs: res.Inputs, Outputs: res.Outputs, Env: awsmodel.Env{Account: testAccount, Region: s.Region}})
		}
		for _, v := range awsmodel.Audit(rs) {
			t.Errorf("rule violation: %s", v)
		}
		cells = append(cells, isolation.Cell{ID: s.ID, CIDR: s.CIDR(), FleetBucket: s.FleetBucket, Resources: r.rec.Resources()})
	}
	if res := isolation.Check(cells); !res.OK {
		t.Errorf("isolation audit with migrations: %+v", res.Violations)
	}
}

// On a T instance class the Data API isn't supported (Aurora User Guide,
// Limitations for the Amazon RDS Data API): the cluster does not ask for
// it (the bootstrap stays psql), and migrations there are refused.
func TestNoDataAPIOnTInstanceClasses(t *testing.T) {
	s := testCells()[1]
	s.AuroraInstanceClass = "db.t4g.medium"
	r := runMigrationCell(t, s)
	if in(r.one(t, "db"))["enableHttpEndpoint"] != false || r.outputs["dbDataApi"].Value != false {
		t.Errorf("db.t4g.medium asks for the Data API: %v", in(r.one(t, "db"))["enableHttpEndpoint"])
	}
	s.MigrationCommand = []string{"./migrate", "up"}
	if _, err := runCell(s, newTestModel(s.Region), nil); err == nil || !strings.Contains(err.Error(), "isn't supported on T DB instance classes") {
		t.Errorf("migrations on db.t4g.medium: %v", err)
	}
}
