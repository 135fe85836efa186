package rollout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeS3 answers the S3 REST calls the store makes (PutObject with and
// without If-None-Match, GetObject, DeleteObject, ListObjectsV2) for one
// path-style bucket, with the status codes and error bodies S3 documents:
// 412 PreconditionFailed for an existing key, and, when conflicts > 0, a
// 409 ConditionalRequestConflict for that many conditional writes first.
type fakeS3 struct {
	mu          sync.Mutex
	objects     map[string][]byte
	conflicts   int
	conditional int
}

func s3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>R1</RequestId><HostId>H1</HostId></Error>`, code, msg)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key, ok := strings.CutPrefix(r.URL.Path, "/state-bucket/")
	switch {
	case r.Method == http.MethodGet && (r.URL.Path == "/state-bucket" || r.URL.Path == "/state-bucket/") && r.URL.Query().Get("list-type") == "2":
		prefix := r.URL.Query().Get("prefix")
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>state-bucket</Name><IsTruncated>false</IsTruncated>`)
		for k, v := range f.objects {
			if strings.HasPrefix(k, prefix) {
				fmt.Fprintf(&b, `<Contents><Key>%s</Key><Size>%d</Size><LastModified>2026-12-01T09:30:00.000Z</LastModified><ETag>"e"</ETag></Contents>`, k, len(v))
			}
		}
		b.WriteString(`</ListBucketResult>`)
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, b.String())
	case !ok:
		s3Error(w, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
	case r.Method == http.MethodPut:
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("If-None-Match") == "*" {
			f.conditional++
			if f.conflicts > 0 {
				f.conflicts--
				s3Error(w, http.StatusConflict, "ConditionalRequestConflict", "A conflicting conditional operation is currently in progress against this resource.")
				return
			}
			if _, exists := f.objects[key]; exists {
				s3Error(w, http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
				return
			}
		}
		f.objects[key] = body
		w.Header().Set("ETag", `"e"`)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		v, exists := f.objects[key]
		if !exists {
			s3Error(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(v)))
		w.Header().Set("Last-Modified", "Tue, 01 Dec 2026 09:30:00 GMT")
		w.Header().Set("ETag", `"e"`)
		if r.Method == http.MethodGet {
			w.Write(v)
		}
	case r.Method == http.MethodDelete:
		delete(f.objects, key)
		w.WriteHeader(http.StatusNoContent)
	default:
		s3Error(w, http.StatusNotImplemented, "NotImplemented", r.Method+" "+r.URL.String())
	}
}

func s3Store(t *testing.T, f *fakeS3) *Store {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	s, err := Open(context.Background(), "s3://state-bucket/team-a?region=us-east-1&use_path_style=true&endpoint="+srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestS3LockUsesConditionalWrites(t *testing.T) {
	f := &fakeS3{objects: map[string][]byte{}, conflicts: 1}
	s := s3Store(t, f)
	ctx := context.Background()
	first := Me("deploy", newID(t0), t0)
	// The first conditional write meets a 409 ConditionalRequestConflict;
	// Acquire retries as AWS says to, and wins.
	l, err := s.Acquire(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.objects["team-a/"+LockKey]; !ok || f.conditional != 2 {
		t.Fatalf("lock objects %v, %d conditional writes", keys(f.objects), f.conditional)
	}
	// The second operator gets 412 and a HeldError naming the first.
	_, err = s.Acquire(ctx, Me("deploy", newID(t0.Add(time.Minute)), t0))
	var he *HeldError
	if !errors.As(err, &he) || he.Holder.Nonce != first.Nonce {
		t.Fatalf("second acquire: %v", err)
	}
	// Documents beside the lock (the executor's records) live under the
	// backend's prefix too.
	if err := s.Bucket().WriteAll(ctx, RecordPrefix+first.ID+".json", []byte("{}"), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.objects["team-a/"+RecordPrefix+first.ID+".json"]; !ok {
		t.Fatalf("record objects %v", keys(f.objects))
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if h, err := s.Holder(ctx); h != nil || err != nil {
		t.Errorf("after release: %v %v", h, err)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
