package fleet

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/cellctl/cellctl/internal/safefile"
)

// LoadWith loads the fleet at dir as it would be if each file of files
// (named relative to dir, with slashes) held the given contents — a new
// file or a replaced one — writing nothing. A change to the repository
// (cell add's new stack file and its waves.yaml edit) is validated and
// checked by every gate as data, before the first file is written: a
// refusal leaves the repository as it was.
func LoadWith(dir string, files map[string][]byte) (*Fleet, error) {
	over := overlayFS{base: safefile.DirFS(dir), files: map[string][]byte{}}
	for name, data := range files {
		name = filepath.ToSlash(filepath.Clean(name))
		if !fs.ValidPath(name) {
			return nil, fmt.Errorf("%s: not a path inside the fleet directory", name)
		}
		over.files[name] = data
	}
	return LoadFS(over, dir)
}

// overlayFS is base with some files' contents replaced or added.
type overlayFS struct {
	base  fs.FS
	files map[string][]byte
}

func (o overlayFS) Open(name string) (fs.File, error) {
	if data, ok := o.files[name]; ok {
		return &memFile{Reader: bytes.NewReader(data), info: memInfo{name: path.Base(name), size: int64(len(data))}}, nil
	}
	return o.base.Open(name)
}

func (o overlayFS) Stat(name string) (fs.FileInfo, error) {
	if data, ok := o.files[name]; ok {
		return memInfo{name: path.Base(name), size: int64(len(data))}, nil
	}
	return fs.Stat(o.base, name)
}

func (o overlayFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(o.base, name)
	if err != nil {
		return nil, err
	}
	for file, data := range o.files {
		if path.Dir(file) != path.Clean(name) {
			continue
		}
		e := fs.FileInfoToDirEntry(memInfo{name: path.Base(file), size: int64(len(data))})
		if i := slices.IndexFunc(entries, func(d fs.DirEntry) bool { return d.Name() == e.Name() }); i >= 0 {
			entries[i] = e
		} else {
			entries = append(entries, e)
		}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int {
		switch {
		case a.Name() < b.Name():
			return -1
		case a.Name() > b.Name():
			return 1
		}
		return 0
	})
	return entries, nil
}

type memFile struct {
	*bytes.Reader
	info memInfo
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Close() error               { return nil }

var _ io.Reader = (*memFile)(nil)

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
