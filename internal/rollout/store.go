package rollout

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/smithy-go"
	"github.com/cellctl/cellctl/internal/safefile"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob" // s3:// backends, as Pulumi's own
	"gocloud.dev/gcerrors"
)

// Keys inside the backend bucket, beside Pulumi's own .pulumi/.
const (
	RecordPrefix = ".cellctl/rollouts/"
	// LockKey is the fleet lock. It keeps the path of the rollout lock
	// it grew from, so a lock an older cellctl left still locks.
	LockKey = ".cellctl/locks/rollout.json"
	// OverridePrefix holds the audit records of emergency lock overrides.
	OverridePrefix = ".cellctl/locks/overrides/"
)

// errExists is a create-if-absent that found the object present.
var errExists = errors.New("already exists")

// errConflict is S3's 409 ConditionalRequestConflict: another conditional
// write to the key was in flight. AWS says to retry.
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
var errConflict = errors.New("a concurrent conditional write")

// Store is the fleet lock in a Pulumi backend, and the backend's bucket
// the rollout executor keeps its records in (internal/adapters/backend: the
// one record type is executor.Record).
type Store struct {
	bucket *blob.Bucket
	// dir is the bucket's directory for a file:// backend: the lock is
	// created there with a hard link, which the filesystem makes atomic
	// across processes (fileblob's IfNotExist only guards one process).
	dir string
	// Now is the clock (tests set it).
	Now func() time.Time

	// pendingDir is a file backend's directory that does not exist yet:
	// reads see an empty store and create nothing (a dry run on a fresh
	// clone must leave no .cellctl/state behind); the first write creates
	// it and opens the real bucket there.
	mu         sync.Mutex
	pendingDir string
}

// Open opens the store of a Pulumi backend URL: file://<dir> (a relative
// dir is taken from the working directory, ~ is the home directory) or
// s3://<bucket>[/<prefix>][?region=…&endpoint=…], as `pulumi login` takes
// them — Pulumi's AWS SDK v1-era parameters included (pulumiS3Params).
func Open(ctx context.Context, backend string) (*Store, error) {
	u, err := url.Parse(backend)
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", backend, err)
	}
	switch u.Scheme {
	case "file":
		path := strings.TrimPrefix(backend, "file://")
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		if path == "~" || strings.HasPrefix(path, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("backend %q: %w", backend, err)
			}
			path = filepath.Join(home, strings.TrimPrefix(path, "~"))
		}
		if path == "" {
			return nil, fmt.Errorf("backend %q: file:// needs a directory", backend)
		}
		abs, err := filepath.Abs(filepath.FromSlash(path))
		if err != nil {
			return nil, fmt.Errorf("backend %q: %w", backend, err)
		}
		if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
			return &Store{bucket: memblob.OpenBucket(nil), pendingDir: abs}, nil
		}
		b, err := fileblob.OpenBucket(abs, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
		if err != nil {
			return nil, fmt.Errorf("backend %q: %w", backend, err)
		}
		return &Store{bucket: b, dir: abs}, nil
	case "s3":
		prefix := strings.Trim(u.Path, "/")
		u.Path = ""
		if err := pulumiS3Params(u); err != nil {
			return nil, fmt.Errorf("backend %q: %w", backend, err)
		}
		b, err := blob.OpenBucket(ctx, u.String())
		if err != nil {
			return nil, fmt.Errorf("backend %q: %w", backend, err)
		}
		if prefix != "" {
			b = blob.PrefixedBucket(b, prefix+"/")
		}
		return &Store{bucket: b}, nil
	}
	return nil, fmt.Errorf("backend %q: rollout records need a file:// or s3:// backend (the Pulumi Cloud backend has no bucket cellctl can write to)", backend)
}

