package awsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/awsapi/wire"
)

// reply is one scripted HTTP answer.
type reply struct {
	op      string    // operation the request must be for
	check   func(any) // optional check of the decoded request body
	status  int       // 0 = 200
	body    []byte    // response body, already encoded
	headers map[string]string
}

// replay serves replies in order to the real SDK client and fails the
// test on any request it did not expect.
type replay struct {
	t       *testing.T
	mu      sync.Mutex
	replies []reply
	served  int
}

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, _ := io.ReadAll(req.Body)
	if r.served >= len(r.replies) {
		r.t.Errorf("unexpected request %d: %s %s", r.served+1, req.URL.Path, req.Header.Get("X-Amz-Target"))
		w.WriteHeader(500)
		return
	}
	rep := r.replies[r.served]
	r.served++
	if !strings.HasPrefix(req.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDSIMULATED") {
		r.t.Errorf("request %d is not SigV4-signed with the static key: %q", r.served, req.Header.Get("Authorization"))
	}
	var in any
	switch {
	case strings.HasPrefix(req.URL.Path, "/service/"):
		// Smithy RPC v2 CBOR: POST /service/<Service>/operation/<Op>.
		if want := "/service/GraniteServiceVersion20100801/operation/" + rep.op; req.URL.Path != want {
			r.t.Errorf("request %d path = %s, want %s", r.served, req.URL.Path, want)
		}
		if req.Header.Get(wire.ProtocolHeader) != wire.ProtocolCBOR {
			r.t.Errorf("request %d: Smithy-Protocol = %q", r.served, req.Header.Get(wire.ProtocolHeader))
		}
		var err error
		if in, err = wire.DecodeCBOR(b); err != nil {
			r.t.Errorf("request %d: body is not CBOR: %v", r.served, err)
		}
		w.Header().Set("Content-Type", wire.ContentTypeCBOR)
		w.Header().Set(wire.ProtocolHeader, wire.ProtocolCBOR)
	default:
		// AWS JSON 1.1: POST / with X-Amz-Target.
		if want := "ServiceQuotasV20190624." + rep.op; req.Header.Get("X-Amz-Target") != want {
			r.t.Errorf("request %d target = %q, want %q", r.served, req.Header.Get("X-Amz-Target"), want)
		}
		if err := json.Unmarshal(b, &in); err != nil {
			r.t.Errorf("request %d: body is not JSON: %v", r.served, err)
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	}
	if rep.check != nil {
		rep.check(in)
	}
	for k, v := range rep.headers {
		w.Header().Set(k, v)
	}
	if rep.status != 0 {
		w.WriteHeader(rep.status)
	}
	w.Write(rep.body)
}

func (r *replay) done() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.served != len(r.replies) {
		r.t.Errorf("served %d of %d scripted replies", r.served, len(r.replies))
	}
}

// start serves the script and returns a Target at it.
func start(t *testing.T, replies ...reply) (Target, *replay) {
	t.Helper()
	r := &replay{t: t, replies: replies}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	tg := Sim(srv.URL, "us-east-1")
	tg.MaxBackoff = time.Millisecond
	return tg, r
}

// documented reads a recorded AWS response body from testdata/aws.
func documented(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "aws", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// asCBOR re-encodes a documented JSON body for the CBOR protocol with
// the same members and values: integers stay integers, doubles doubles,
// and ISO-8601 timestamps (members named *Timestamp or Timestamps)
// become tag-1 epoch seconds. extra members (a NextToken) are added.
func asCBOR(t *testing.T, doc []byte, extra map[string]any) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	for k, x := range extra {
		v[k] = x
	}
	b, err := wire.EncodeCBOR(timestamps(t, v, ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func timestamps(t *testing.T, v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = timestamps(t, e, k)
		}
	case []any:
		for i, e := range x {
			x[i] = timestamps(t, e, key)
		}
	case string:
		if strings.HasSuffix(key, "Timestamp") || key == "Timestamps" {
			ts, err := time.Parse(time.RFC3339Nano, x)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			return ts
		}
	}
	return v
}

// cborError is CloudWatch's error shape on RPC v2 CBOR: a __type and a
// message in the body, and (CloudWatch is awsQueryCompatible) the Query
// error code in X-Amzn-Query-Error.
func cborError(t *testing.T, status int, typ, queryCode, msg string) reply {
	b, err := wire.EncodeCBOR(map[string]any{"__type": typ, "message": msg})
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: status, body: b, headers: map[string]string{"X-Amzn-Query-Error": queryCode + ";Sender"}}
}

func field(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

var ctx = context.Background()
