package awsapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	rdstypes "github.com/aws/aws-sdk-go-v2/service/rdsdata/types"
)

const (
	testDBCluster = "arn:aws:rds:us-east-1:123456789012:cluster:cell-a-db"
	testDBSecret  = "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-5ec1a7ed-AbCdEf"
)

// dataReply is one scripted answer to POST /Execute: an error code (the
// X-Amzn-ErrorType header, REST-JSON) with its message, or success.
type dataReply struct {
	code, message string
}

// startRDSData serves POST /Execute (REST-JSON) replies in order and
// records the sql of each request.
func startRDSData(t *testing.T, replies ...dataReply) (*RDSData, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var sqls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/Execute" {
			t.Errorf("%s %s, want POST /Execute", r.Method, r.URL.Path)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		if a := r.Header.Get("Authorization"); !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential=AKIDSIMULATED") || !strings.Contains(a, "/us-east-1/rds-data/aws4_request") {
			t.Errorf("request is not SigV4-signed for rds-data with the static key: %q", a)
		}
		var in map[string]any
		if err := json.Unmarshal(b, &in); err != nil {
			t.Errorf("body is not JSON: %v", err)
		}
		if in["resourceArn"] != testDBCluster || in["secretArn"] != testDBSecret || in["database"] != "app" || in["continueAfterTimeout"] != true {
			t.Errorf("ExecuteStatement body = %v", in)
		}
		sqls = append(sqls, in["sql"].(string))
		w.Header().Set("Content-Type", "application/json")
		if len(sqls) > len(replies) {
			t.Errorf("unexpected request %d: %v", len(sqls), in["sql"])
			w.WriteHeader(500)
			return
		}
		rep := replies[len(sqls)-1]
		if rep.code == "" {
			w.Write([]byte(`{"numberOfRecordsUpdated":0,"generatedFields":[]}`))
			return
		}
		w.Header().Set("X-Amzn-ErrorType", rep.code+":http://internal.amazon.com/coral/com.amazon.rdsdataservice/")
		w.WriteHeader(400)
		json.NewEncoder(w).Encode(map[string]string{"message": rep.message})
	}))
	t.Cleanup(srv.Close)
	tg := Sim(srv.URL, "us-east-1")
	tg.MaxBackoff = time.Millisecond
	d, err := NewRDSData(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	d.ResumeWait = time.Millisecond
	return d, &sqls
}

// bootstrapSQL is the cell's dbBootstrapSql stack output
// (docs/ARCHITECTURE.md, "The app's database user").
const bootstrapSQL = `CREATE USER cellctl_app WITH LOGIN; GRANT rds_iam TO cellctl_app; GRANT CONNECT, TEMPORARY ON DATABASE app TO cellctl_app; GRANT USAGE, CREATE ON SCHEMA public TO cellctl_app;`

func TestExecuteRunsStatementsInOrder(t *testing.T) {
	d, sqls := startRDSData(t, dataReply{}, dataReply{}, dataReply{}, dataReply{})
	stmts := SplitStatements(bootstrapSQL)
	if err := d.Execute(ctx, testDBCluster, testDBSecret, "app", stmts); err != nil {
		t.Fatal(err)
	}
	want := []string{"CREATE USER cellctl_app WITH LOGIN", "GRANT rds_iam TO cellctl_app",
		"GRANT CONNECT, TEMPORARY ON DATABASE app TO cellctl_app", "GRANT USAGE, CREATE ON SCHEMA public TO cellctl_app"}
	if !reflect.DeepEqual(*sqls, want) {
		t.Errorf("sql sent =\n%q, want\n%q", *sqls, want)
	}
}

