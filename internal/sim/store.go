package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/safefile"
)

// DefaultDir is where the simulated cloud lives unless told otherwise.
const DefaultDir = ".cellctl/sim"

// Layout of the sim dir (all JSON, written atomically via temp+rename,
// guarded by flock on .lock so several cellctl processes and stacks can
// share one cloud):
//
//	cloud.json                 account, per-account counters
//	resources/<stack>.json     the live resources a stack created
//	control.json               faults, latency rules, quota overrides
//	secret.key                 AES-256 key for secret values (0600)
//	functions/<region>/<name>/<version>.json   Lambda code (latest.json, 1.json…)
//	.lock                      lock file
//
// Resources are sharded by stack so an operation rewrites only its own
// stack's file, and unchanged shards are reused from memory.
const (
	cloudFile    = "cloud.json"
	resourcesDir = "resources"
	controlFile  = "control.json"
	lockFile     = ".lock"
	functionDir  = "functions"
	formatV1     = 1
)

// state is the whole cloud during one locked operation.
type state struct {
	Account   string
	Counters  map[string]int
	Resources []*record
	// Snapshots are the DB cluster snapshots deletes left behind, by
	// "<region>/<identifier>" (they outlive their cluster, as in AWS).
	Snapshots map[string]Snapshot
	// Zones are the account's Route 53 hosted zones (id → domain name,
	// lower case, no trailing dot); Route 53 is global, so every region
	// sees them.
	Zones map[string]string
	// Retired lists "<engine> <version>" AWS no longer offers.
	Retired []string

	dirtyMeta   bool
	dirtyStacks map[string]bool

	// corrupt holds, per stack, why its shard could not be read. Only that
	// stack's calls fail (as an AWS outage of one account's data would
	// not fail another's); its file is never overwritten.
	corrupt map[string]error
}