// pulumiS3Params rewrites an s3:// URL's query as the pulumi CLI's own
// backend does before it opens the bucket (pulumi/pkg/backend/diy,
// translateLegacyS3Params), so every URL `pulumi login` accepts opens the
// same bucket the same way here. gocloud.dev's s3blob (AWS SDK v2) refuses
// the v1 name disableSSL and needs a scheme on the endpoint; Pulumi's
// documented form for a self-hosted S3 such as MinIO has both
// (s3://bucket?endpoint=host:port&disableSSL=true&s3ForcePathStyle=true):
//
//   - disableSSL becomes disable_https, or is dropped when the endpoint
//     names its scheme (the v1 SDK only used it to pick one);
//   - a scheme-less endpoint gets http:// (disableSSL) or https://;
//   - with an endpoint (a store other than AWS), request checksums are
//     sent only when required, unless the URL or
//     AWS_REQUEST_CHECKSUM_CALCULATION says otherwise: the v2 SDK's
//     default streamed CRC32 is refused by some S3-compatible stores;
//     and responses are validated only when required, unless the URL or
//     AWS_RESPONSE_CHECKSUM_VALIDATION says otherwise: such a store sends
//     no checksum, and the SDK then prints "SDK … DEBUG Response has no
//     supported checksum" on stderr for every object read (each stack's
//     state, each record), which the pulumi CLI's v1 SDK never checked.
//
// s3ForcePathStyle and awssdk gocloud.dev still understands.
func pulumiS3Params(u *url.URL) error {
	q := u.Query()
	disableSSL := false
	if v, ok := q["disableSSL"]; ok {
		b, err := strconv.ParseBool(v[len(v)-1])
		if err != nil {
			return fmt.Errorf("invalid value for query parameter %q: %w", "disableSSL", err)
		}
		disableSSL = b
		q.Del("disableSSL")
		if !strings.Contains(q.Get("endpoint"), "://") {
			q.Set("disable_https", strconv.FormatBool(disableSSL))
		}
	}
	if ep := q.Get("endpoint"); ep != "" {
		if !strings.Contains(ep, "://") {
			scheme := "https"
			if disableSSL {
				scheme = "http"
			}
			q.Set("endpoint", scheme+"://"+ep)
		}
		if q.Get("request_checksum_calculation") == "" && os.Getenv("AWS_REQUEST_CHECKSUM_CALCULATION") == "" {
			q.Set("request_checksum_calculation", "when_required")
		}
		if q.Get("response_checksum_validation") == "" && os.Getenv("AWS_RESPONSE_CHECKSUM_VALIDATION") == "" {
			q.Set("response_checksum_validation", "when_required")
		}
	}
	u.RawQuery = q.Encode()
	return nil
}

// NewStore wraps an open bucket (memblob in tests). Its create-if-absent is
// the bucket's IfNotExist write.
func NewStore(b *blob.Bucket) *Store { return &Store{bucket: b} }

// Close releases the bucket.
func (s *Store) Close() error { return s.b().Close() }

// b is the bucket (swapped once by materialize).
func (s *Store) b() *blob.Bucket {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bucket
}

// materialize creates a pending file backend directory and opens the
// bucket there, before the first write.
func (s *Store) materialize() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pendingDir == "" {
		return nil
	}
	if err := os.MkdirAll(s.pendingDir, 0o755); err != nil {
		return fmt.Errorf("backend %s: %w", s.pendingDir, err)
	}
	b, err := fileblob.OpenBucket(s.pendingDir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		return fmt.Errorf("backend %s: %w", s.pendingDir, err)
	}
	_ = s.bucket.Close()
	s.bucket, s.dir, s.pendingDir = b, s.pendingDir, ""
	return nil
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// createExclusive writes key only if it does not exist yet, atomically:
// of two writers, exactly one succeeds and the other gets errExists.
func (s *Store) createExclusive(ctx context.Context, key string, data []byte) error {
	if err := s.materialize(); err != nil {
		return err
	}
	if s.dir != "" {
		path := filepath.Join(s.dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		// The filesystem decides the race: the file appears complete or
		// not at all, and only one creator wins.
		if err := safefile.Create(path, data, 0o644); err != nil {
			if errors.Is(err, os.ErrExist) {
				return errExists
			}
			return err
		}
		return nil
	}
	err := s.b().WriteAll(ctx, key, data, &blob.WriterOptions{IfNotExist: true, ContentType: "application/json"})
	var api smithy.APIError
	switch {
	case gcerrors.Code(err) == gcerrors.FailedPrecondition:
		return errExists
	case errors.As(err, &api) && api.ErrorCode() == "ConditionalRequestConflict":
		return errConflict
	}
	return err
}

// readBytes reads an object; found is false when it does not exist.
func (s *Store) readBytes(ctx context.Context, key string) ([]byte, bool, error) {
	data, err := s.b().ReadAll(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, false, nil
	}
	return data, err == nil, err
}

func (s *Store) delete(ctx context.Context, key string) error {
	err := s.b().Delete(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil
	}
	return err
}
