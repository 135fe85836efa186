package store

import (
	"encoding/csv"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/internal/awsmodel"
)

// The RDS Data API over the simulated Aurora clusters: a statement is
// checked as the Data API checks it (awsmodel/rdsdata.go: the cluster
// exists, its HTTP endpoint is enabled, the secret is its managed master
// user secret, the database is its own), recorded per cluster, and — when
// a PostgreSQL server is configured (pg.go) — run there as the cluster's
// master user, PostgreSQL's refusal answered as DatabaseErrorException.

// DataStatement is one ExecuteStatement (or one parameter set of a
// BatchExecuteStatement).
type DataStatement struct {
	ResourceARN, SecretARN string
	Database, Schema       string
	SQL                    string
	TransactionID          string
	// Parameters are the named parameters as sent (SqlParameter: name and
	// value, a Field union).
	Parameters []map[string]any
}

// DataResult is what a statement answered.
type DataResult struct {
	Columns         []string
	Records         [][]string
	RecordsUpdated  int64
	Mode            string
	ClusterID       string
	ClusterDatabase string
}

// DataCluster resolves and checks the cluster and secret of a statement.
func (t *TaskAPI) DataCluster(region string, s DataStatement) (*Record, error) {
	r, account, id, err := awsmodel.DataAPIResource(s.ResourceARN)
	if err != nil {
		return nil, err
	}
	if r != region || account != t.View.Account() {
		return nil, awsmodel.HTTPEndpointNotEnabledError(s.ResourceARN)
	}
	var db *Record
	for _, x := range t.State.Resources {
		if x.Type == TypeDBCluster && x.Region == region && x.ID == id {
			db = x
		}
	}
	if db == nil || Str(db.Outputs["arn"]) != s.ResourceARN {
		return nil, awsmodel.HTTPEndpointNotEnabledError(s.ResourceARN)
	}
	if on, _ := plainMap(t.View.Outputs(db))["enableHttpEndpoint"].(bool); !on {
		return nil, awsmodel.HTTPEndpointNotEnabledError(s.ResourceARN)
	}
	if s.SecretARN == "" {
		return nil, &awsmodel.DataAPIError{Status: 400, Code: awsmodel.DataBadRequest, Message: "secretArn is required"}
	}
	owner := t.secretOwner(s.SecretARN)
	switch {
	case owner == nil:
		return nil, awsmodel.DataSecretNotFoundError(s.SecretARN)
	case owner != db:
		return nil, awsmodel.DataAuthFailedError(Str(owner.Outputs["masterUsername"]))
	}
	return db, nil
}

// secretOwner is the DB cluster whose managed master user secret arn is.
func (t *TaskAPI) secretOwner(arn string) *Record {
	for _, x := range t.State.Resources {
		if x.Type != TypeDBCluster {
			continue
		}
		for _, sec := range asList(plainMap(t.View.Outputs(x))["masterUserSecrets"]) {
			if m, ok := sec.(map[string]any); ok && Str(m["secretArn"]) == arn {
				return x
			}
		}
	}
	return nil
}

// ExecuteStatement runs (or, without PostgreSQL, records) one statement.
func (t *TaskAPI) ExecuteStatement(region string, s DataStatement) (DataResult, error) {
	if err := awsmodel.CheckDataStatement(s.SQL, s.Database, s.Schema); err != nil {
		return DataResult{}, err
	}
	db, err := t.DataCluster(region, s)
	if err != nil {
		return DataResult{}, err
	}
	if s.TransactionID != "" {
		// The simulator serves no BeginTransaction: no id is one it made.
		return DataResult{}, &awsmodel.DataAPIError{Status: 404, Code: "TransactionNotFoundException", Message: "Transaction " + s.TransactionID + " is not found"}
	}
	own := Str(db.Outputs["databaseName"])
	database := s.Database
	if database == "" {
		database = own
	}
	if database != own && database != "postgres" {
		return DataResult{}, awsmodel.DataUnknownDatabaseError(database)
	}
	sql, err := bindParameters(s.SQL, s.Parameters)
	if err != nil {
		return DataResult{}, err
	}
	res := DataResult{Mode: "scripted", ClusterID: db.ID, ClusterDatabase: own}
	stmt := SQLStatement{Time: t.c.Now(), Region: region, Cluster: db.ID, Stack: db.Key(), Database: s.Database, SQL: s.SQL, Source: "data-api", Mode: "scripted",
		Role: Str(db.Outputs["masterUsername"])}
	pg := PGFromEnv()
	if pg == nil {
		t.RecordStatement(stmt)
		return res, nil
	}
	res.Mode, stmt.Mode = "postgres", "postgres"
	out, err := pg.Run(PGTargetOf(db), stmt.Role, "\\set QUIET off\n"+sql, "--csv")
	if err != nil {
		stmt.Error = err.Error()
		t.RecordStatement(stmt)
		var pe *PGError
		if errors.As(err, &pe) {
			return res, awsmodel.DataDatabaseErr(pe.Severity+": "+pe.Message, pe.Code)
		}
		return res, err
	}
	t.RecordStatement(stmt)
	parseCSVResult(out, &res)
	return res, nil
}

