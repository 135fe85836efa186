package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// checkTranscript holds a documented transcript to the run: every line
// the documentation shows under a command must be a line the command
// printed (stdout or stderr), numbers and all — resource counts, routing
// table versions, quota figures. What honestly varies from run to run is
// matched loosely: durations, timestamps, rollout and canary ids, and the
// resource a progress line happens to name; a writer marks anything else
// that varies with "…". An annotation at the end of a line, "(stderr:
// progress)", is the writer's note, not output.
func checkTranscript(t *testing.T, ex example, r result, note string) {
	t.Helper()
	if len(ex.output) == 0 {
		return
	}
	printed := strings.Split(r.stdout+"\n"+r.stderr, "\n")
	for _, l := range ex.output {
		re := transcriptPattern(l.text)
		found := false
		for _, p := range printed {
			if re.MatchString(p) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s: the transcript of `%s`%s shows a line the run did not print:\n  %s\nprinted:\n%s",
				l.source, ex.line, note, strings.TrimSpace(l.text), clip(r.stdout+"\n--- stderr\n"+r.stderr))
		}
	}
}

var (
	transcriptNote     = regexp.MustCompile(`\s+\((?:stderr|stdout)\b[^)]*\)\s*$`)
	transcriptProgress = regexp.MustCompile(`^(.*\d+/\d+ resources),.*$`)
	transcriptToken    = regexp.MustCompile(`…|\s+|` + transcriptTime + `|` + transcriptID + `|\b(?:` + transcriptDuration + `)\b`)
	transcriptTimeRe   = regexp.MustCompile(`^` + transcriptTime + `$`)
	transcriptIDRe     = regexp.MustCompile(`^` + transcriptID + `$`)
)

const (
	transcriptTime     = `\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:\d\d)`
	transcriptID       = `\b[rc]-[0-9a-f]{12}\b`
	transcriptDuration = `\d+(?:\.\d+)?(?:ns|µs|ms|s|m|h)|\d+m\d+(?:\.\d+)?s|\d+h\d+m(?:\d+(?:\.\d+)?s)?`
)

// transcriptPattern is the regular expression a printed line must match
// to be the documented line l.
func transcriptPattern(l string) *regexp.Regexp {
	l = strings.TrimSpace(transcriptNote.ReplaceAllString(l, ""))
	rest := ""
	if m := transcriptProgress.FindStringSubmatch(l); m != nil {
		// The resource a progress line names is whichever the engine
		// reached when the line was printed.
		l, rest = m[1], ".*"
	}
	var b strings.Builder
	b.WriteString(`^\s*`)
	last := 0
	for _, loc := range transcriptToken.FindAllStringIndex(l, -1) {
		b.WriteString(regexp.QuoteMeta(l[last:loc[0]]))
		tok := l[loc[0]:loc[1]]
		switch {
		case tok == "…":
			b.WriteString(`.*?`)
		case strings.TrimSpace(tok) == "":
			b.WriteString(`\s+`)
		case transcriptTimeRe.MatchString(tok):
			b.WriteString(transcriptTime)
		case transcriptIDRe.MatchString(tok):
			b.WriteString(transcriptID)
		default:
			b.WriteString(`(?:` + transcriptDuration + `)`)
		}
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(l[last:]))
	b.WriteString(rest + `\s*$`)
	return regexp.MustCompile(b.String())
}

// TestTranscriptPattern pins what a transcript line matches.
func TestTranscriptPattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		doc, printed string
		match        bool
	}{
		{"router: succeeded in 14.4s (create 0, update 4, delete 0, replace 0, same 20)", "router: succeeded in 5.4s (create 0, update 4, delete 0, replace 0, same 20)", true},
		{"router: succeeded in 14.4s (create 0, update 4, delete 0, replace 0, same 20)", "router: succeeded in 5.4s (create 0, update 4, delete 0, replace 0, same 17)", false},
		{"router: 1/27 resources, checking aws:s3/bucketV2:BucketV2 router-bucket", "router: 1/27 resources, checking aws:iam/role:Role router-edge-role", true},
		{"router: 1/27 resources, checking aws:s3/bucketV2:BucketV2 router-bucket", "router: 1/21 resources, checking aws:s3/bucketV2:BucketV2 router-bucket", false},
		{"rollout-started: rollout r-19a164aafc83: 3 waves        (stderr: progress)", "rollout-started: rollout r-0123456789ab: 3 waves", true},
		{"cell health at 2026-12-02T00:55:28Z, window 15m0s (now)", "cell health at 2026-12-07T11:51:18Z, window 15m0s (now)", true},
		{"the staging distribution E… runs …:2", "the staging distribution EIGWKUZNJBTLVF runs arn:aws:lambda:us-east-1:1:function:f:2", true},
		{"the router serves routing table version 6", "the router serves routing table version 4", false},
		{"cell-d  succeeded  0  0  0  80  0  3.8s", "cell-d  succeeded  0       0       0        80      0     9.3s", true},
	} {
		if got := transcriptPattern(c.doc).MatchString(c.printed); got != c.match {
			t.Errorf("%q against %q: match %v, want %v", c.doc, c.printed, got, c.match)
		}
	}
}
