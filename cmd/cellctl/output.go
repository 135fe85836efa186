package main

import (
	"io"

	"github.com/cellctl/cellctl/internal/render"
)

// renderJSON prints one JSON document on stdout and nothing else.
func renderJSON(w io.Writer, v any) error { return render.JSON(w, v) }
