package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
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
//	resources/<project>/<stack>.json   the live resources a stack of a
//	                           Pulumi project created (one account can
//	                           hold several fleets: every fleet has a
//	                           cell-a, so the stack alone names nothing)
//	resources/<stack>.json     the same, as a cellctl before
//	                           project-qualified stacks wrote it: read and
//	                           moved to resources/<project>/ by the first
//	                           change (the project comes from each
//	                           resource's URN)
//	control.json               faults, latency rules, quota overrides
//	secret.key                 AES-256 key for secret values (0600)
//	functions/<region>/<name>/<version>.json   Lambda code (latest.json, 1.json…)
//	.lock                      lock file
//
// Resources are sharded by project-qualified stack (StackKey) so an
// operation rewrites only its own stack's file, and unchanged shards are
// reused from memory.
const (
	cloudFile    = "cloud.json"
	ResourcesDir = "resources"
	controlFile  = "control.json"
	LockFile     = ".lock"
	functionDir  = "functions"
	FormatV1     = 1
)

// State is the whole cloud during one locked operation.
type State struct {
	Account   string
	Counters  map[string]int
	Resources []*Record
	// Snapshots are the DB cluster snapshots deletes left behind, by
	// "<region>/<identifier>" (they outlive their cluster, as in AWS).
	Snapshots map[string]Snapshot
	// Zones are the account's Route 53 hosted zones (id → domain name,
	// lower case, no trailing dot); Route 53 is global, so every region
	// sees them.
	Zones map[string]string
	// Retired lists "<engine> <version>" AWS no longer offers.
	Retired []string

	dirtyMeta bool
	// dirtyStacks are the stack keys (StackKey) whose shards must be
	// rewritten.
	dirtyStacks map[string]bool

	// revisions are the shard files the stacks' records were read from,
	// by stack key (StackKey; a shard written before stacks were
	// project-qualified under its bare stack): see Revision.
	revisions map[string]Revision

	// corrupt holds, per stack key, why its shard could not be read. Only
	// that stack's calls fail (as an AWS outage of one account's data
	// would not fail another's); its file is never overwritten. A corrupt
	// unqualified shard (resources/<stack>.json) fails that stack of every
	// project: its records' projects cannot be read.
	corrupt map[string]error
}

