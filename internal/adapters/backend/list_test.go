package backend

import (
	"context"
	"errors"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/waves/executor"
)

func TestListIsNewestFirstAndSkipsForeignKeys(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	s := New(rollout.NewStore(bucket))
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, id := range []string{"r-000000000001", "r-000000000002"} {
		if err := s.Save(ctx, &executor.Record{ID: id, State: executor.Complete, Started: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := bucket.WriteAll(ctx, rollout.RecordPrefix+"notes.txt", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.List(ctx)
	if err != nil || len(got) != 2 || got[0].ID != "r-000000000002" || got[1].ID != "r-000000000001" {
		t.Fatalf("List: %+v %v", got, err)
	}
	if err := bucket.WriteAll(ctx, rollout.RecordPrefix+"r-000000000003.json", []byte("{"), nil); err != nil {
		t.Fatal(err)
	}
	got, err = s.List(ctx)
	var ue *UnreadableError
	if !errors.As(err, &ue) || len(ue.Records) != 1 || ue.Records[0].ID != "r-000000000003" {
		t.Fatalf("a corrupt record: %v, want an UnreadableError naming r-000000000003", err)
	}
	if len(got) != 2 || got[0].ID != "r-000000000002" {
		t.Errorf("a corrupt record hid the readable ones: %+v", got)
	}
}
