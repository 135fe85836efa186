package rollout_test

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/cellctl/cellctl/internal/rollout"
)

// Pulumi documents s3://bucket?endpoint=host:port&disableSSL=true&s3ForcePathStyle=true
// for a self-hosted S3 such as MinIO, and the pulumi CLI logs in with it
// (it translates the AWS SDK v1 names gocloud.dev no longer knows). cellctl
// opens its own records in that backend with the same URL: it must open
// the same bucket the same way — the lock and records land beside
// Pulumi's .pulumi/ under the URL's prefix, over plain HTTP.
func TestOpenPulumisSelfHostedS3URL(t *testing.T) {
	mem := s3mem.New()
	if err := mem.CreateBucket("cells-state"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAGOFAKES3")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "gofakes3")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_REQUEST_CHECKSUM_CALCULATION", "")

	for _, tc := range []struct{ name, url, prefix string }{
		{"documented form", "s3://cells-state?endpoint=" + host + "&disableSSL=true&s3ForcePathStyle=true", ""},
		{"with a prefix", "s3://cells-state/team-a?endpoint=" + host + "&disableSSL=true&s3ForcePathStyle=true", "team-a/"},
		{"explicit scheme wins over disableSSL", "s3://cells-state/team-b?endpoint=" + srv.URL + "&disableSSL=true&s3ForcePathStyle=true", "team-b/"},
		{"disableSSL=false with an http endpoint", "s3://cells-state/team-c?endpoint=" + srv.URL + "&disableSSL=false&use_path_style=true", "team-c/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := rollout.Open(ctx, tc.url)
			if err != nil {
				t.Fatalf("Open(%s): %v", tc.url, err)
			}
			defer s.Close()
			lock, err := s.Acquire(ctx, rollout.Me("deploy", "r-0123456789ab", t0))
			if err != nil {
				t.Fatalf("taking the lock through %s: %v", tc.url, err)
			}
			obj, err := mem.GetObject("cells-state", tc.prefix+rollout.LockKey, nil)
			if err != nil {
				t.Fatalf("the lock is not at %s%s in the bucket: %v", tc.prefix, rollout.LockKey, err)
			}
			body, _ := io.ReadAll(obj.Contents)
			obj.Contents.Close()
			if !strings.Contains(string(body), "r-0123456789ab") {
				t.Errorf("the lock object holds %s", body)
			}
			if err := lock.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A disableSSL that is not a boolean is refused as the pulumi CLI refuses
// it, naming the parameter.
func TestOpenRefusesABadDisableSSL(t *testing.T) {
	_, err := rollout.Open(context.Background(), "s3://cells-state?endpoint=127.0.0.1:9000&disableSSL=maybe")
	if err == nil || !strings.Contains(err.Error(), `"disableSSL"`) {
		t.Fatalf("Open with disableSSL=maybe: %v, want an error naming disableSSL", err)
	}
}

// Reading from a self-hosted S3 (which sends no response checksums) prints
// nothing: the v2 SDK validates responses only when required there, so it
// never logs "Response has no supported checksum" on cellctl's stderr —
// once for every stack's state and record a command reads.
func TestAnS3WithoutChecksumsReadsQuietly(t *testing.T) {
	mem := s3mem.New()
	if err := mem.CreateBucket("cells-state"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(srv.Close)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "AKIAGOFAKES3", "AWS_SECRET_ACCESS_KEY": "gofakes3", "AWS_REGION": "us-east-1",
		"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_REQUEST_CHECKSUM_CALCULATION": "", "AWS_RESPONSE_CHECKSUM_VALIDATION": ""} {
		t.Setenv(k, v)
	}
	// The SDK's logger writes to the os.Stderr of when the bucket opens.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = stderr }()
	ctx := context.Background()
	s, err := rollout.Open(ctx, "s3://cells-state?endpoint="+srv.URL+"&s3ForcePathStyle=true")
	if err == nil {
		if err = s.Bucket().WriteAll(ctx, "a/b.json", []byte("{}"), nil); err == nil {
			_, err = s.ReadBucket().ReadAll(ctx, "a/b.json")
		}
		s.Close()
	}
	os.Stderr = stderr
	w.Close()
	printed, _ := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(printed) > 0 {
		t.Errorf("reading an object printed on stderr:\n%s", printed)
	}
}
