package awsapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
)

// noSuchZone is Route 53's REST-XML error body for an unknown zone.
const noSuchZone = `<?xml version="1.0"?>
<ErrorResponse xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><Error><Type>Sender</Type><Code>NoSuchHostedZone</Code><Message>No hosted zone found with ID: Z0000000000000000000</Message></Error><RequestId>5ec1a7ed-6f01-4a1e-8b3c-0d5e0e0e0003</RequestId></ErrorResponse>`

const route53Throttle = `<?xml version="1.0"?>
<ErrorResponse xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error><RequestId>5ec1a7ed-6f01-4a1e-8b3c-0d5e0e0e0004</RequestId></ErrorResponse>`

type restReply struct {
	path   string
	status int
	body   string
}

// startRoute53 serves REST-XML replies in order and checks each request
// is the GET the reference documents, signed for route53 in us-east-1.
func startRoute53(t *testing.T, replies ...restReply) *Route53 {
	t.Helper()
	var mu sync.Mutex
	served := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if served >= len(replies) {
			t.Errorf("unexpected request %d: %s %s", served+1, r.Method, r.URL.Path)
			w.WriteHeader(500)
			return
		}
		rep := replies[served]
		served++
		if r.Method != http.MethodGet || r.URL.Path != rep.path {
			t.Errorf("request %d: %s %s, want GET %s", served, r.Method, r.URL.Path, rep.path)
		}
		if !strings.Contains(r.Header.Get("Authorization"), "/us-east-1/route53/aws4_request") {
			t.Errorf("request %d is not signed for route53 in us-east-1: %q", served, r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "text/xml")
		if rep.status != 0 {
			w.WriteHeader(rep.status)
		}
		w.Write([]byte(rep.body))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if served != len(replies) {
			t.Errorf("served %d of %d scripted replies", served, len(replies))
		}
	})
	// Route 53 is global: a reader built for any region signs for us-east-1.
	tg := Sim(srv.URL, "eu-west-1")
	tg.MaxBackoff = time.Millisecond
	r, err := NewRoute53(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHostedZoneReadsTheDocumentedAnswer: GetHostedZone's documented body
// gives the zone's bare id and its name without the trailing dot, after
// a throttled first try; the "/hostedzone/" prefix of an id is accepted.
func TestHostedZoneReadsTheDocumentedAnswer(t *testing.T) {
	r := startRoute53(t,
		restReply{path: "/2013-04-01/hostedzone/Z1D633PJN98FT9", status: 400, body: route53Throttle},
		restReply{path: "/2013-04-01/hostedzone/Z1D633PJN98FT9", body: string(documented(t, "route53/get-hosted-zone.xml"))},
	)
	z, err := r.HostedZone(ctx, "/hostedzone/Z1D633PJN98FT9")
	if err != nil {
		t.Fatal(err)
	}
	if z != (HostedZone{ID: "Z1D633PJN98FT9", Name: "example.com"}) {
		t.Fatalf("zone = %+v", z)
	}
}

// TestUnknownHostedZoneIsNoSuchHostedZone: a zone the account does not
// hold is an error the caller can tell apart (NoSuchHostedZone), never an
// empty name.
func TestUnknownHostedZoneIsNoSuchHostedZone(t *testing.T) {
	r := startRoute53(t, restReply{path: "/2013-04-01/hostedzone/Z0000000000000000000", status: 404, body: noSuchZone})
	_, err := r.HostedZone(ctx, "Z0000000000000000000")
	var nsz *r53types.NoSuchHostedZone
	if !errors.As(err, &nsz) || !strings.Contains(err.Error(), "Z0000000000000000000") {
		t.Fatalf("err = %v, want NoSuchHostedZone naming the zone", err)
	}
}
