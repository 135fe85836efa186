package engine

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// awsOperation finds an AWS SDK (aws-sdk-go-v2, smithy) operation error in
// a message: "operation error KMS: Decrypt, [exceeded maximum number of
// attempts, 3, ]REST", the shape both the pulumi CLI (its S3 backend, its
// awskms:// secrets provider) and cellctl's own clients report.
var awsOperation = regexp.MustCompile(`operation error ([A-Za-z0-9 ]+): ([A-Za-z0-9]+), (?:exceeded maximum number of attempts, \d+, )?(.*)`)

// awsResponse is REST when AWS answered (or the request failed on the
// way): "https response error StatusCode: 400, RequestID: …, [HostID: …, ]
// INNER", INNER being "DisabledException: msg", "api error Code: msg" or
// "request send failed, Get "url": why".
var awsResponse = regexp.MustCompile(`^https response error StatusCode: \d+, RequestID: [^,]*, (?:HostID: [^,]*, )?(.*)$`)

// awsCode is an API error code at the start of INNER.
var awsCode = regexp.MustCompile(`^(?:api error )?([A-Z][A-Za-z0-9.]*): `)

// maxSummary caps a summary: it is one cell of a table row.
const maxSummary = 100

// ErrorSummary says in one short line what an error message (a stack's
// status error: the CLI's stderr, cleaned) is about, for a table cell
// whose row the whole message follows on stderr: for an AWS call that
// failed, the service, operation and AWS's error code ("KMS Decrypt:
// DisabledException", "S3 GetObject: ServiceUnavailable") or why the
// request never got an answer ("S3 GetObject: dial tcp …: connection
// refused"); otherwise the message's first line, cut short.
func ErrorSummary(msg string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	ms := awsOperation.FindAllStringSubmatchIndex(first, -1)
	if len(ms) == 0 {
		return cut(first)
	}
	m := ms[len(ms)-1] // the innermost call, when errors nest
	svc, op, rest := first[m[2]:m[3]], first[m[4]:m[5]], first[m[6]:m[7]]
	why := rest
	if r := awsResponse.FindStringSubmatch(rest); r != nil {
		why = r[1]
		if c := awsCode.FindStringSubmatch(why); c != nil {
			return cut(svc + " " + op + ": " + c[1])
		}
		// No answer: "request send failed, Get "url": dial tcp …".
		if i := strings.LastIndex(why, `": `); i >= 0 {
			why = why[i+3:]
		}
	}
	return cut(svc + " " + op + ": " + why)
}

func cut(s string) string {
	if len(s) <= maxSummary {
		return s
	}
	i := maxSummary
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
