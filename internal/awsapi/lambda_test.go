package awsapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// lambdaReply is one scripted REST-JSON answer of Lambda.
type lambdaReply struct {
	method, path, query string
	status              int
	errType             string
	body                string
}

// startLambda serves replies in order to the real Lambda client and
// checks each request is the one the API reference documents, signed for
// lambda in the target's region.
func startLambda(t *testing.T, replies ...lambdaReply) *Lambda {
	t.Helper()
	var mu sync.Mutex
	served := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if served >= len(replies) {
			t.Errorf("unexpected request %d: %s %s", served+1, r.Method, r.URL)
			w.WriteHeader(500)
			return
		}
		rep := replies[served]
		served++
		if r.Method != rep.method || strings.TrimSuffix(r.URL.Path, "/") != rep.path || rep.query != "" && r.URL.RawQuery != rep.query {
			t.Errorf("request %d: %s %s?%s, want %s %s?%s", served, r.Method, r.URL.Path, r.URL.RawQuery, rep.method, rep.path, rep.query)
		}
		if !strings.Contains(r.Header.Get("Authorization"), "/us-east-1/lambda/aws4_request") {
			t.Errorf("request %d is not signed for lambda in us-east-1: %q", served, r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "application/json")
		if rep.errType != "" {
			w.Header().Set("X-Amzn-ErrorType", rep.errType)
		}
		if rep.status != 0 {
			w.WriteHeader(rep.status)
		}
		w.Write([]byte(rep.body))
	}))
	t.Cleanup(func() {
		srv.Close()
		if served != len(replies) {
			t.Errorf("%d of %d replies served", served, len(replies))
		}
	})
	tg := Sim(srv.URL, "us-east-1")
	tg.MaxBackoff = time.Millisecond
	l, err := NewLambda(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// GetAccountSettings' documented answer: the code storage used and the
// limit in bytes (75 GiB, the quota Service Quotas states as 75 GB).
func TestCodeStorageIsReadFromTheDocumentedAnswer(t *testing.T) {
	l := startLambda(t, lambdaReply{method: "GET", path: "/2016-08-19/account-settings", body: string(documented(t, "lambda/get-account-settings.json"))})
	cs, err := l.CodeStorage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cs.UsedBytes != 9426 || cs.LimitBytes != 75<<30 || cs.Functions != 4 {
		t.Errorf("code storage %+v", cs)
	}
}

// ListVersionsByFunction's documented answer, $LATEST left out; a
// throttled call is retried by the client.
func TestVersionsAreListedWithoutLatest(t *testing.T) {
	l := startLambda(t,
		lambdaReply{method: "GET", path: "/2015-03-31/functions/my-function/versions", status: 429, errType: "TooManyRequestsException", body: `{"Reason":"CallerRateLimitExceeded","Type":"User","message":"Rate exceeded"}`},
		lambdaReply{method: "GET", path: "/2015-03-31/functions/my-function/versions", body: string(documented(t, "lambda/list-versions-by-function.json"))})
	vs, err := l.Versions(context.Background(), "my-function")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Version != "1" || vs[0].Number() != 1 || vs[0].CodeSize != 304 || vs[0].Description != "new version" ||
		vs[0].ARN != "arn:aws:lambda:us-west-2:123456789012:function:my-function:1" {
		t.Errorf("versions %+v", vs)
	}
}

// DeleteFunction with a qualifier: Lambda's refusal of a replicated
// version (the message CloudFormation users meet, InvalidParameterValue-
// Exception) and a version already gone are told apart from other
// errors; no qualifier but a version number is ever sent.
func TestDeletingAVersionTellsReplicasAndGoneVersionsApart(t *testing.T) {
	l := startLambda(t,
		lambdaReply{method: "DELETE", path: "/2015-03-31/functions/my-function", query: "Qualifier=1", status: 400, errType: "InvalidParameterValueException",
			body: `{"Type":"User","message":"Lambda was unable to delete arn:aws:lambda:us-east-1:123456789012:function:my-function:1 because it is a replicated function. Please see our documentation for Deleting Lambda@Edge Functions and Replicas."}`},
		lambdaReply{method: "DELETE", path: "/2015-03-31/functions/my-function", query: "Qualifier=2", status: 404, errType: "ResourceNotFoundException",
			body: `{"Type":"User","message":"Function not found: arn:aws:lambda:us-east-1:123456789012:function:my-function:2"}`},
		lambdaReply{method: "DELETE", path: "/2015-03-31/functions/my-function", query: "Qualifier=3", status: 400, errType: "InvalidParameterValueException",
			body: `{"Type":"User","message":"Invalid qualifier"}`},
		lambdaReply{method: "DELETE", path: "/2015-03-31/functions/my-function", query: "Qualifier=4", status: 204})
	ctx := context.Background()
	if err := l.DeleteVersion(ctx, "my-function", "1"); !IsReplicated(err) || IsNotFound(err) {
		t.Errorf("replicated: %v", err)
	}
	if err := l.DeleteVersion(ctx, "my-function", "2"); !IsNotFound(err) || IsReplicated(err) {
		t.Errorf("gone: %v", err)
	}
	if err := l.DeleteVersion(ctx, "my-function", "3"); err == nil || IsReplicated(err) || IsNotFound(err) {
		t.Errorf("another refusal: %v", err)
	}
	if err := l.DeleteVersion(ctx, "my-function", "4"); err != nil {
		t.Errorf("deleted: %v", err)
	}
	for _, q := range []string{"", "$LATEST", "live", "0"} {
		if err := l.DeleteVersion(ctx, "my-function", q); err == nil {
			t.Errorf("qualifier %q must never be sent (it deletes the function, or an alias's target)", q)
		}
	}
}
