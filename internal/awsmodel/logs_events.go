package awsmodel

import (
	"fmt"
	"strconv"
	"strings"
)

// CloudWatch Logs GetLogEvents as the simulator answers it (AWS JSON 1.1,
// X-Amz-Target Logs_20140328.GetLogEvents). Source: the Amazon CloudWatch
// Logs API Reference, GetLogEvents (parameters, limits, tokens, errors).

// CloudWatch Logs error shapes.
const (
	LogsResourceNotFound  = "ResourceNotFoundException"
	LogsInvalidParameter  = "InvalidParameterException"
	LogsDefaultEventLimit = 10000
)

// LogsError is a CloudWatch Logs API error.
type LogsError struct {
	Code    string
	Message string
}

func (e *LogsError) Error() string { return e.Code + ": " + e.Message }

// LogsRules lists the GetLogEvents rules the functions below enforce.
var LogsRules = []APIRule{
	{"logs.getlogevents-group", "CloudWatch Logs API Reference, GetLogEvents: ResourceNotFoundException \"The specified resource does not exist.\" for a log group or stream that does not exist; \"You must include either logGroupIdentifier or logGroupName, but not both.\"", LogsResourceNotFound},
	{"logs.getlogevents-limit", "CloudWatch Logs API Reference, GetLogEvents: limit Valid Range 1-10000; \"If you don't specify a limit, the default is as many log events as can fit in a response size of 1 MB (up to 10,000 log events).\"", LogsInvalidParameter},
	{"logs.getlogevents-tokens", "CloudWatch Logs API Reference, GetLogEvents: nextForwardToken \"If you have reached the end of the stream, it returns the same token you passed in.\"; \"If you are using a previous nextForwardToken value as the nextToken in this operation, you must specify true for startFromHead.\"", LogsInvalidParameter},
	{"logs.getlogevents-window", "CloudWatch Logs API Reference, GetLogEvents: startTime \"Events with a timestamp equal to this time or later than this time are included.\"; endTime \"Events with a timestamp equal to or later than this time are not included.\"", LogsInvalidParameter},
}

// LogGroupNotFoundError and LogStreamNotFoundError are GetLogEvents'
// answers for a group or stream that does not exist.
func LogGroupNotFoundError() error {
	return &LogsError{LogsResourceNotFound, "The specified log group does not exist."}
}

func LogStreamNotFoundError() error {
	return &LogsError{LogsResourceNotFound, "The specified log stream does not exist."}
}

// LogGroupParam is the log group GetLogEvents names: logGroupName or
// logGroupIdentifier (a name or an ARN), exactly one of them.
func LogGroupParam(name, identifier string) (string, error) {
	switch {
	case name != "" && identifier != "":
		return "", &LogsError{LogsInvalidParameter, "LogGroup name and LogGroup ARN are mutually exclusive parameters."}
	case name == "" && identifier == "":
		return "", &LogsError{LogsInvalidParameter, "Either logGroupName or logGroupIdentifier must be specified."}
	case identifier != "":
		if strings.HasPrefix(identifier, "arn:") {
			i := strings.Index(identifier, ":log-group:")
			if i < 0 {
				return "", &LogsError{LogsInvalidParameter, "Invalid log group ARN: " + identifier}
			}
			return strings.TrimSuffix(identifier[i+len(":log-group:"):], ":*"), nil
		}
		return identifier, nil
	}
	return name, nil
}

// CheckLogEventsLimit checks limit (0 = absent: the default).
func CheckLogEventsLimit(limit int, given bool) (int, error) {
	if !given {
		return LogsDefaultEventLimit, nil
	}
	if limit < 1 || limit > LogsDefaultEventLimit {
		return 0, &LogsError{LogsInvalidParameter, fmt.Sprintf("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value between 1 and 10000", limit)}
	}
	return limit, nil
}

// LogPage is one GetLogEvents answer over a stream of n events: the
// events [From, To) in stream order and the two tokens.
type LogPage struct {
	From, To      int
	Forward, Back string
}

// logToken is a token: "f/<position>" (forward) or "b/<position>"
// (backward), the position a boundary between events; padded like AWS's
// 56-digit tokens so they sort and look alike.
func logToken(dir byte, pos int) string { return fmt.Sprintf("%c/%056d/s", dir, pos) }

func parseLogToken(tok string) (byte, int, bool) {
	if len(tok) < 5 || (tok[0] != 'f' && tok[0] != 'b') || tok[1] != '/' || !strings.HasSuffix(tok, "/s") {
		return 0, 0, false
	}
	digits := tok[2 : len(tok)-2]
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || strings.ContainsAny(digits, "+-") {
		return 0, 0, false
	}
	return tok[0], n, true
}

// GetLogEventsPage pages a stream of n events (after the time window) as
// GetLogEvents does (logs.getlogevents-limit, -tokens): without a token
// the first limit events (startFromHead) or the last limit events; with
// a forward token the limit events after its position, with a backward
// token the limit events before it (the token's direction decides, as
// the documentation asks callers to pass startFromHead true with a
// forward token). At either end the answer is empty
// and the token passed in comes back.
func GetLogEventsPage(n, limit int, startFromHead bool, token string) (LogPage, error) {
	if token == "" {
		if startFromHead {
			to := min(n, limit)
			return LogPage{From: 0, To: to, Forward: logToken('f', to), Back: logToken('b', 0)}, nil
		}
		from := max(0, n-limit)
		return LogPage{From: from, To: n, Forward: logToken('f', n), Back: logToken('b', from)}, nil
	}
	dir, pos, ok := parseLogToken(token)
	if !ok || pos > n {
		return LogPage{}, &LogsError{LogsInvalidParameter, "The specified nextToken is invalid."}
	}
	if dir == 'f' {
		to := min(n, pos+limit)
		fwd := logToken('f', to)
		if to == pos {
			fwd = token
		}
		return LogPage{From: pos, To: to, Forward: fwd, Back: logToken('b', pos)}, nil
	}
	from := max(0, pos-limit)
	back := logToken('b', from)
	if from == pos {
		back = token
	}
	return LogPage{From: from, To: pos, Forward: logToken('f', pos), Back: back}, nil
}