// CorruptError says a stack's simulated resources cannot be read.
type CorruptError struct {
	Stack string
	Path  string
	Err   error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("the simulated cloud's resources of stack %s cannot be read: %s is corrupt (%v); other stacks are unaffected. "+
		"Restore the file, or remove it and run `cellctl sim reset` to start this rehearsal cloud afresh", e.Stack, e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// stackErr is the error of every call that touches stack's resources while
// its shard is unreadable, or nil.
func (st *state) stackErr(stack string) error {
	if err, bad := st.corrupt[stack]; bad {
		return err
	}
	return nil
}

// anyCorrupt is the first unreadable shard whose stack matches the pattern
// (see matchStack; "" matches all), or nil: listing or looking resources
// up by id while a shard is unreadable fails rather than answer as if the
// stack's resources did not exist.
func (st *state) anyCorrupt(pattern string) error {
	var first *CorruptError
	for stack, err := range st.corrupt {
		ce := err.(*CorruptError)
		if matchStack(pattern, stack) && (first == nil || ce.Stack < first.Stack) {
			first = ce
		}
	}
	if first == nil {
		return nil
	}
	return first
}

// metaFile is cloud.json.
type metaFile struct {
	Format   int            `json:"format"`
	Account  string         `json:"account,omitempty"`
	Counters map[string]int `json:"counters,omitempty"`
	// Snapshots are the final DB cluster snapshots, by region/identifier.
	Snapshots map[string]Snapshot `json:"snapshots,omitempty"`
	// Zones are the account's Route 53 hosted zones: id → domain name.
	Zones map[string]string `json:"zones,omitempty"`
	// Retired are the engine versions AWS no longer offers for new
	// resources, as "<engine> <version>" ("aurora-postgresql 15.8").
	Retired []string `json:"retiredEngineVersions,omitempty"`
}

// shardFile is resources/<stack>.json.
type shardFile struct {
	Format    int       `json:"format"`
	Stack     string    `json:"stack"`
	Resources []*record `json:"resources"`
}

// record is one live resource. Inputs and Outputs hold encoded values
// (see codec.go).
type record struct {
	Stack   string         `json:"stack"`
	URN     string         `json:"urn,omitempty"`
	Type    string         `json:"type"`
	Name    string         `json:"name"`
	ID      string         `json:"id"`
	Region  string         `json:"region"`
	Seed    string         `json:"seed"`
	Inputs  map[string]any `json:"inputs"`
	Outputs map[string]any `json:"outputs"`
	// Edited lists top-level properties changed out of band (drift).
	Edited []string `json:"edited,omitempty"`
	// Abandoned marks a resource Pulumi forgot without deleting it
	// (skipDestroy): it lives on in the cloud.
	Abandoned bool        `json:"abandoned,omitempty"`
	Alarm     *alarmState `json:"alarm,omitempty"`
	Created   time.Time   `json:"created"`
	Updated   time.Time   `json:"updated"`

	// decoded caches Outputs decoded, for records this process keeps;
	// unique caches the exclusive names they hold.
	decoded resource.PropertyMap
	unique  []awsmodel.UniqueName
	uniqOK  bool
}

type alarmState struct {
	State   string    `json:"state"`
	Reason  string    `json:"reason,omitempty"`
	Updated time.Time `json:"updated"`
}

// control is control.json.
type control struct {
	Format  int                `json:"format"`
	Faults  []Fault            `json:"faults,omitempty"`
	Latency []Latency          `json:"latency,omitempty"`
	Quotas  map[string]float64 `json:"quotas,omitempty"` // "<region>|<code>" → value; region "*" = every region
	NextID  int                `json:"nextId,omitempty"`
}

// store reads and writes one sim dir.
type store struct {
	dir   string
	codec *codec

	mu      sync.Mutex // serializes this process's access; flock does the rest
	metaKey fileKey
	meta    *metaFile
	shards  map[string]shard // file name → parsed shard
}

type shard struct {
	key  fileKey
	recs []*record
}

type fileKey struct {
	ino, size, mtime int64
}

func statKey(path string) (fileKey, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileKey{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
	}
	return fileKey{ino: int64(st.Ino), size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}

// openStore opens the sim dir without creating it: a cloud nothing was
// ever created in reads as empty, and the directory, its lock file and
// its secret key appear with the first change (a preview of a fresh
// clone must leave no .cellctl/sim behind).
func openStore(dir string) (*store, error) {
	if dir == "" {
		dir = DefaultDir
	}
	s := &store{dir: dir}
	if _, err := os.Stat(filepath.Join(dir, secretKeyFile)); err == nil {
		c, err := loadCodec(dir)
		if err != nil {
			return nil, err
		}
		s.codec = c
	}
	return s, nil
}

// ensure creates the sim dir and its secret key, before a change.
// Callers hold s.mu.
func (s *store) ensure() error {
	if s.codec != nil {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("creating the simulated cloud's directory: %w", err)
	}
	c, err := loadCodec(s.dir)
	if err != nil {
		return err
	}
	s.codec = c
	return nil
}

// lock takes the directory lock: exclusive to change, shared to read. A
// read of a cloud whose directory does not exist yet takes no lock and
// creates nothing: there is nothing to read, and a change creates the
// directory under the exclusive lock.
func (s *store) lock(exclusive bool) (func(), error) {
	s.mu.Lock()
	if exclusive {
		if err := s.ensure(); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	} else if _, err := os.Stat(s.dir); errors.Is(err, os.ErrNotExist) {
		return s.mu.Unlock, nil
	} else if s.codec == nil {
		// Created by another process since this one opened it.
		if _, err := os.Stat(filepath.Join(s.dir, secretKeyFile)); err == nil {
			c, err := loadCodec(s.dir)
			if err != nil {
				s.mu.Unlock()
				return nil, err
			}
			s.codec = c
		}
	}
	f, err := os.OpenFile(filepath.Join(s.dir, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, os.ErrNotExist) && !exclusive {
		// Removed meanwhile (sim reset): nothing to read.
		return s.mu.Unlock, nil
	}
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		s.mu.Unlock()
		return nil, fmt.Errorf("locking %s: %w", s.dir, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		s.mu.Unlock()
	}, nil
}

// invalidate drops every cached parse (after a failed change, whose
// in-place edits must not survive).
func (s *store) invalidate() { s.meta, s.shards = nil, nil }

// loadState assembles the cloud from cloud.json and the stack shards,
// re-reading only files that changed since this process last saw them.
// Callers hold the lock.
func (s *store) loadState() (*state, error) {
	metaPath := filepath.Join(s.dir, cloudFile)
	if key, ok := statKey(metaPath); !ok {
		s.meta = &metaFile{Format: formatV1}
	} else if s.meta == nil || key != s.metaKey {
		var m metaFile
		if err := readJSON(metaPath, &m); err != nil {
			return nil, err
		}
		if m.Format > formatV1 {
			return nil, fmt.Errorf("%s was written by a newer cellctl (format %d)", metaPath, m.Format)
		}
		s.meta, s.metaKey = &m, key
	}
	st := &state{Account: s.meta.Account, Counters: map[string]int{}, Snapshots: map[string]Snapshot{}, Zones: map[string]string{},
		Retired: append([]string(nil), s.meta.Retired...), dirtyStacks: map[string]bool{}}
	for k, v := range s.meta.Zones {
		st.Zones[k] = v
	}
	for k, v := range s.meta.Counters {
		st.Counters[k] = v
	}
	for k, v := range s.meta.Snapshots {
		st.Snapshots[k] = v
	}
	entries, err := os.ReadDir(filepath.Join(s.dir, resourcesDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if s.shards == nil {
		s.shards = map[string]shard{}
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || filepath.Ext(name) != ".json" || name[0] == '.' {
			continue
		}
		seen[name] = true
		path := filepath.Join(s.dir, resourcesDir, name)
		key, ok := statKey(path)
		if !ok {
			continue
		}
		sh, cached := s.shards[name]
		if !cached || sh.key != key {
			var f shardFile
			err := readJSON(path, &f)
			if err == nil && f.Format > formatV1 {
				err = fmt.Errorf("written by a newer cellctl (format %d)", f.Format)
			}
			if err != nil {
				var ce *corruptJSON
				if errors.As(err, &ce) {
					err = ce.err
				}
				stack := shardStack(name)
				if st.corrupt == nil {
					st.corrupt = map[string]error{}
				}
				st.corrupt[stack] = &CorruptError{Stack: stack, Path: path, Err: err}
				delete(s.shards, name)
				continue
			}
			sh = shard{key: key, recs: f.Resources}
			s.shards[name] = sh
		}
		st.Resources = append(st.Resources, sh.recs...)
	}
	for name := range s.shards {
		if !seen[name] {
			delete(s.shards, name)
		}
	}
	return st, nil
}

// shardName is the file of a stack's resources.
func shardName(stack string) string {
	if stack == "" {
		stack = "_"
	}
	return url.PathEscape(stack) + ".json"
}

// shardStack is the stack a shard file belongs to (see shardName).
func shardStack(name string) string {
	stack, err := url.PathUnescape(strings.TrimSuffix(name, ".json"))
	if err != nil {
		return strings.TrimSuffix(name, ".json")
	}
	if stack == "_" {
		return ""
	}
	return stack
}

// saveState writes what changed: cloud.json and the touched stacks' shards.
// A stack whose shard could not be read is never written: that would
// replace every resource the file held with the few this call knows.
func (s *store) saveState(st *state) error {
	for stack := range st.dirtyStacks {
		if err := st.stackErr(stack); err != nil {
			s.invalidate()
			return err
		}
	}
	if st.dirtyMeta {
		m := &metaFile{Format: formatV1, Account: st.Account, Counters: st.Counters, Snapshots: st.Snapshots, Zones: st.Zones, Retired: st.Retired}
		path := filepath.Join(s.dir, cloudFile)
		if err := writeJSON(path, m); err != nil {
			s.invalidate()
			return err
		}
		s.meta, s.metaKey = m, fileKey{}
		if key, ok := statKey(path); ok {
			s.metaKey = key
		}
	}
	if len(st.dirtyStacks) > 0 {
		if err := os.MkdirAll(filepath.Join(s.dir, resourcesDir), 0o755); err != nil {
			return err
		}
	}
	for stack := range st.dirtyStacks {
		var recs []*record
		for _, r := range st.Resources {
			if r.Stack == stack {
				recs = append(recs, r)
			}
		}
		name := shardName(stack)
		path := filepath.Join(s.dir, resourcesDir, name)
		if len(recs) == 0 {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				s.invalidate()
				return err
			}
			delete(s.shards, name)
			continue
		}
		if err := writeJSON(path, shardFile{Format: formatV1, Stack: stack, Resources: recs}); err != nil {
			s.invalidate()
			return err
		}
		if key, ok := statKey(path); ok {
			s.shards[name] = shard{key: key, recs: recs}
		} else {
			delete(s.shards, name)
		}
	}
	st.dirtyMeta, st.dirtyStacks = false, map[string]bool{}
	return nil
}

// touch marks a stack's resources changed, to be saved.
func (st *state) touch(stack string) { st.dirtyStacks[stack] = true }

// touchMeta marks the account data (counters) changed.
func (st *state) touchMeta() { st.dirtyMeta = true }

func (s *store) loadControl() (*control, error) {
	var c control
	err := readJSON(filepath.Join(s.dir, controlFile), &c)
	if errors.Is(err, os.ErrNotExist) {
		return &control{Format: formatV1}, nil
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

func (s *store) saveControl(c *control) error {
	c.Format = formatV1
	return writeJSON(filepath.Join(s.dir, controlFile), c)
}

// open takes the lock (exclusive for changes) and loads the cloud; the
// caller releases the lock with unlock.
func (s *store) open(exclusive bool) (*state, *control, func(), error) {
	unlock, err := s.lock(exclusive)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := s.loadState()
	if err == nil {
		var ctl *control
		if ctl, err = s.loadControl(); err == nil {
			return st, ctl, unlock, nil
		}
	}
	unlock()
	return nil, nil, nil, err
}

// update runs fn on the cloud under the exclusive lock and saves what it
// changed: control.json when its content changed, the shards of stacks
// fn touched, cloud.json when fn touched the account data. An error
// discards every change.
func (s *store) update(fn func(st *state, ctl *control) error) error {
	st, ctl, unlock, err := s.open(true)
	if err != nil {
		return err
	}
	defer unlock()
	ctlBefore, _ := json.Marshal(ctl)
	if err := fn(st, ctl); err != nil {
		s.invalidate() // fn may have changed cached records in place
		return err
	}
	if err := s.saveState(st); err != nil {
		return err
	}
	if after, _ := json.Marshal(ctl); !bytes.Equal(ctlBefore, after) {
		if err := s.saveControl(ctl); err != nil {
			return err
		}
	}
	return nil
}

// view runs fn under the shared lock; fn must not change anything.
func (s *store) view(fn func(st *state, ctl *control) error) error {
	st, ctl, unlock, err := s.open(false)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(st, ctl)
}

// maxStoreFile caps every file of the sim dir: a shard of the demo's
// largest cell is about 300 KiB.
const maxStoreFile = 256 << 20

type corruptJSON struct {
	path string
	err  error
}

func (e *corruptJSON) Error() string { return fmt.Sprintf("%s is corrupt: %v", e.path, e.err) }
func (e *corruptJSON) Unwrap() error { return e.err }

func readJSON(path string, v any) error {
	b, err := safefile.Read(path, maxStoreFile)
	if err != nil {
		var nr *safefile.NotRegularError
		var big *safefile.TooLargeError
		if errors.As(err, &nr) || errors.As(err, &big) {
			return &corruptJSON{path: path, err: err}
		}
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &corruptJSON{path: path, err: err}
	}
	return nil
}

// writeJSON writes atomically: temp file in the same dir, then rename.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	// No fsync: the rename makes the new file appear whole to every
	// process; surviving a power cut is not a rehearsal cloud's job.
	return safefile.WriteUnsynced(path, b, 0o600)
}
