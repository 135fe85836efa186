package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"

	"gocloud.dev/gcerrors"
)

// A diy backend (a directory or an S3 bucket) keeps each stack's state in
// one checkpoint, .pulumi/stacks/<project>/<stack>.json (or .json.gz). A
// truncated or otherwise broken one used to read as "never updated, 0
// resources" in status, and made an up fail late with "unexpected end of
// JSON input" and no file named. It is checked before any operation opens
// the stack.

// CorruptStateError says a stack's checkpoint cannot be read, which file
// it is, and the copies it can be restored from.
type CorruptStateError struct {
	Stack string
	File  string
	Err   error
	// Backup is the previous checkpoint pulumi kept (<file>.bak), when it
	// exists and reads; History the checkpoints of earlier updates in the
	// backend's history, newest first.
	Backup  string
	History []string
	// Copy is the command that copies one of them over File ("cp"; the
	// AWS CLI's for an S3 backend).
	Copy string
}

func (e *CorruptStateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the state of stack %s is corrupt: %s: %v; nothing was run.\n", e.Stack, e.File, e.Err)
	b.WriteString("Restore the last good checkpoint (keep the broken file aside first), then reconcile it with the cloud:\n")
	cp := e.Copy
	if cp == "" {
		cp = "cp"
	}
	n := 1
	if e.Backup != "" {
		fmt.Fprintf(&b, "  %d. the previous checkpoint pulumi kept: %s %s %s\n", n, cp, e.Backup, e.File)
		n++
	}
	if len(e.History) > 0 {
		fmt.Fprintf(&b, "  %d. or the newest checkpoint in the backend's history: %s %s %s\n", n, cp, e.History[0], e.File)
		n++
	}
	if n == 1 {
		fmt.Fprintf(&b, "  %d. no backup (%s.bak) or history checkpoint (.pulumi/history/) exists: restore %s from your own copy of the backend\n", n, e.File, e.File)
		n++
	}
	fmt.Fprintf(&b, "  %d. or import a good export: pulumi stack import --stack %s --file <export.json> (a `pulumi stack export` taken earlier)\n", n, e.Stack)
	fmt.Fprintf(&b, "then `cellctl up %s --refresh`: a restored checkpoint can miss the last update's changes, which the refresh reads back from the cloud.", e.Stack)
	return b.String()
}

func (e *CorruptStateError) Unwrap() error { return e.Err }

// checkCheckpoint reports a diy backend's checkpoint of stack (a file
// backend's or an S3 bucket's) that is not a readable checkpoint, with the
// copies it can be restored from. Backends only the CLI reads, and a stack
// without a checkpoint yet, pass: the backend reads those itself, as it
// does when the bucket cannot be opened (the operation then fails on it).
func (e *Engine) checkCheckpoint(stack string) error {
	ctx := context.Background()
	bl, ok, err := e.blobs(ctx)
	if !ok || err != nil {
		return nil
	}
	_, err = e.checkedRead(ctx, bl, stack)
	return err
}

// checkedCheckpoint is readCheckpoint for a reader that needs the
// checkpoint whole: the one read of it, judged as checkCheckpoint judges
// it (a broken one is a *CorruptStateError naming its copies) — so a
// status or an outputs read costs one GET of an S3 checkpoint, not two.
func (e *Engine) checkedCheckpoint(ctx context.Context, stack string) ([]byte, bool, error) {
	bl, ok, err := e.blobs(ctx)
	if !ok || err != nil {
		return nil, ok, err
	}
	data, err := e.checkedRead(ctx, bl, stack)
	return data, true, err
}

