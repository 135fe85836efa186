package rollout_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/waves/executor"
)

// faultProxy stands between the store and a real S3 implementation
// (gofakes3) and makes the backend itself fail: unreachable (every
// connection dropped), conditional writes that conflict (409
// ConditionalRequestConflict) or are refused (412 PreconditionFailed)
// without writing, and reads that lag writes (a key read within staleFor
// of its last PUT is NoSuchKey, as an eventually consistent S3-compatible
// store answers).
type faultProxy struct {
	rp *httputil.ReverseProxy

	mu            sync.Mutex
	down          bool
	conflicts     int
	preconditions int
	staleFor      time.Duration
	lastPut       map[string]time.Time
}

func s3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>R1</RequestId></Error>`, code, msg)
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	down := p.down
	conditional := r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*"
	var fault func()
	switch {
	case down:
	case conditional && p.conflicts > 0:
		p.conflicts--
		fault = func() {
			s3Error(w, http.StatusConflict, "ConditionalRequestConflict", "A conflicting conditional operation is currently in progress against this resource.")
		}
	case conditional && p.preconditions > 0:
		p.preconditions--
		fault = func() {
			s3Error(w, http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
		}
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && p.staleFor > 0 && time.Since(p.lastPut[r.URL.Path]) < p.staleFor:
		fault = func() { s3Error(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.") }
	}
	p.mu.Unlock()
	if down {
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("no hijacker")
		}
		conn, _, _ := hj.Hijack()
		conn.Close()
		return
	}
	if fault != nil {
		fault()
		return
	}
	if r.Method != http.MethodPut {
		p.rp.ServeHTTP(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	p.rp.ServeHTTP(sw, r)
	if sw.status < 300 { // only a write that happened starts the lag
		p.set(func(p *faultProxy) { p.lastPut[r.URL.Path] = time.Now() })
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (p *faultProxy) set(fn func(p *faultProxy)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(p)
}

// faultyBackend is a gofakes3 bucket behind a faultProxy, and a function
// opening a store on it (one per operator).
func faultyBackend(t *testing.T) (*faultProxy, func() *rollout.Store) {
	t.Helper()
	mem := s3mem.New()
	if err := mem.CreateBucket("cells-state"); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(s3.Close)
	target, _ := url.Parse(s3.URL)
	p := &faultProxy{rp: httputil.NewSingleHostReverseProxy(target), lastPut: map[string]time.Time{}}
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAGOFAKES3")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "gofakes3")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_MAX_ATTEMPTS", "2") // fail fast when the backend is down
	backendURL := "s3://cells-state/team?region=us-east-1&s3ForcePathStyle=true&endpoint=" + front.URL
	return p, func() *rollout.Store {
		s, err := rollout.Open(context.Background(), backendURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func holder(id string) rollout.Holder { return rollout.Me("deploy", id, t0) }

// The bucket unreachable: taking the lock, checking it and saving the
// record each fail with a clear error — never "held by nobody", never a
// second holder — and once the bucket is back the record is the last one
// saved and the rollout continues under the lock it had.
func TestBackendUnreachableFailsClosedAndResumes(t *testing.T) {
	p, open := faultyBackend(t)
	ctx := context.Background()
	a, b := open(), open()
	h := holder("r-0123456789ab")
	lock, err := a.Acquire(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	records := backend.New(a)
	rec := &executor.Record{ID: h.ID, State: executor.Running, Holder: h, Started: t0, Updated: t0,
		Waves: []executor.WaveRecord{{Name: "canary", State: executor.WaveDone}, {Name: "wave-1", State: executor.WaveBaking}}}
	if err := records.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}

	p.set(func(p *faultProxy) { p.down = true })
	next := *rec
	next.Waves = []executor.WaveRecord{{Name: "canary", State: executor.WaveDone}, {Name: "wave-1", State: executor.WaveDone}}
	if err := records.Save(ctx, &next); err == nil || !strings.Contains(err.Error(), "writing rollout "+h.ID) {
		t.Fatalf("a save to an unreachable bucket must fail naming the rollout: %v", err)
	}
	_, err = b.Acquire(ctx, holder("r-ba9876543210"))
	var held *rollout.HeldError
	if err == nil || errors.As(err, &held) || !strings.Contains(err.Error(), "fleet lock") {
		t.Fatalf("taking the lock with the bucket unreachable must fail as an error, not a holder: %v", err)
	}
	if ok, err := lock.StillHeld(ctx); err == nil || ok {
		t.Fatalf("the holder cannot confirm its lock while the bucket is unreachable: %v %v", ok, err)
	}

	p.set(func(p *faultProxy) { p.down = false })
	got, err := records.Load(ctx, h.ID)
	if err != nil || got.Waves[1].State != executor.WaveBaking {
		t.Fatalf("the record after the outage is the last one saved (wave-1 baking): %+v %v", got, err)
	}
	if ok, err := lock.StillHeld(ctx); err != nil || !ok {
		t.Fatalf("the lock survives the outage: %v %v", ok, err)
	}
	if _, err := b.Acquire(ctx, holder("r-ba9876543210")); !errors.As(err, &held) || held.Holder.Nonce != h.Nonce {
		t.Fatalf("the other operator is refused by the first holder: %v", err)
	}
	if err := records.Save(ctx, &next); err != nil {
		t.Fatalf("the resumed save: %v", err)
	}
}

// Conditional writes that conflict (409) are retried as AWS says; when
// they keep conflicting, or are refused (412) for a lock nobody can read,
// Acquire gives up with an error and nobody holds the fleet.
func TestConflictingConditionalWrites(t *testing.T) {
	p, open := faultyBackend(t)
	ctx := context.Background()
	s := open()
	p.set(func(p *faultProxy) { p.conflicts = 2 })
	h := holder("r-0123456789ab")
	lock, err := s.Acquire(ctx, h)
	if err != nil {
		t.Fatalf("two 409s, then the write: %v", err)
	}
	if cur, err := s.Holder(ctx); err != nil || cur == nil || cur.Nonce != h.Nonce {
		t.Fatalf("holder = %+v, %v", cur, err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}

	for name, fault := range map[string]func(p *faultProxy){
		"409 ConditionalRequestConflict": func(p *faultProxy) { p.conflicts = 50 },
		"412 PreconditionFailed":         func(p *faultProxy) { p.preconditions = 50 },
	} {
		p.set(fault)
		_, err := s.Acquire(ctx, holder("r-ba9876543210"))
		if err == nil || !strings.Contains(err.Error(), "try again") {
			t.Errorf("%s on every write: want a clear error, got %v", name, err)
		}
		if cur, err := s.Holder(ctx); cur != nil || err != nil {
			t.Errorf("%s: nobody may hold the fleet after the refusal, found %+v %v", name, cur, err)
		}
		p.set(func(p *faultProxy) { p.conflicts, p.preconditions = 0, 0 })
	}
}

// Operators racing for the lock on a real S3 implementation's conditional
// PUT: exactly one holds it, every other is told who.
func TestOneHolderUnderContention(t *testing.T) {
	_, open := faultyBackend(t)
	ctx := context.Background()
	const n = 8
	stores := make([]*rollout.Store, n)
	for i := range stores {
		stores[i] = open()
	}
	var wg sync.WaitGroup
	won := make([]rollout.Holder, 0, 1)
	var mu sync.Mutex
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := holder(fmt.Sprintf("r-%012x", i+1))
			if _, err := stores[i].Acquire(ctx, h); err != nil {
				errs[i] = err
				return
			}
			mu.Lock()
			won = append(won, h)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("%d operators believe they hold the fleet: %+v", len(won), won)
	}
	for i, err := range errs {
		var held *rollout.HeldError
		if err != nil && (!errors.As(err, &held) || held.Holder.Nonce != won[0].Nonce) {
			t.Errorf("operator %d: %v, want held by %s", i, err, won[0])
		}
	}
}

// Reads that lag writes: the second operator's conditional write is
// refused while its read finds no lock yet — it retries until it reads
// the holder and is refused by name, never believing the fleet is free —
// and a release right after the acquire waits for the lock to be readable
// and removes it, rather than leave it holding the fleet.
func TestReadAfterWriteDelay(t *testing.T) {
	p, open := faultyBackend(t)
	ctx := context.Background()
	a, b := open(), open()
	p.set(func(p *faultProxy) { p.staleFor = 400 * time.Millisecond })
	h := holder("r-0123456789ab")
	lock, err := a.Acquire(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Acquire(ctx, holder("r-ba9876543210"))
	var held *rollout.HeldError
	if !errors.As(err, &held) || held.Holder.Nonce != h.Nonce {
		t.Fatalf("while the lock is not yet readable, the second operator must still be refused by its holder: %v", err)
	}

	second := holder("r-0a1b2c3d4e5f")
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l2, err := b.Acquire(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.Release(ctx); err != nil { // within the stale window
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if cur, err := a.Holder(ctx); cur != nil || err != nil {
		t.Fatalf("a release during the read delay left the lock behind: %+v %v", cur, err)
	}
}