// CorruptError says a stack's simulated resources cannot be read.
type CorruptError struct {
	// Project is the stack's Pulumi project ("" for a shard written
	// before stacks were project-qualified).
	Project string
	Stack   string
	Path    string
	Err     error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("the simulated cloud's resources of stack %s cannot be read: %s is corrupt (%v); other stacks are unaffected. "+
		"Restore the file, or remove it and run `cellctl sim reset` to start this rehearsal cloud afresh", e.Stack, e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Revision names one version of a stack's records: the shard file they
// were read from and its FileKey. Any change to the stack's records
// rewrites the file (a new inode by atomic rename, a new size or mtime),
// so a model derived from the records (the health model's access
// decisions) may be kept while the revision is unchanged — the same key
// the store's own shard cache trusts.
type Revision struct {
	Path string
	File FileKey
}

// Revision is the revision of a stack key's records as this operation
// read them. ok is false when no shard is filed under the key (none yet,
// or the records are still in a shard written before stacks were
// project-qualified, filed under the bare stack) or when this operation
// changed the records: then nothing derived from them may be kept.
func (st *State) Revision(key string) (Revision, bool) {
	if st.dirtyStacks[key] {
		return Revision{}, false
	}
	r, ok := st.revisions[key]
	return r, ok
}

// StackErr is the error of every call that touches the resources of a
// stack key while its shard is unreadable, or nil.
func (st *State) StackErr(key string) error {
	if err, bad := st.corrupt[key]; bad {
		return err
	}
	project, stack := SplitKey(key)
	for k, err := range st.corrupt {
		// An unqualified shard may hold this project's resources; an
		// unqualified key (project unknown) may be any project's stack.
		if kp, ks := SplitKey(k); ks == stack && (kp == "" || project == "") {
			return err
		}
	}
	return nil
}

// anyCorrupt is the first unreadable shard whose stack matches the pattern
// (see MatchStack; "" matches all), or nil: listing or looking resources
// up by id while a shard is unreadable fails rather than answer as if the
// stack's resources did not exist.
func (st *State) anyCorrupt(pattern string) error {
	var first *CorruptError
	for key, err := range st.corrupt {
		ce := err.(*CorruptError)
		if MatchStack(pattern, key) && (first == nil || ce.Path < first.Path) {
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

// shardFile is resources/<project>/<stack>.json (or, written before
// stacks were project-qualified, resources/<stack>.json).
type shardFile struct {
	Format    int       `json:"format"`
	Project   string    `json:"project,omitempty"`
	Stack     string    `json:"stack"`
	Resources []*Record `json:"resources"`
}

// Record is one live resource. Inputs and Outputs hold encoded values
// (see codec.go).
type Record struct {
	// Project is the Pulumi project of the stack (from its URN); empty
	// only for a record written before stacks were project-qualified
	// whose URN does not name one.
	Project string         `json:"project,omitempty"`
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
	Alarm     *AlarmState `json:"alarm,omitempty"`
	Created   time.Time   `json:"created"`
	Updated   time.Time   `json:"updated"`

	// decoded caches Outputs decoded, for records this process keeps;
	// unique caches the exclusive names they hold.
	decoded resource.PropertyMap
	unique  []awsmodel.UniqueName
	uniqOK  bool
}

// SetOutputs replaces the record's stored (encoded) outputs and drops
// what was cached from the old ones; decoded, when not nil, is enc
// decoded.
func (r *Record) SetOutputs(enc map[string]any, decoded resource.PropertyMap) {
	r.Outputs, r.decoded, r.uniqOK = enc, decoded, false
}

// Key is the record's project-qualified stack (StackKey).
func (r *Record) Key() string { return StackKey(r.Project, r.Stack) }

// projectOfURN is the project a Pulumi URN names
// (urn:pulumi:<stack>::<project>::…), or "".
func projectOfURN(urn string) string {
	u, err := resource.ParseURN(urn)
	if err != nil {
		return ""
	}
	return u.Project().String()
}

type AlarmState struct {
	State   string    `json:"state"`
	Reason  string    `json:"reason,omitempty"`
	Updated time.Time `json:"updated"`
}

// Control is control.json.
type Control struct {
	Format  int                `json:"format"`
	Faults  []Fault            `json:"faults,omitempty"`
	Latency []Latency          `json:"latency,omitempty"`
	Quotas  map[string]float64 `json:"quotas,omitempty"` // "<region>|<code>" → value; region "*" = every region
	NextID  int                `json:"nextId,omitempty"`
}

// Store reads and writes one sim dir.
type Store struct {
	dir   string
	codec *codec
	// account is the id of a second account's store (accounts.go), which
	// its State reports when its cloud.json names none; "" for the home
	// account, whose id comes from cloud.json or the default.
	account string
	// home is the home account's store of a second account's store
	// (nil for the home one): public DNS is read across accounts.
	home *Store
	// accounts are the second accounts' stores opened through this (home)
	// store, kept so their shard caches live as long as it does.
	accountsMu sync.Mutex
	accounts   map[string]*Store

	mu      sync.Mutex // serializes this process's access; flock does the rest
	metaKey FileKey
	meta    *metaFile
	shards  map[string]shard // file name → parsed shard
}

type shard struct {
	key  FileKey
	recs []*Record
}

type FileKey struct {
	ino, size, mtime int64
}

func StatKey(path string) (FileKey, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return FileKey{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
	}
	return FileKey{ino: int64(st.Ino), size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}

// openStore opens the sim dir without creating it: a cloud nothing was
// ever created in reads as empty, and the directory, its lock file and
// its secret key appear with the first change (a preview of a fresh
// clone must leave no .cellctl/sim behind).
func openStore(dir string) (*Store, error) {
	if dir == "" {
		dir = DefaultDir
	}
	s := &Store{dir: dir}
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
func (s *Store) ensure() error {
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
func (s *Store) lock(exclusive bool) (func(), error) {
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
	f, err := os.OpenFile(filepath.Join(s.dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
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

// Dir is the sim dir.
func (s *Store) Dir() string { return s.dir }

// invalidate drops every cached parse (after a failed change, whose
// in-place edits must not survive).
func (s *Store) invalidate() { s.meta, s.shards = nil, nil }

// loadState assembles the cloud from cloud.json and the stack shards,
// re-reading only files that changed since this process last saw them.
// Callers hold the lock; exclusive says it is the exclusive one, under
// which shards written before stacks were project-qualified are moved to
// their project's directory (the change that follows saves the move).
func (s *Store) loadState(exclusive bool) (*State, error) {
	metaPath := filepath.Join(s.dir, cloudFile)
	if key, ok := StatKey(metaPath); !ok {
		s.meta = &metaFile{Format: FormatV1}
	} else if s.meta == nil || key != s.metaKey {
		var m metaFile
		if err := ReadJSON(metaPath, &m); err != nil {
			return nil, err
		}
		if m.Format > FormatV1 {
			return nil, fmt.Errorf("%s was written by a newer cellctl (format %d)", metaPath, m.Format)
		}
		s.meta, s.metaKey = &m, key
	}
	st := &State{Account: s.meta.Account, Counters: map[string]int{}, Snapshots: map[string]Snapshot{}, Zones: map[string]string{},
		Retired: append([]string(nil), s.meta.Retired...), dirtyStacks: map[string]bool{}, revisions: map[string]Revision{}}
	if st.Account == "" {
		st.Account = s.account
	}
	for k, v := range s.meta.Zones {
		st.Zones[k] = v
	}
	for k, v := range s.meta.Counters {
		st.Counters[k] = v
	}
	for k, v := range s.meta.Snapshots {
		st.Snapshots[k] = v
	}
	if s.shards == nil {
		s.shards = map[string]shard{}
	}
	qualified, legacy, err := s.shardFiles()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	// Qualified shards first: a legacy shard's record whose stack already
	// has one was moved there by a change that stopped before removing
	// the old file, and the moved copy wins.
	have := map[string]bool{}
	for _, sf := range qualified {
		seen[sf.rel] = true
		recs, ok := s.readShard(st, sf)
		if !ok {
			continue
		}
		have[sf.key] = true
		for _, r := range recs {
			r.Project, r.Stack = sf.project, sf.stack
		}
		st.Resources = append(st.Resources, recs...)
	}
	for _, sf := range legacy {
		seen[sf.rel] = true
		recs, ok := s.readShard(st, sf)
		if !ok {
			continue
		}
		moved := false
		for _, r := range recs {
			if r.Project == "" {
				r.Project = projectOfURN(r.URN)
			}
			if r.Project != "" {
				if have[r.Key()] {
					moved = true
					continue
				}
				if exclusive && st.StackErr(r.Key()) == nil {
					moved = true
					st.Touch(r.Key())
				}
			}
			st.Resources = append(st.Resources, r)
		}
		if moved && exclusive {
			st.Touch(sf.key) // rewritten with what is left, or removed
		}
	}
	for name := range s.shards {
		if !seen[name] {
			delete(s.shards, name)
		}
	}
	return st, nil
}

// shardFileRef is one shard file: its path under resources/ and the
// stack key it holds.
type shardFileRef struct {
	rel, key, project, stack string
}

// shardFiles lists resources/: the project directories' shards
// (qualified) and the flat files written before stacks were
// project-qualified (legacy).
func (s *Store) shardFiles() (qualified, legacy []shardFileRef, err error) {
	root := filepath.Join(s.dir, ResourcesDir)
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	isShard := func(e os.DirEntry) bool {
		n := e.Name()
		return !e.IsDir() && filepath.Ext(n) == ".json" && n[0] != '.'
	}
	for _, e := range entries {
		if e.Name()[0] == '.' {
			continue
		}
		if isShard(e) {
			stack := shardStack(e.Name())
			legacy = append(legacy, shardFileRef{rel: e.Name(), key: stack, stack: stack})
			continue
		}
		if !e.IsDir() {
			continue
		}
		project, uerr := url.PathUnescape(e.Name())
		if uerr != nil || project == "" {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(root, e.Name()))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // removed meanwhile
			}
			return nil, nil, err
		}
		for _, f := range sub {
			if !isShard(f) {
				continue
			}
			stack := shardStack(f.Name())
			qualified = append(qualified, shardFileRef{rel: e.Name() + "/" + f.Name(), key: StackKey(project, stack), project: project, stack: stack})
		}
	}
	return qualified, legacy, nil
}

// readShard returns a shard's records, from memory while the file is
// unchanged; an unreadable shard is recorded in st.corrupt (ok false).
func (s *Store) readShard(st *State, sf shardFileRef) ([]*Record, bool) {
	path := filepath.Join(s.dir, ResourcesDir, filepath.FromSlash(sf.rel))
	key, ok := StatKey(path)
	if !ok {
		return nil, false
	}
	if sh, cached := s.shards[sf.rel]; cached && sh.key == key {
		st.revisions[sf.key] = Revision{Path: path, File: key}
		return sh.recs, true
	}
	var f shardFile
	err := ReadJSON(path, &f)
	if err == nil && f.Format > FormatV1 {
		err = fmt.Errorf("written by a newer cellctl (format %d)", f.Format)
	}
	if err != nil {
		var ce *corruptJSON
		if errors.As(err, &ce) {
			err = ce.err
		}
		if st.corrupt == nil {
			st.corrupt = map[string]error{}
		}
		st.corrupt[sf.key] = &CorruptError{Project: sf.project, Stack: sf.stack, Path: path, Err: err}
		delete(s.shards, sf.rel)
		return nil, false
	}
	s.shards[sf.rel] = shard{key: key, recs: f.Resources}
	st.revisions[sf.key] = Revision{Path: path, File: key}
	return f.Resources, true
}

// shardRel is the file of a stack key's resources, under resources/.
func shardRel(key string) string {
	project, stack := SplitKey(key)
	if stack == "" {
		stack = "_"
	}
	name := url.PathEscape(stack) + ".json"
	if project == "" {
		return name
	}
	return url.PathEscape(project) + "/" + name
}

// shardStack is the stack a shard file belongs to (see shardRel).
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
// Shards are written before emptied ones are removed, so a move of a
// legacy shard interrupted half way loses nothing (see loadState).
func (s *Store) saveState(st *State) error {
	for key := range st.dirtyStacks {
		if err := st.StackErr(key); err != nil {
			s.invalidate()
			return err
		}
	}
	if st.dirtyMeta {
		m := &metaFile{Format: FormatV1, Account: st.Account, Counters: st.Counters, Snapshots: st.Snapshots, Zones: st.Zones, Retired: st.Retired}
		path := filepath.Join(s.dir, cloudFile)
		if err := WriteJSON(path, m); err != nil {
			s.invalidate()
			return err
		}
		s.meta, s.metaKey = m, FileKey{}
		if key, ok := StatKey(path); ok {
			s.metaKey = key
		}
	}
	byKey := map[string][]*Record{}
	for _, r := range st.Resources {
		if k := r.Key(); st.dirtyStacks[k] {
			byKey[k] = append(byKey[k], r)
		}
	}
	var writes, removes []string
	for key := range st.dirtyStacks {
		if len(byKey[key]) > 0 {
			writes = append(writes, key)
		} else {
			removes = append(removes, key)
		}
	}
	sort.Strings(writes)
	sort.Strings(removes)
	for _, key := range writes {
		rel := shardRel(key)
		path := filepath.Join(s.dir, ResourcesDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			s.invalidate()
			return err
		}
		project, stack := SplitKey(key)
		if err := WriteJSON(path, shardFile{Format: FormatV1, Project: project, Stack: stack, Resources: byKey[key]}); err != nil {
			s.invalidate()
			return err
		}
		if fk, ok := StatKey(path); ok {
			s.shards[rel] = shard{key: fk, recs: byKey[key]}
		} else {
			delete(s.shards, rel)
		}
	}
	for _, key := range removes {
		rel := shardRel(key)
		if err := os.Remove(filepath.Join(s.dir, ResourcesDir, filepath.FromSlash(rel))); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.invalidate()
			return err
		}
		delete(s.shards, rel)
	}
	st.dirtyMeta, st.dirtyStacks = false, map[string]bool{}
	return nil
}

// Touch marks a stack key's resources changed, to be saved.
func (st *State) Touch(key string) { st.dirtyStacks[key] = true }

// TouchMeta marks the account data (counters) changed.
func (st *State) TouchMeta() { st.dirtyMeta = true }

func (s *Store) loadControl() (*Control, error) {
	var c Control
	err := ReadJSON(filepath.Join(s.dir, controlFile), &c)
	if errors.Is(err, os.ErrNotExist) {
		return &Control{Format: FormatV1}, nil
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

func (s *Store) saveControl(c *Control) error {
	c.Format = FormatV1
	return WriteJSON(filepath.Join(s.dir, controlFile), c)
}

// open takes the lock (exclusive for changes) and loads the cloud; the
// caller releases the lock with unlock.
func (s *Store) open(exclusive bool) (*State, *Control, func(), error) {
	unlock, err := s.lock(exclusive)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := s.loadState(exclusive)
	if err == nil {
		var ctl *Control
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
func (s *Store) update(fn func(st *State, ctl *Control) error) error {
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
func (s *Store) view(fn func(st *State, ctl *Control) error) error {
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

func ReadJSON(path string, v any) error {
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

// WriteJSON writes atomically: temp file in the same dir, then rename.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	// No fsync: the rename makes the new file appear whole to every
	// process; surviving a power cut is not a rehearsal cloud's job.
	return safefile.WriteUnsynced(path, b, 0o600)
}
