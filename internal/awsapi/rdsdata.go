package awsapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/rdsdata"
	rdstypes "github.com/aws/aws-sdk-go-v2/service/rdsdata/types"
	"github.com/aws/smithy-go"
)

// RDSData runs SQL on an Aurora cluster through the RDS Data API
// (REST-JSON, POST /Execute): a cell's database bootstrap, run from
// outside the VPC with the master secret read by the Data API itself —
// cellctl never holds the password.
type RDSData struct {
	api *rdsdata.Client
	// ResumeWait is the pause before retrying a statement the Data API
	// refused with DatabaseResumingException (0 = DefaultResumeWait);
	// ResumeAttempts bounds those tries (0 = DefaultResumeAttempts).
	ResumeWait     time.Duration
	ResumeAttempts int
}

const (
	// DefaultResumeWait and DefaultResumeAttempts ride out an Aurora
	// Serverless v2 instance resuming from zero ACUs: about a minute.
	DefaultResumeWait     = 5 * time.Second
	DefaultResumeAttempts = 12
)

// NewRDSData builds the Data API client for a target.
func NewRDSData(ctx context.Context, t Target) (*RDSData, error) {
	cfg, err := t.Config(ctx)
	if err != nil {
		return nil, err
	}
	return &RDSData{api: rdsdata.NewFromConfig(cfg)}, nil
}

// StatementError is a statement the database (or the Data API) refused.
// Its message names the statement by index, never by text: bootstrap SQL
// may hold a password literal. Literals of the statement that the
// database echoes in its message are masked too.
type StatementError struct {
	Cluster, Database string
	Index, Total      int    // Index is 0-based
	Code              string // the Data API's error code: BadRequestException, DatabaseErrorException…
	Message           string // the database's message, literals masked
	Err               error  // the SDK's error (its text is not used: it would repeat unmasked literals)
}

func (e *StatementError) Error() string {
	return fmt.Sprintf("RDS Data ExecuteStatement on %s (database %s): statement %d of %d (statements[%d]) failed: %s: %s",
		e.Cluster, e.Database, e.Index+1, e.Total, e.Index, e.Code, e.Message)
}

func (e *StatementError) Unwrap() error { return e.Err }

// Execute runs the statements in order, one ExecuteStatement call each,
// each committed on its own (no transaction: DDL such as CREATE USER and
// GRANT is what bootstrap runs), and stops at the first failure with a
// *StatementError. Statements already run stay run: bootstrap SQL is
// written to be re-runnable.
//
// One statement per call: the Aurora User Guide ("Comparing Amazon RDS
// Data API behaviors…", Multistatement support) says that for Aurora
// Serverless v2 and provisioned clusters "Multistatements aren't
// supported" (a ValidationException), and that on Aurora Serverless v1
// PostgreSQL "multistatements return only the first query response". So
// Execute refuses, before any call, a statement that holds more than one
// (see SplitStatements), and drops a trailing ';'.
//
// A DatabaseResumingException ("the Aurora Serverless v2 DB instance was
// paused. The Data API request automatically resumes the DB instance. Wait
// a few seconds and try again", RDS Data API Reference) is retried after
// ResumeWait, at most ResumeAttempts times. ContinueAfterTimeout is set, as
// ExecuteStatement's reference recommends for DDL ("When a DDL statement
// terminates before it is finished running, it can result in errors and
// possibly corrupted data structures").
func (r *RDSData) Execute(ctx context.Context, clusterArn, secretArn, database string, statements []string) error {
	if clusterArn == "" || secretArn == "" || database == "" {
		return fmt.Errorf("RDS Data ExecuteStatement: the cluster ARN, secret ARN and database are required")
	}
	sqls := make([]string, len(statements))
	for i, st := range statements {
		parts := SplitStatements(st)
		switch len(parts) {
		case 0:
			return fmt.Errorf("RDS Data ExecuteStatement on %s (database %s): statements[%d] is empty", clusterArn, database, i)
		case 1:
			sqls[i] = parts[0]
		default:
			return fmt.Errorf("RDS Data ExecuteStatement on %s (database %s): statements[%d] holds %d statements; the Data API runs one per call (split them with SplitStatements)", clusterArn, database, i, len(parts))
		}
	}
	for i, sql := range sqls {
		if err := r.executeOne(ctx, clusterArn, secretArn, database, sql); err != nil {
			return statementError(clusterArn, database, i, len(sqls), sql, err)
		}
	}
	return nil
}

