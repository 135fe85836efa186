// Package safefile is how cellctl reads and writes files. Writes (write.go)
// are atomic — a file is replaced or created whole or not at all — and
// every replacement and exclusive create in cellctl goes through it.
//
// It reads the files cellctl is pointed at without letting
// one of them exhaust or hang it: only regular files are read (a FIFO, a
// device such as /dev/zero, a socket or a directory is refused before a
// single byte is read), and a file larger than its limit is refused with
// the file and the limit named.
//
// Every read is therefore bounded: opening never blocks (O_NONBLOCK, so a
// FIFO swapped in after the check cannot stall the open either), and the
// read stops at limit+1 bytes whatever the file claims its size is (procfs
// and friends report 0). That is what makes loading interruptible: no read
// can outlive a Ctrl-C by more than reading a capped regular file takes.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// TooLargeError says a file is over its size limit.
type TooLargeError struct {
	Path  string
	Size  int64 // at least Limit+1; the exact size when the file reported it
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %s, over the limit of %s for this file", e.Path, Bytes(e.Size), Bytes(e.Limit))
}

// NotRegularError says a path is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: cellctl reads only regular files", e.Path, describe(e.Mode))
}

func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a plain file (" + m.Type().String() + ")"
}

// Bytes renders a size for messages: "512 B", "1.0 MiB (1048576 bytes)".
func Bytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB (%d bytes)", float64(n)/(1<<10), n)
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
	}
	return fmt.Sprintf("%.1f GiB (%d bytes)", float64(n)/(1<<30), n)
}

// Read reads the regular file at path, refusing anything else and anything
// over limit bytes. Symlinks are followed (fleet repos use them); what they
// point at must be a regular file.
func Read(path string, limit int64) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO with no writer would block forever; with it
	// the open returns and fstat refuses it. Regular files ignore the flag.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(f, path, limit)
}

// ReadFS is Read for a file system (the fleet loader reads through fs.FS
// so tests can hand it a map). The name is checked before it is opened;
// with DirFS the open itself cannot block either.
func ReadFS(fsys fs.FS, name string, limit int64) ([]byte, error) {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: name, Mode: fi.Mode()}
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Path: name, Size: fi.Size(), Limit: limit}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(f, name, limit)
}

func readOpen(f fs.File, path string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// Checked again on the open file: the name may have been swapped
	// between a stat and the open.
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	size := fi.Size()
	if size <= 0 || size > limit {
		size = 512
	}
	buf := make([]byte, 0, size+1)
	data, err := readAll(io.LimitReader(f, limit+1), buf)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Size: int64(len(data)), Limit: limit}
	}
	return data, nil
}

func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return b, nil
			}
			return b, err
		}
	}
}

// DirFS is os.DirFS whose Open never blocks: files are opened with
// O_NONBLOCK, so a FIFO is opened (and then refused by ReadFS) instead of
// waiting for a writer.
func DirFS(dir string) fs.FS { return dirFS(dir) }

type dirFS string

func (d dirFS) join(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return string(d) + "/" + name, nil
}

func (d dirFS) Open(name string) (fs.File, error) {
	p, err := d.join("open", name)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (d dirFS) Stat(name string) (fs.FileInfo, error) {
	p, err := d.join("stat", name)
	if err != nil {
		return nil, err
	}
	return os.Stat(p)
}

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := d.join("readdir", name)
	if err != nil {
		return nil, err
	}
	return os.ReadDir(p)
}
