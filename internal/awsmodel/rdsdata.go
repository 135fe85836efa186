package awsmodel

import (
	"fmt"
	"regexp"
	"strings"
)

// The RDS Data API as the simulator answers it (REST-JSON: ExecuteStatement
// is POST /Execute, BatchExecuteStatement POST /BatchExecute). Sources:
// the RDS Data API Reference (ExecuteStatement, BatchExecuteStatement,
// Common Errors), the Amazon Aurora User Guide, "Using RDS Data API"
// (enabling it, "Troubleshooting RDS Data API issues"). Errors are REST
// JSON: the shape name in X-Amzn-ErrorType and {"message": …}.

// Data API error shapes.
const (
	DataBadRequest          = "BadRequestException"
	DataHTTPEndpointOff     = "HttpEndpointNotEnabledException"
	DataDatabaseError       = "DatabaseErrorException"
	DataSecretsError        = "SecretsErrorException"
	DataAccessDenied        = "AccessDeniedException"
	DataDatabaseNotFound    = "DatabaseNotFoundException"
	DataStatementMaxBytes   = 65536
	DataIdentifierMaxLength = 64
)

// DataAPIError is a Data API error with its HTTP status.
type DataAPIError struct {
	Status  int
	Code    string
	Message string
}

func (e *DataAPIError) Error() string { return e.Code + ": " + e.Message }

// DataAPIRules lists the rules the functions below enforce.
var DataAPIRules = []APIRule{
	{"rdsdata.resource-arn", "RDS Data API Reference, ExecuteStatement: resourceArn \"The Amazon Resource Name (ARN) of the Aurora Serverless DB cluster\" (Length 11-100); Aurora User Guide, Troubleshooting: \"HttpEndpoint is not enabled for cluster\" when \"The ARN you specified doesn't precisely match the ARN of the cluster\"", DataHTTPEndpointOff},
	{"rdsdata.http-endpoint", "Aurora User Guide, Enabling RDS Data API: the cluster's HTTP endpoint must be enabled (EnableHttpEndpoint); RDS Data API Reference, HttpEndpointNotEnabledException \"The HTTP endpoint for using RDS Data API isn't enabled for the DB cluster.\"", DataHTTPEndpointOff},
	{"rdsdata.secret", "RDS Data API Reference, ExecuteStatement: secretArn \"The ARN of the secret that enables access to the DB cluster\"; SecretsErrorException \"The secret provided wasn't found.\"", DataSecretsError},
	{"rdsdata.sql", "RDS Data API Reference, ExecuteStatement: sql \"The SQL statement to run.\" (Length 0-65536); database and schema Length 0-64", DataBadRequest},
	{"rdsdata.database-error", "RDS Data API Reference, DatabaseErrorException \"There was an error in processing the SQL statement.\" (BadRequestException is Aurora Serverless v1's)", DataDatabaseError},
}

var reClusterResourceARN = regexp.MustCompile(`^arn:aws[a-z-]*:rds:([a-z0-9-]+):(\d{12}):cluster:([a-z][a-z0-9-]{0,62})$`)

// DataAPIResource reads resourceArn: an Aurora DB cluster ARN (region,
// account, identifier). Another ARN is refused as the Data API refuses a
// cluster it has no endpoint for.
func DataAPIResource(arn string) (region, account, id string, err error) {
	if len(arn) < 11 || len(arn) > 100 {
		return "", "", "", &DataAPIError{400, DataBadRequest, "1 validation error detected: Value at 'resourceArn' failed to satisfy constraint: Member must have length between 11 and 100"}
	}
	m := reClusterResourceARN.FindStringSubmatch(arn)
	if m == nil {
		return "", "", "", HTTPEndpointNotEnabledError(arn)
	}
	return m[1], m[2], m[3], nil
}

// HTTPEndpointNotEnabledError is the answer for a cluster without the
// Data API (or an ARN naming no cluster): "HttpEndpoint is not enabled
// for resource <arn>".
func HTTPEndpointNotEnabledError(arn string) error {
	return &DataAPIError{400, DataHTTPEndpointOff, "HttpEndpoint is not enabled for resource " + arn}
}

// DataSecretNotFoundError is a secretArn Secrets Manager does not have.
func DataSecretNotFoundError(arn string) error {
	return &DataAPIError{400, DataSecretsError, fmt.Sprintf("Secrets Manager can't find the specified secret. (Service: AWSSecretsManager; Status Code: 400; Error Code: ResourceNotFoundException) %s", arn)}
}

// DataAuthFailedError is a secret that does not open this cluster (another
// cluster's credentials): PostgreSQL refuses the login.
func DataAuthFailedError(user string) error {
	return DataDatabaseErr(fmt.Sprintf("FATAL: password authentication failed for user \"%s\"", user), "28P01")
}

// DataDatabaseErr is DatabaseErrorException with PostgreSQL's message and
// SQLSTATE, as the Data API formats it ("ERROR: …; SQLState: 42P01").
func DataDatabaseErr(msg, sqlState string) error {
	msg = strings.TrimSpace(msg)
	if sqlState != "" {
		msg += "; SQLState: " + sqlState
	}
	return &DataAPIError{400, DataDatabaseError, msg}
}

// CheckDataStatement checks sql, database and schema (rdsdata.sql).
func CheckDataStatement(sql, database, schema string) error {
	switch {
	case len(sql) > DataStatementMaxBytes:
		return &DataAPIError{400, DataBadRequest, "1 validation error detected: Value at 'sql' failed to satisfy constraint: Member must have length less than or equal to 65536"}
	case strings.TrimSpace(sql) == "":
		return &DataAPIError{400, DataBadRequest, "SQL statement cannot be empty"}
	case len(database) > DataIdentifierMaxLength:
		return &DataAPIError{400, DataBadRequest, "1 validation error detected: Value at 'database' failed to satisfy constraint: Member must have length less than or equal to 64"}
	case len(schema) > DataIdentifierMaxLength:
		return &DataAPIError{400, DataBadRequest, "1 validation error detected: Value at 'schema' failed to satisfy constraint: Member must have length less than or equal to 64"}
	}
	return nil
}

// DataUnknownDatabaseError is a database the cluster does not have.
func DataUnknownDatabaseError(db string) error {
	return DataDatabaseErr(fmt.Sprintf("FATAL: database \"%s\" does not exist", db), "3D000")
}
