package routeview

import (
	"fmt"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
)

// CheckReport is the -o json document of `cellctl route --check FILE`.
type CheckReport struct {
	File  string `json:"file"`
	Valid bool   `json:"valid"`
	// Version, Checksum, GeneratedAt, Cells and Overrides describe a
	// valid table.
	Version     int64  `json:"version,omitempty"`
	Checksum    string `json:"checksum,omitempty"`
	GeneratedAt string `json:"generatedAt,omitempty"`
	Cells       int    `json:"cells,omitempty"`
	Overrides   int    `json:"overrides,omitempty"`
	// ImageBytes and PackageBytes are the sizes of the routing image and
	// of the function package the router stack would ship;
	// NeededMemoryMB is the edge function memory the table needs, and
	// MemoryMB the function's (cells:edgeMemoryMb, or the default).
	ImageBytes     int `json:"imageBytes,omitempty"`
	PackageBytes   int `json:"packageBytes,omitempty"`
	NeededMemoryMB int `json:"neededMemoryMb,omitempty"`
	MemoryMB       int `json:"memoryMb,omitempty"`
	// Fleet says whether the fleet's router settings and cells were
	// checked too (false outside a fleet repository).
	Fleet  bool     `json:"fleet"`
	Errors []string `json:"errors,omitempty"`
}

var CheckFormats = []render.Format[*CheckReport]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r *CheckReport) error {
		if !r.Valid {
			return nil // the errors go to stderr, one per line
		}
		against := "its own rules and the edge handler's"
		if r.Fleet {
			against = "its own rules, the fleet's cells and router settings, and the edge handler's"
		}
		fmt.Fprintf(io.Out, "%s: routing table version %d is valid (%d cells, %d overrides), checked against %s\n",
			r.File, r.Version, r.Cells, r.Overrides, against)
		fmt.Fprintf(io.Out, "checksum:      %s\n", r.Checksum)
		fmt.Fprintf(io.Out, "generated at:  %s\n", orUnknown(r.GeneratedAt))
		fmt.Fprintf(io.Out, "routing image: %s (function package %s)\n", mib(r.ImageBytes), mib(r.PackageBytes))
		fmt.Fprintf(io.Out, "edge memory:   needs %d MB, the function has %d MB\n", r.NeededMemoryMB, r.MemoryMB)
		return nil
	}},
	render.JSONFormat(func(r *CheckReport) any { return r }),
	{Name: render.FormatMarkdown, Render: func(io *iostreams.IOStreams, r *CheckReport) error {
		if r.Valid {
			fmt.Fprintf(io.Out, "### cellctl route --check: ✅ `%s`\n\nRouting table version %d is valid (%d cells, %d overrides).\n\n", r.File, r.Version, r.Cells, r.Overrides)
			fmt.Fprint(io.Out, render.MarkdownTable([]string{"Checksum", "Generated at", "Routing image", "Function package", "Edge memory"},
				[][]string{{render.MarkdownCode(r.Checksum), orUnknown(r.GeneratedAt), mib(r.ImageBytes), mib(r.PackageBytes),
					fmt.Sprintf("needs %d MB of %d MB", r.NeededMemoryMB, r.MemoryMB)}}))
			return nil
		}
		fmt.Fprintf(io.Out, "### cellctl route --check: ❌ `%s`\n\n", r.File)
		for _, e := range r.Errors {
			fmt.Fprintf(io.Out, "- %s\n", render.MarkdownEscape(e))
		}
		return nil
	}},
}

func orUnknown(s string) string {
	if s == "" {
		return "not stated (the table has no generated_at)"
	}
	return s
}

// mib renders a byte count for people.
func mib(n int) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
