package awsapi

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/rdsdata"
	"github.com/aws/aws-sdk-go-v2/service/rdsdata/types"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

func (f *taskFixture) rdsData() *rdsdata.Client {
	return rdsdata.New(rdsdata.Options{Region: "us-east-1", BaseEndpoint: aws.String(f.endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("ASIACELLCTLSIMULATED", "cellctl-simulated-aws-not-a-secret", "")})
}

func secretOf(r *simtest.Res) string {
	return r.Out["masterUserSecrets"].ArrayValue()[0].ObjectValue()["secretArn"].StringValue()
}

// The cell's database bootstrap through the Data API (scripted mode: no
// PostgreSQL configured): the statement is checked as the Data API checks
// it and recorded for its cluster.
func TestDataAPIExecuteStatementScripted(t *testing.T) {
	t.Setenv(store.PGHostEnv, "")
	f := newTaskFixture(t)
	ctx := context.Background()
	client := f.rdsData()
	arn, secret := simtest.S(f.db.Out, "arn"), secretOf(f.db)
	out, err := client.ExecuteStatement(ctx, &rdsdata.ExecuteStatementInput{ResourceArn: aws.String(arn), SecretArn: aws.String(secret),
		Database: aws.String("app"), Sql: aws.String("CREATE USER app_user WITH LOGIN")})
	if err != nil || out.NumberOfRecordsUpdated != 0 {
		t.Fatalf("ExecuteStatement: %+v %v", out, err)
	}
	if _, err := client.BatchExecuteStatement(ctx, &rdsdata.BatchExecuteStatementInput{ResourceArn: aws.String(arn), SecretArn: aws.String(secret),
		Database: aws.String("app"), Sql: aws.String("INSERT INTO t VALUES (:v)"),
		ParameterSets: [][]types.SqlParameter{{{Name: aws.String("v"), Value: &types.FieldMemberLongValue{Value: 1}}}, {{Name: aws.String("v"), Value: &types.FieldMemberLongValue{Value: 2}}}}}); err != nil {
		t.Fatal(err)
	}
	stmts, err := f.cloud.Statements("cellctl-a-db")
	if err != nil || len(stmts) != 3 || stmts[0].SQL != "CREATE USER app_user WITH LOGIN" || stmts[0].Mode != "scripted" || stmts[0].Source != "data-api" || stmts[0].Stack != "cells/cell-a" {
		t.Fatalf("statements = %+v, %v", stmts, err)
	}
	if other, _ := f.cloud.Statements("cellctl-b-db"); len(other) != 0 {
		t.Errorf("another cluster ran %+v", other)
	}

	// A second cluster without the Data API, and its secret.
	noHTTP := f.h.Create(store.TypeDBCluster, "cell-a-db2", simtest.PM("clusterIdentifier", "cellctl-a-db2", "engine", "aurora-postgresql",
		"masterUsername", "other_admin", "manageMasterUserPassword", true, "databaseName", "app", "skipFinalSnapshot", true))
	for _, tc := range []struct {
		name                 string
		arn, secret, db, sql string
		code, msg            string
	}{
		{"endpoint off", simtest.S(noHTTP.Out, "arn"), secretOf(noHTTP), "app", "SELECT 1", awsmodel.DataHTTPEndpointOff, "HttpEndpoint is not enabled for resource " + simtest.S(noHTTP.Out, "arn")},
		{"no such cluster", "arn:aws:rds:us-east-1:123456789012:cluster:nope", secret, "app", "SELECT 1", awsmodel.DataHTTPEndpointOff, "HttpEndpoint is not enabled"},
		{"another region", strings.Replace(arn, "us-east-1", "eu-west-1", 1), secret, "app", "SELECT 1", awsmodel.DataHTTPEndpointOff, ""},
		{"unknown secret", arn, "arn:aws:secretsmanager:us-east-1:123456789012:secret:nope-AbCdEf", "app", "SELECT 1", awsmodel.DataSecretsError, "can't find the specified secret"},
		{"another cluster's secret", arn, secretOf(noHTTP), "app", "SELECT 1", awsmodel.DataDatabaseError, "password authentication failed for user \"other_admin\""},
		{"unknown database", arn, secret, "shop", "SELECT 1", awsmodel.DataDatabaseError, "database \"shop\" does not exist"},
		{"empty statement", arn, secret, "app", " ", awsmodel.DataBadRequest, "cannot be empty"},
	} {
		_, err := client.ExecuteStatement(ctx, &rdsdata.ExecuteStatementInput{ResourceArn: aws.String(tc.arn), SecretArn: aws.String(tc.secret), Database: aws.String(tc.db), Sql: aws.String(tc.sql)})
		if apiCode(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %s %q", tc.name, err, tc.code, tc.msg)
		}
	}
	if stmts, _ := f.cloud.Statements(""); len(stmts) != 3 {
		t.Errorf("refused statements were recorded as run: %+v", stmts)
	}
}