var commandTag = regexp.MustCompile(`^[A-Z][A-Z ]*?(?: (\d+))*$`)

// parseCSVResult reads psql --csv output: a header and rows, or a command
// tag ("INSERT 0 3", "UPDATE 2", "CREATE TABLE").
func parseCSVResult(out string, res *DataResult) {
	out = strings.TrimRight(out, "\n")
	if out == "" {
		return
	}
	lines := strings.Split(out, "\n")
	if len(lines) == 1 && commandTag.MatchString(lines[0]) {
		f := strings.Fields(lines[0])
		switch f[0] {
		case "INSERT", "UPDATE", "DELETE", "MERGE", "COPY":
			res.RecordsUpdated, _ = strconv.ParseInt(f[len(f)-1], 10, 64)
		}
		return
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) == 0 {
		return
	}
	res.Columns = rows[0]
	res.Records = rows[1:]
}

var namedParam = regexp.MustCompile(`:([A-Za-z_][A-Za-z0-9_]*)`)

// bindParameters writes named parameters (:name) as SQL literals, outside
// quoted text and casts (::type).
func bindParameters(sql string, params []map[string]any) (string, error) {
	if len(params) == 0 {
		return sql, nil
	}
	lit := map[string]string{}
	for _, p := range params {
		name := Str(p["name"])
		v, _ := p["value"].(map[string]any)
		switch {
		case v["isNull"] == true:
			lit[name] = "NULL"
		case v["stringValue"] != nil:
			lit[name] = quoteLiteral(Str(v["stringValue"]))
		case v["longValue"] != nil:
			lit[name] = strconv.FormatInt(int64(Num(v["longValue"])), 10)
		case v["doubleValue"] != nil:
			lit[name] = strconv.FormatFloat(Num(v["doubleValue"]), 'g', -1, 64)
		case v["booleanValue"] != nil:
			lit[name] = strconv.FormatBool(v["booleanValue"] == true)
		default:
			return "", &awsmodel.DataAPIError{Status: 400, Code: awsmodel.DataBadRequest, Message: fmt.Sprintf("the simulator binds string, long, double, boolean and null parameters only (parameter %s)", name)}
		}
	}
	var b strings.Builder
	inQuote := byte(0)
	for i := 0; i < len(sql); i++ {
		ch := sql[i]
		if inQuote != 0 {
			b.WriteByte(ch)
			if ch == inQuote {
				inQuote = 0
			}
			continue
		}
		if ch == '\'' || ch == '"' {
			inQuote = ch
			b.WriteByte(ch)
			continue
		}
		if ch == ':' && i+1 < len(sql) && sql[i+1] == ':' {
			b.WriteString("::")
			i++
			continue
		}
		if ch == ':' {
			if m := namedParam.FindStringSubmatch(sql[i:]); m != nil && namedParam.FindStringIndex(sql[i:])[0] == 0 {
				if l, ok := lit[m[1]]; ok {
					b.WriteString(l)
					i += len(m[0]) - 1
					continue
				}
			}
		}
		b.WriteByte(ch)
	}
	return b.String(), nil
}
