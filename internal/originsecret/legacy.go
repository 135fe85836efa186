package originsecret

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"gocloud.dev/gcerrors"

	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/waves/executor"
)

// LegacyKey is where cellctl kept the rotation record before the rotation
// became a step kind of the one record type (executor.Record, in the
// rollout records). A rotation an older cellctl paused or left
// interrupted there resumes: the next `secret rotate` moves its record
// into the rollout records and removes this one.
const LegacyKey = ".cellctl/rotations/origin-verify.json"

// LegacyStore reads and removes the older record in the backend bucket.
type LegacyStore struct{ S *rollout.Store }

// LoadLegacy implements Legacy.
func (l LegacyStore) LoadLegacy(ctx context.Context) ([]byte, error) {
	data, err := l.S.ReadBucket().ReadAll(ctx, LegacyKey)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the rotation record %s: %w", LegacyKey, err)
	}
	return data, nil
}

// RemoveLegacy implements Legacy.
func (l LegacyStore) RemoveLegacy(ctx context.Context) error {
	err := l.S.Bucket().Delete(ctx, LegacyKey)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil
	}
	return err
}

// legacyRecord is the older record's shape.
type legacyRecord struct {
	ID       string     `json:"id"`
	Started  time.Time  `json:"started"`
	Updated  time.Time  `json:"updated"`
	Finished *time.Time `json:"finished,omitempty"`
	Steps    []struct {
		Name     string             `json:"name"`
		Kind     string             `json:"kind"`
		Wave     string             `json:"wave,omitempty"`
		Cells    []string           `json:"cells,omitempty"`
		State    string             `json:"state"`
		Started  *time.Time         `json:"started,omitempty"`
		Finished *time.Time         `json:"finished,omitempty"`
		Verdicts []executor.Verdict `json:"verdicts,omitempty"`
		Error    string             `json:"error,omitempty"`
	} `json:"steps"`
	Notes []string `json:"notes,omitempty"`
}

// migrate reads an older record as the one record type. Its id becomes a
// record id (s- and a digest of the old id, so migrating twice gives the
// same record); its step states become the waves' (pending, updating,
// passed, halted); a step's last verdicts become its one poll.
func migrate(data []byte) (*executor.Record, error) {
	var old legacyRecord
	if err := json.Unmarshal(data, &old); err != nil || old.ID == "" {
		if err == nil {
			err = fmt.Errorf("it names no rotation id")
		}
		// Fail closed: an unreadable record is not "no rotation".
		return nil, fmt.Errorf("the rotation record %s is not valid (%v): restore it from the backend's versioning, or remove it only if no rotation is under way", LegacyKey, err)
	}
	sum := sha256.Sum256([]byte(old.ID))
	rec := &executor.Record{
		ID: "s-" + hex.EncodeToString(sum[:6]), Kind: executor.KindRotation, State: executor.Interrupted,
		Started: old.Started.UTC(), Updated: old.Updated.UTC(),
		Notes: append(old.Notes, fmt.Sprintf("moved from rotation %s's record in %s (kept by an older cellctl)", old.ID, LegacyKey)),
	}
	done := len(old.Steps) > 0
	for _, s := range old.Steps {
		st := executor.StepRecord{Name: s.Name, Kind: s.Kind, Wave: s.Wave, Cells: s.Cells, Error: s.Error}
		switch s.State {
		case "done":
			st.State = executor.WaveDone
		case "running":
			st.State = executor.WaveUpdating
		case "halted":
			st.State = executor.WaveHalted
		case "pending":
			st.State = executor.WavePending
		default:
			return nil, fmt.Errorf("the rotation record %s: step %s is %q (an older cellctl wrote pending, running, done or halted)", LegacyKey, s.Name, s.State)
		}
		if st.State != executor.WaveDone {
			done = false
		}
		if s.Started != nil {
			st.Started = s.Started.UTC()
		}
		if s.Finished != nil {
			st.Finished = s.Finished.UTC()
		}
		if len(s.Verdicts) > 0 {
			st.Polls = []executor.Poll{{At: old.Updated.UTC(), Verdicts: s.Verdicts}}
		}
		rec.Steps = append(rec.Steps, st)
	}
	if old.Finished != nil || done {
		rec.State = executor.Complete
		if old.Finished != nil {
			rec.Finished = old.Finished.UTC()
		}
	}
	return rec, nil
}
