package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/rollout"
)

// A diy backend — a directory (file://) or an S3 bucket (s3://) — keeps a
// stack's state in files the engine can read without the pulumi CLI: the
// checkpoint .pulumi/stacks/<project>/<stack>.json[.gz] (what `stack
// export`, `stack output` and `stack select` read) and the history
// .pulumi/history/<project>/<stack>/ (`stack history`). Each start of the
// CLI costs about a third of a CPU-second before it does anything (and a
// key derivation where it decrypts); status ran it five times a stack.
// stateBlobs is that one reader for both kinds of backend, so the file
// and the S3 backends read a stack's state the same way.
type stateBlobs interface {
	// read returns an object's content; an error matching fs.ErrNotExist
	// when there is none.
	read(ctx context.Context, key string) ([]byte, error)
	// exists says whether the object is there.
	exists(ctx context.Context, key string) (bool, error)
	// list names the objects directly under the directory dir (a key
	// prefix without its trailing slash); none when there is none.
	list(ctx context.Context, dir string) ([]string, error)
	// where names a key for the operator (a path, or an s3:// URL).
	where(key string) string
}

// dirBlobs is a file backend's directory.
type dirBlobs struct{ root string }

func (d dirBlobs) path(key string) string { return filepath.Join(d.root, filepath.FromSlash(key)) }

func (d dirBlobs) read(_ context.Context, key string) ([]byte, error) {
	return os.ReadFile(d.path(key))
}

func (d dirBlobs) exists(_ context.Context, key string) (bool, error) {
	st, err := os.Stat(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil && st.Mode().IsRegular(), err
}

func (d dirBlobs) list(_ context.Context, dir string) ([]string, error) {
	entries, err := os.ReadDir(d.path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, en := range entries {
		if en.Type().IsRegular() {
			names = append(names, en.Name())
		}
	}
	return names, nil
}

func (d dirBlobs) where(key string) string { return d.path(key) }

// bucketBlobs is an S3 backend's bucket, opened as cellctl's rollout
// records open it (rollout.Open: the URL's query as the pulumi CLI reads
// it, the AWS SDK's credentials from the environment).
type bucketBlobs struct {
	b   *blob.Bucket
	url string
}

func (s bucketBlobs) read(ctx context.Context, key string) ([]byte, error) {
	data, err := s.b.ReadAll(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("%s: %w", s.where(key), fs.ErrNotExist)
	}
	return data, err
}

func (s bucketBlobs) exists(ctx context.Context, key string) (bool, error) {
	return s.b.Exists(ctx, key)
}

func (s bucketBlobs) list(ctx context.Context, dir string) ([]string, error) {
	it := s.b.List(&blob.ListOptions{Prefix: dir + "/", Delimiter: "/"})
	var names []string
	for {
		obj, err := it.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return names, nil
			}
			return nil, err
		}
		if !obj.IsDir {
			names = append(names, path.Base(obj.Key))
		}
	}
}

func (s bucketBlobs) where(key string) string {
	u, _, _ := strings.Cut(s.url, "?")
	return strings.TrimSuffix(u, "/") + "/" + key
}

// blobs is the fleet backend's reader; ok is false for a backend only the
// CLI reads (the Pulumi Cloud, a diy backend on another store, or one in
// pulumi's legacy layout whose stacks are not kept by project). The
// bucket is opened once per engine.
func (e *Engine) blobs(ctx context.Context) (stateBlobs, bool, error) {
	e.blobsOnce.Do(func() { e.stateBlobs, e.blobsErr = e.openBlobs(ctx) })
	return e.stateBlobs, e.stateBlobs != nil, e.blobsErr
}

func (e *Engine) openBlobs(ctx context.Context) (stateBlobs, error) {
	var bl stateBlobs
	switch {
	case strings.HasPrefix(e.backend, "file://"):
		root, _ := strings.CutPrefix(e.backend, "file://")
		bl = dirBlobs{root: filepath.FromSlash(root)}
	case strings.HasPrefix(e.backend, "s3://"):
		rs, err := rollout.Open(ctx, e.backend)
		if err != nil {
			return nil, err
		}
		bl = bucketBlobs{b: rs.ReadBucket(), url: e.backend}
	default:
		return nil, nil
	}
	// pulumi's diy backends keep stacks by project since meta.yaml's
	// version 1 (an empty backend gets it with its first stack); a
	// backend in the legacy layout (no meta.yaml, stacks directly under
	// .pulumi/stacks/) is left to the CLI.
	meta, err := bl.read(ctx, ".pulumi/meta.yaml")
	if errors.Is(err, fs.ErrNotExist) {
		legacy, err := bl.list(ctx, ".pulumi/stacks")
		if err != nil {
			return nil, fmt.Errorf("listing the backend's %s: %w", bl.where(".pulumi/stacks/"), err)
		}
		for _, n := range legacy {
			if strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.gz") {
				return nil, nil
			}
		}
		return bl, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the backend's %s: %w", bl.where(".pulumi/meta.yaml"), err)
	}
	var m struct {
		Version int `yaml:"version"`
	}
	if yaml.Unmarshal(meta, &m) != nil || m.Version != 1 {
		return nil, nil
	}
	return bl, nil
}

// stackKey is the key of a stack's checkpoint in a diy backend.
func (e *Engine) stackKey(stack string) string {
	return ".pulumi/stacks/" + e.opts.Fleet.Project + "/" + stack + ".json"
}

// historyDir is the key prefix of a stack's history in a diy backend.
func (e *Engine) historyDir(stack string) string {
	return ".pulumi/history/" + e.opts.Fleet.Project + "/" + stack
}
