package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"gocloud.dev/blob"

	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/waves/executor"
)

// Unreadable is a record List found but could not read.
type Unreadable struct {
	ID  string
	Key string
	Err error
}

// UnreadableError names the records List could not read. List returns it
// beside every record it could read: one damaged record hides no other.
type UnreadableError struct {
	Records []Unreadable
}

// Any reports whether a record that does not read has an id starting
// with prefix (r-, c-, s-: of that kind), so a reader that needs only one
// kind fails closed on that kind alone.
func (e *UnreadableError) Any(prefix string) bool {
	for _, u := range e.Records {
		if strings.HasPrefix(u.ID, prefix) {
			return true
		}
	}
	return false
}

func (e *UnreadableError) Error() string {
	var b strings.Builder
	for i, u := range e.Records {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "record %s cannot be read (%s: %v)", u.ID, u.Key, u.Err)
	}
	b.WriteString(": restore the object from the backend's versioning or backup; remove it only if that rollout is over and its history is not needed")
	return b.String()
}

// List reads every record in the backend (rollouts, router canaries,
// rotations), newest start first. A key that is not a record id this package writes (the older
// internal/rollout records share the prefix) is skipped. A record that
// does not read is named in an *UnreadableError, returned with all the
// records that did read.
func (b *Store) List(ctx context.Context) ([]*executor.Record, error) {
	it := b.s.ReadBucket().List(&blob.ListOptions{Prefix: rollout.RecordPrefix})
	var out []*executor.Record
	var bad []Unreadable
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("listing rollouts: %w", err)
		}
		id := strings.TrimSuffix(strings.TrimPrefix(obj.Key, rollout.RecordPrefix), ".json")
		if obj.IsDir || !idPattern.MatchString(id) {
			continue
		}
		r, err := b.Load(ctx, id)
		if err != nil {
			bad = append(bad, Unreadable{ID: id, Key: obj.Key, Err: err})
			continue
		}
		out = append(out, r)
	}
	executor.NewestFirst(out)
	if len(bad) > 0 {
		return out, &UnreadableError{Records: bad}
	}
	return out, nil
}
