package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/iostreams"
)

// Output formats (-o).
const (
	FormatTable    = "table"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// View renders one command's result. A command picks its view once, when
// its flags are bound (Pick), and its run function renders through it:
// no format switch anywhere else.
type View[T any] interface {
	Render(io *iostreams.IOStreams, v T) error
}

// Format is one output format a command supports, and how it renders T.
type Format[T any] struct {
	Name   string
	Render func(io *iostreams.IOStreams, v T) error
}

func (f Format[T]) render(io *iostreams.IOStreams, v T) error { return f.Render(io, v) }

type view[T any] struct{ f Format[T] }

func (v view[T]) Render(io *iostreams.IOStreams, x T) error { return v.f.render(io, x) }

// Pick returns the view for the format named by -o, or an error listing
// the formats the command supports.
func Pick[T any](name string, formats ...Format[T]) (View[T], error) {
	var names []string
	for _, f := range formats {
		if f.Name == name {
			return view[T]{f}, nil
		}
		names = append(names, f.Name)
	}
	return nil, fmt.Errorf("--output %q is not supported here (allowed: %s)", name, strings.Join(names, ", "))
}

// Supports reports whether name is one of the formats.
func Supports[T any](name string, formats ...Format[T]) bool {
	return slices.ContainsFunc(formats, func(f Format[T]) bool { return f.Name == name })
}

// JSONFormat renders the document doc(v) as one JSON document on stdout.
func JSONFormat[T any](doc func(T) any) Format[T] {
	return Format[T]{Name: FormatJSON, Render: func(io *iostreams.IOStreams, v T) error { return JSON(io.Out, doc(v)) }}
}

// Out returns the styles for stdout.
func Out(io *iostreams.IOStreams) *Styles { return NewStyles(io.Out, io.ColorOut()) }

// Err returns the styles for stderr.
func Err(io *iostreams.IOStreams) *Styles { return NewStyles(io.ErrOut, io.ColorErr()) }
