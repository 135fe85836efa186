package awsapi

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
)

// Logs reads CloudWatch Logs streams (AWS JSON 1.1, Logs_20140328.*).
type Logs struct {
	api *cloudwatchlogs.Client
}

// NewLogs builds the CloudWatch Logs reader for a target.
func NewLogs(ctx context.Context, t Target) (*Logs, error) {
	cfg, err := t.Config(ctx)
	if err != nil {
		return nil, err
	}
	return &Logs{api: cloudwatchlogs.NewFromConfig(cfg)}, nil
}

// lastLinesMaxPages bounds how far LastLines walks back: GetLogEvents may
// answer a page with fewer events than asked (even none) while older ones
// exist, so a short page is followed by its backward token a few times.
const lastLinesMaxPages = 5

// LastLines returns up to n of the last lines of a log stream, oldest
// first. A stream or group that does not exist (a task that never
// started never created its stream) is not an error: the answer is empty.
//
// It calls GetLogEvents with startFromHead=false, which answers the
// latest events first (CloudWatch Logs API Reference, GetLogEvents:
// "If the value is false, the latest log events are returned first"),
// then follows nextBackwardToken while it has fewer than n lines; the end
// is the answer naming the token it was given ("If you have reached the
// end of the stream, it returns the same token you passed in"). An event
// holding several lines counts as that many lines.
func (l *Logs) LastLines(ctx context.Context, group, stream string, n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	var events []logtypes.OutputLogEvent // oldest first
	var token *string
	for page := 0; page < lastLinesMaxPages; page++ {
		in := &cloudwatchlogs.GetLogEventsInput{
			LogGroupName:  aws.String(group),
			LogStreamName: aws.String(stream),
			StartFromHead: aws.Bool(false),
			Limit:         aws.Int32(int32(min(n, 10000))), // GetLogEvents' limit: 1–10,000
			NextToken:     token,
		}
		out, err := l.api.GetLogEvents(ctx, in)
		if err != nil {
			var nf *logtypes.ResourceNotFoundException
			if errors.As(err, &nf) {
				return nil, nil
			}
			return nil, fmt.Errorf("CloudWatch Logs GetLogEvents (%s, %s): %w", group, stream, err)
		}
		pageEvents := append([]logtypes.OutputLogEvent(nil), out.Events...)
		// Events in an answer are in time order; sort (stably) anyway so
		// a store that answers newest-first cannot reverse the tail.
		sort.SliceStable(pageEvents, func(i, j int) bool {
			return aws.ToInt64(pageEvents[i].Timestamp) < aws.ToInt64(pageEvents[j].Timestamp)
		})
		events = append(pageEvents, events...)
		if countLines(events) >= n {
			break
		}
		next := aws.ToString(out.NextBackwardToken)
		if next == "" || (token != nil && next == *token) {
			break
		}
		token = aws.String(next)
	}
	var lines []string
	for _, e := range events {
		lines = append(lines, eventLines(aws.ToString(e.Message))...)
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}

func eventLines(msg string) []string {
	msg = strings.TrimRight(msg, "\r\n")
	parts := strings.Split(msg, "\n")
	for i, p := range parts {
		parts[i] = strings.TrimRight(p, "\r")
	}
	return parts
}

func countLines(events []logtypes.OutputLogEvent) int {
	c := 0
	for _, e := range events {
		c += len(eventLines(aws.ToString(e.Message)))
	}
	return c
}

// schemaVersionKey starts the line a migration prints to report the
// schema version it left.
const schemaVersionKey = "schema_version="

// SchemaVersion reads the schema version a migration task reported in its
// log lines. The convention: a migration image prints, as its last word
// on the matter, a line of the form
//
//	schema_version=<version>
//
// (surrounding spaces are trimmed; the version is whatever follows the
// '=', trimmed, e.g. "20240611_1200" or "42"). The last such line wins, so
// a tool that reports progress as it goes can print one per step. Lines
// with an empty version do not count. "" means the task reported none —
// callers must not read that as "unchanged".
func SchemaVersion(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if v, ok := strings.CutPrefix(l, schemaVersionKey); ok {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
	}
	return ""
}