func TestExecuteStopsAtTheFirstFailure(t *testing.T) {
	msg := `ERROR: role "cellctl_app" already exists; SQLState: 42710`
	d, sqls := startRDSData(t, dataReply{}, dataReply{code: "DatabaseErrorException", message: msg})
	err := d.Execute(ctx, testDBCluster, testDBSecret, "app", []string{"GRANT rds_iam TO cellctl_app", "CREATE USER cellctl_app WITH LOGIN;", "SELECT 1"})
	var se *StatementError
	if !errors.As(err, &se) || se.Index != 1 || se.Total != 3 || se.Code != "DatabaseErrorException" || se.Message != msg {
		t.Fatalf("err = %#v", err)
	}
	for _, want := range []string{"statement 2 of 3", "statements[1]", testDBCluster, "database app", msg} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	var dbe *rdstypes.DatabaseErrorException
	if !errors.As(err, &dbe) {
		t.Errorf("error does not wrap the SDK's DatabaseErrorException: %v", err)
	}
	if len(*sqls) != 2 || (*sqls)[1] != "CREATE USER cellctl_app WITH LOGIN" {
		t.Errorf("sql sent = %q (a trailing ';' is dropped, nothing after the failure is sent)", *sqls)
	}
}

func TestExecuteNeverPrintsTheStatementsLiterals(t *testing.T) {
	secret := "s3cr3t-Pa55word"
	d, _ := startRDSData(t, dataReply{code: "BadRequestException", message: `ERROR: syntax error at or near "'` + secret + `'"; SQLState: 42601`})
	err := d.Execute(ctx, testDBCluster, testDBSecret, "app", []string{"ALTER USER cellctl_app WITH PASSWORD '" + secret + "'"})
	if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "ALTER USER") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "syntax error") || !strings.Contains(err.Error(), "***") {
		t.Errorf("err = %v", err)
	}
}

func TestExecuteRetriesWhileTheDatabaseResumes(t *testing.T) {
	resuming := dataReply{code: "DatabaseResumingException", message: "The Aurora DB instance db-ABC is resuming after being auto-paused. Please wait a few seconds and try again."}
	d, sqls := startRDSData(t, resuming, resuming, dataReply{}, dataReply{})
	if err := d.Execute(ctx, testDBCluster, testDBSecret, "app", []string{"SELECT 1", "SELECT 2"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*sqls, []string{"SELECT 1", "SELECT 1", "SELECT 1", "SELECT 2"}) {
		t.Errorf("sql sent = %q", *sqls)
	}

	d, sqls = startRDSData(t, resuming, resuming, resuming)
	d.ResumeAttempts = 3
	err := d.Execute(ctx, testDBCluster, testDBSecret, "app", []string{"SELECT 1"})
	var se *StatementError
	if !errors.As(err, &se) || se.Code != "DatabaseResumingException" || len(*sqls) != 3 {
		t.Fatalf("err = %v after %d calls", err, len(*sqls))
	}
}

func TestExecuteRefusesMultiStatementStringsBeforeAnyCall(t *testing.T) {
	d, sqls := startRDSData(t)
	err := d.Execute(ctx, testDBCluster, testDBSecret, "app", []string{"SELECT 1", bootstrapSQL})
	if err == nil || !strings.Contains(err.Error(), "statements[1] holds 4 statements") {
		t.Fatalf("err = %v", err)
	}
	if err := d.Execute(ctx, testDBCluster, testDBSecret, "app", []string{"-- nothing"}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("err = %v", err)
	}
	if len(*sqls) != 0 {
		t.Errorf("sql sent = %q", *sqls)
	}
}

func TestSplitStatements(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" ;; -- only a comment\n", nil},
		{"SELECT 1; SELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{"INSERT INTO t VALUES ('a;b', 'it''s; fine'); SELECT 2;", []string{"INSERT INTO t VALUES ('a;b', 'it''s; fine')", "SELECT 2"}},
		{`SELECT E'\'; still a string'; SELECT "a;b" FROM t`, []string{`SELECT E'\'; still a string'`, `SELECT "a;b" FROM t`}},
		{"-- a; comment\nSELECT 1; /* a /* nested; */ comment; */ SELECT 2", []string{"-- a; comment\nSELECT 1", "/* a /* nested; */ comment; */ SELECT 2"}},
		{"CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END; $body$ LANGUAGE plpgsql; SELECT $$;$$, $1",
			[]string{"CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END; $body$ LANGUAGE plpgsql", "SELECT $$;$$, $1"}},
	} {
		if got := SplitStatements(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitStatements(%q) =\n%q, want\n%q", tc.in, got, tc.want)
		}
	}
}