func (r *RDSData) executeOne(ctx context.Context, clusterArn, secretArn, database, sql string) error {
	attempts := r.ResumeAttempts
	if attempts <= 0 {
		attempts = DefaultResumeAttempts
	}
	wait := r.ResumeWait
	if wait <= 0 {
		wait = DefaultResumeWait
	}
	for attempt := 1; ; attempt++ {
		_, err := r.api.ExecuteStatement(ctx, &rdsdata.ExecuteStatementInput{
			ResourceArn:          aws.String(clusterArn),
			SecretArn:            aws.String(secretArn),
			Database:             aws.String(database),
			Sql:                  aws.String(sql),
			ContinueAfterTimeout: true,
		})
		var resuming *rdstypes.DatabaseResumingException
		if err == nil || !errors.As(err, &resuming) || attempt >= attempts {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func statementError(cluster, database string, i, total int, sql string, err error) error {
	se := &StatementError{Cluster: cluster, Database: database, Index: i, Total: total, Err: err}
	var api smithy.APIError
	if errors.As(err, &api) {
		se.Code, se.Message = api.ErrorCode(), api.ErrorMessage()
	} else {
		// A transport error or a cancelled context: no database text in
		// it, and no request parameters either (the SDK does not print
		// them).
		se.Code, se.Message = "RequestFailed", err.Error()
	}
	se.Message = maskLiterals(se.Message, sql)
	return se
}

// maskLiterals replaces, in msg, every string literal of sql (a
// PASSWORD '…', a secret value) by ***. Literals shorter than
// maskMinLen are left: masking "a" would shred the message, and no
// credential is that short.
func maskLiterals(msg, sql string) string {
	for _, lit := range stringLiterals(sql) {
		if len(lit) >= maskMinLen {
			msg = strings.ReplaceAll(msg, lit, "***")
		}
	}
	return msg
}

const maskMinLen = 4

// stringLiterals returns the contents of the '…' and $tag$…$tag$ literals
// in sql, both as written (a doubled quote stays doubled) and as meant
// (undoubled).
func stringLiterals(sql string) []string {
	var out []string
	sc := sqlScanner{src: sql}
	for sc.next() {
		if sc.literal != "" {
			out = append(out, sc.literal, strings.ReplaceAll(sc.literal, "''", "'"))
		}
	}
	return out
}

// SplitStatements splits a SQL script (PostgreSQL lexical rules) at the
// semicolons that end statements: not those inside '…' (and E'…' with
// backslash escapes), "…" identifiers, $tag$…$tag$ bodies, -- comments or
// (nested) /* */ comments. Statements are trimmed, without their ';';
// empty ones (";;", a trailing comment) are dropped.
func SplitStatements(script string) []string {
	var out []string
	sc := sqlScanner{src: script}
	start := 0
	flush := func(end int) {
		st := strings.TrimSpace(script[start:end])
		if st != "" && !onlyComments(st) {
			out = append(out, st)
		}
	}
	for sc.next() {
		if sc.semicolon {
			flush(sc.pos - 1)
			start = sc.pos
		}
	}
	flush(len(script))
	return out
}

func onlyComments(st string) bool {
	sc := sqlScanner{src: st}
	for sc.next() {
		if !sc.comment && strings.TrimSpace(sc.src[sc.tokStart:sc.pos]) != "" {
			return false
		}
	}
	return true
}

// sqlScanner walks SQL one token at a time: a literal, quoted identifier,
// comment, ';' or any other single byte.
type sqlScanner struct {
	src       string
	pos       int
	tokStart  int
	semicolon bool
	comment   bool
	literal   string // the contents of a string literal token
}

func (s *sqlScanner) next() bool {
	s.semicolon, s.comment, s.literal = false, false, ""
	if s.pos >= len(s.src) {
		return false
	}
	s.tokStart = s.pos
	src, i := s.src, s.pos
	switch c := src[i]; {
	case c == ';':
		s.pos = i + 1
		s.semicolon = true
	case c == '-' && strings.HasPrefix(src[i:], "--"):
		end := strings.IndexByte(src[i:], '\n')
		if end < 0 {
			s.pos = len(src)
		} else {
			s.pos = i + end + 1
		}
		s.comment = true
	case c == '/' && strings.HasPrefix(src[i:], "/*"):
		depth, j := 0, i
		for j < len(src) {
			if strings.HasPrefix(src[j:], "/*") {
				depth++
				j += 2
			} else if strings.HasPrefix(src[j:], "*/") {
				depth--
				j += 2
				if depth == 0 {
					break
				}
			} else {
				j++
			}
		}
		s.pos = j
		s.comment = true
	case c == '\'' || ((c == 'E' || c == 'e') && i+1 < len(src) && src[i+1] == '\'' && (i == 0 || !identByte(src[i-1]))):
		escapes := c != '\''
		j := i + 1
		if escapes {
			j++
		}
		body := j
		for j < len(src) {
			if escapes && src[j] == '\\' {
				j += 2
				continue
			}
			if src[j] == '\'' {
				if j+1 < len(src) && src[j+1] == '\'' {
					j += 2
					continue
				}
				break
			}
			j++
		}
		s.literal = src[body:min(j, len(src))]
		s.pos = min(j+1, len(src))
	case c == '"':
		j := i + 1
		for j < len(src) {
			if src[j] == '"' {
				if j+1 < len(src) && src[j+1] == '"' {
					j += 2
					continue
				}
				break
			}
			j++
		}
		s.pos = min(j+1, len(src))
	case c == '$' && (i == 0 || !identByte(src[i-1])):
		// $tag$ … $tag$ (tag: empty or an identifier); $1 is a parameter.
		end := strings.IndexByte(src[i+1:], '$')
		tag := ""
		if end >= 0 {
			tag = src[i : i+1+end+1]
		}
		if end < 0 || !dollarTag(tag[1:len(tag)-1]) {
			s.pos = i + 1
			break
		}
		body := i + len(tag)
		closing := strings.Index(src[body:], tag)
		if closing < 0 {
			s.literal = src[body:]
			s.pos = len(src)
		} else {
			s.literal = src[body : body+closing]
			s.pos = body + closing + len(tag)
		}
	default:
		s.pos = i + 1
	}
	return true
}

func identByte(b byte) bool {
	return b == '_' || b == '$' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

func dollarTag(t string) bool {
	for i := 0; i < len(t); i++ {
		b := t[i]
		if b == '$' || !identByte(b) || (i == 0 && b >= '0' && b <= '9') {
			return false
		}
	}
	return true
}
