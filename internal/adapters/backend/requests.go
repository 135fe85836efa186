package backend

import (
	"context"
	"encoding/json"
	"fmt"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/cellctl/cellctl/waves/executor"
)

// RequestPrefix holds operators' requests to running changes (pause,
// abort, approve), one object per record id, beside the records: the
// record is written only by the run holding the fleet lock, a request by
// whoever asks (executor.Request).
const RequestPrefix = ".cellctl/requests/"

func requestKey(id string) (string, error) {
	if !idPattern.MatchString(id) {
		return "", fmt.Errorf("record id %q is not one cellctl made (r-, c-, s- or a- and 12 hex digits)", id)
	}
	return RequestPrefix + id + ".json", nil
}

// Request reads the requests of record id (zero: none).
func (b *Store) Request(ctx context.Context, id string) (executor.Request, error) {
	var q executor.Request
	k, err := requestKey(id)
	if err != nil {
		return q, err
	}
	data, err := b.s.ReadBucket().ReadAll(ctx, k)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return q, nil
	}
	if err != nil {
		return q, fmt.Errorf("reading the requests to %s: %w", id, err)
	}
	if err := json.Unmarshal(data, &q); err != nil {
		return q, fmt.Errorf("the requests to %s (%s) are not valid JSON: %w", id, k, err)
	}
	return q, nil
}

// Ask edits the requests of record id and writes them whole; an empty
// request removes the object.
func (b *Store) Ask(ctx context.Context, id string, fn func(*executor.Request)) error {
	k, err := requestKey(id)
	if err != nil {
		return err
	}
	q, err := b.Request(ctx, id)
	if err != nil {
		return err
	}
	fn(&q)
	if q.Empty() {
		if err := b.s.Bucket().Delete(ctx, k); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return fmt.Errorf("removing the requests to %s: %w", id, err)
		}
		return nil
	}
	data, err := json.MarshalIndent(q, "", "  ")
	if err != nil {
		return err
	}
	if err := b.s.Bucket().WriteAll(ctx, k, append(data, '\n'), &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("writing the requests to %s: %w", id, err)
	}
	return nil
}

var _ executor.Requests = (*Store)(nil)