// checkedRead reads stack's checkpoint from bl once and judges it: nil,
// nil when there is none yet; a file backend's file gets its permissions
// repaired (repairAttrs).
func (e *Engine) checkedRead(ctx context.Context, bl stateBlobs, stack string) ([]byte, error) {
	data, key, err := e.readCheckpointFrom(ctx, bl, stack)
	if err == nil && data == nil {
		return nil, nil
	}
	if err == nil {
		err = validCheckpoint(data)
	}
	if err == nil {
		if dir, isDir := bl.(dirBlobs); isDir {
			return data, e.repairAttrs(stack, dir.path(key))
		}
		return data, nil
	}
	if errors.Is(err, os.ErrPermission) || gcerrors.Code(err) == gcerrors.PermissionDenied {
		return nil, fmt.Errorf("stack %s: reading its state: %w", stack, err)
	}
	ce := &CorruptStateError{Stack: stack, File: bl.where(key), Err: err, Copy: copyCommand(bl)}
	if bak, err := bl.read(ctx, key+".bak"); err == nil && validCheckpoint(bak) == nil {
		ce.Backup = bl.where(key + ".bak")
	}
	dir := e.historyDir(stack)
	if names, err := bl.list(ctx, dir); err == nil {
		for _, n := range names {
			if !strings.HasSuffix(n, ".checkpoint.json") {
				continue
			}
			if data, err := bl.read(ctx, dir+"/"+n); err == nil && validCheckpoint(data) == nil {
				ce.History = append(ce.History, bl.where(dir+"/"+n))
			}
		}
		// Names end in the update's timestamp: newest last.
		sort.Sort(sort.Reverse(sort.StringSlice(ce.History)))
	}
	return nil, ce
}

// copyCommand is how an operator copies one object of the backend over
// another: cp for a directory; the AWS CLI for a bucket, pointed at the
// backend URL's own endpoint when it names one (a self-hosted S3).
func copyCommand(bl stateBlobs) string {
	b, isBucket := bl.(bucketBlobs)
	if !isBucket {
		return "cp"
	}
	if u, err := url.Parse(b.url); err == nil {
		if ep := u.Query().Get("endpoint"); ep != "" {
			return "aws s3 cp --endpoint-url " + ep
		}
	}
	return "aws s3 cp"
}

// validCheckpoint checks that data is a checkpoint document: a JSON
// object with a version and a checkpoint whose latest deployment, when
// there is one, is an object.
func validCheckpoint(data []byte) error {
	var cp struct {
		Version    *int `json:"version"`
		Checkpoint *struct {
			Latest json.RawMessage `json:"latest"`
		} `json:"checkpoint"`
	}
	if err := json.Unmarshal(data, &cp); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset >= int64(len(data)) {
			return fmt.Errorf("%v: the file ends after %d bytes (truncated)", err, len(data))
		}
		if errors.As(err, &se) {
			return fmt.Errorf("%v at byte %d of %d", err, se.Offset, len(data))
		}
		return err
	}
	if cp.Version == nil || cp.Checkpoint == nil {
		return errors.New("not a pulumi checkpoint (no version or checkpoint)")
	}
	if l := strings.TrimSpace(string(cp.Checkpoint.Latest)); l != "" && l != "null" && !strings.HasPrefix(l, "{") {
		return errors.New("the checkpoint's latest deployment is not an object")
	}
	return nil
}

// repairAttrs removes a checkpoint's metadata sidecar (<file>.attrs) that
// a killed pulumi left empty or half written. The file backend
// (gocloud.dev/blob/fileblob) writes it with a plain create-and-write
// before renaming the new checkpoint into place, so a SIGKILL between the
// two leaves an empty .attrs beside the previous, intact checkpoint, and
// every later load fails with "failed to load checkpoint: EOF". It holds
// only a content type and an MD5 that nothing verifies on read; without
// it the backend uses defaults. Only a sidecar that is not JSON is
// removed, and only beside a checkpoint that reads.
func (e *Engine) repairAttrs(stack, file string) error {
	attrs := file + ".attrs"
	data, err := os.ReadFile(attrs)
	if err != nil {
		return nil // none, or the backend reports what it cannot read
	}
	var v map[string]any
	if json.Unmarshal(data, &v) == nil {
		return nil
	}
	if err := os.Remove(attrs); err != nil {
		return fmt.Errorf("stack %s: %s is broken (%d bytes, a killed pulumi's half write) and cannot be removed: %w; remove it by hand",
			stack, attrs, len(data), err)
	}
	if e.opts.Log == nil {
		return nil
	}
	fmt.Fprintf(e.opts.Log, "%s: removed %s: the checkpoint's metadata file was left %s by a killed pulumi (the checkpoint itself reads; only its content type and checksum were in it)\n",
		stack, attrs, map[bool]string{true: "empty", false: "half written"}[len(data) == 0])
	return nil
}
