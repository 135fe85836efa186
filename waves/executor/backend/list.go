package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"gocloud.dev/blob"

	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/waves/executor"
)

// List reads every executor rollout record in the backend, newest start
// first. A key that is not a record id this package writes (the older
// internal/rollout records share the prefix) is skipped; a record that
// does not read is an error naming it.
func (b *Store) List(ctx context.Context) ([]*executor.Record, error) {
	it := b.s.ReadBucket().List(&blob.ListOptions{Prefix: rollout.RecordPrefix})
	var out []*executor.Record
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
			return nil, err
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out, nil
}
