package routercmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/safefile"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/edge"
	"github.com/cellctl/cellctl/stacks"
)

// PackageOptions are the inputs of `cellctl router package`.
type PackageOptions struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	View  render.View[*PackageReport]

	// OutDir is where the package is written.
	OutDir string
	// TablePath packages this routing table file instead of the fleet's
	// stacks/routing.json.
	TablePath string
}

// PackageReport is the -o json document of `cellctl router package`.
type PackageReport struct {
	Dir         string        `json:"dir"`
	Table       string        `json:"table"`
	Version     int64         `json:"version"`
	Checksum    string        `json:"checksum"`
	GeneratedAt string        `json:"generatedAt,omitempty"`
	Overrides   int           `json:"overrides"`
	Files       []PackageFile `json:"files"`
	// ImageBytes and PackageBytes are the routing image's size and the
	// whole package's (uncompressed).
	ImageBytes   int `json:"imageBytes"`
	PackageBytes int `json:"packageBytes"`
	// NeededMemoryMB is the function memory the table needs, MemoryMB the
	// function's (cells:edgeMemoryMb).
	NeededMemoryMB int `json:"neededMemoryMb"`
	MemoryMB       int `json:"memoryMb"`
	// Origins are the cells' DNS names the package routes to.
	Origins map[string]string `json:"origins"`
}

// PackageFile is one file of the package.
type PackageFile struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

var packageFormats = []render.Format[*PackageReport]{
	{Name: render.FormatTable, Render: printPackage},
	render.JSONFormat(func(r *PackageReport) any { return r }),
}

// NewCmdPackage builds `cellctl router package`.
func NewCmdPackage(f *cmdutil.Factory, runF func(*PackageOptions) error) *cobra.Command {
	o := &PackageOptions{IO: f.IO, Fleet: f.Fleet}
	cmd := &cobra.Command{
		Use:   "package DIR",
		Short: "Write the edge function package the router stack ships (code, config.json and the routing image) to DIR",
		Long: `Write the Lambda@Edge function package exactly as the router stack ships it
— index.js, routing.js, lanes.js, image.js, config.json and the routing image
(routing.img) — into DIR, for operators and CI to inspect, size and exercise
with local tools:

  node -e "require('./DIR/index.js').handler(event).then(console.log)"

--table FILE packages another routing table (cellctl's shape or the seeds'
routing contract) with the fleet's settings.

The package is built by the same function the router program calls, from
stacks/routing.json (or --table FILE) and the router stack's settings
(cells:tenantHeader or cells:tenantFrom, the viewer domains, each cell's
lanes); each cell's origin is its DNS name <cell>.<cells:fleetDomain>, the
name every cell stack exports as dnsName and the router stack reads. The
package is checked as the edge checks it at cold start and its image read
back against the table before anything is written. Writes nothing else and
changes no stack.`,
		Example: `  cellctl router package edge-package
  cellctl router package edge-package --table stacks/routing.json -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.OutDir = args[0]
			var err error
			if o.View, err = render.Pick(f.Global.Output, packageFormats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return packageRun(o)
		},
	}
	cmd.Flags().StringVar(&o.TablePath, "table", "", "routing table file to package instead of the fleet's stacks/"+fleet.RoutingFile)
	return cmd
}

func packageRun(o *PackageOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	if fl.Router == nil {
		return fmt.Errorf("%s: the fleet has no router stack (Pulumi.router.yaml)", fl.Dir)
	}
	table, source := fl.Routing, filepath.Join(fl.StackDir, fleet.RoutingFile)
	if o.TablePath != "" {
		if table, err = router.Load(o.TablePath); err != nil {
			return err
		}
		source = o.TablePath
		if err := edge.CheckFits(table, fl.Router.EdgeMemoryMB); err != nil {
			return fmt.Errorf("%s: %w", o.TablePath, err)
		}
	}
	if table == nil {
		return fmt.Errorf("the fleet in %s has no %s; create it, or pass --table FILE", fl.Dir, source)
	}
	origins := map[string]string{}
	var missing []string
	for _, c := range table.Cells() {
		if c.State == router.CellDrained {
			continue // no origin, as in the router program
		}
		cell := fl.Cell(c.ID)
		if cell == nil {
			missing = append(missing, c.ID)
			continue
		}
		origins[c.ID] = cell.DNSName()
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s routes to %v, which the fleet has no stack file for", source, missing)
	}
	opts, err := stacks.EdgeOptions(fl, table)
	if err != nil {
		return err
	}
	files, err := edge.PackageWith(table, origins, opts)
	if err != nil {
		return err
	}
	if err := writePackage(o.OutDir, files); err != nil {
		return err
	}
	mem := fl.Router.EdgeMemoryMB
	if mem == 0 {
		mem = edge.DefaultMemoryMB
	}
	r := &PackageReport{Dir: o.OutDir, Table: source, Version: table.Version(), Checksum: table.Checksum(), GeneratedAt: table.GeneratedAt(),
		Overrides: len(table.Overrides()), ImageBytes: len(files[edge.ImageFile]), PackageBytes: edge.PackageFilesBytes(files),
		NeededMemoryMB: edge.NeededMemoryMB(len(table.Overrides())), MemoryMB: mem, Origins: origins}
	for name, content := range files {
		r.Files = append(r.Files, PackageFile{Name: name, Bytes: len(content)})
	}
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[i].Name < r.Files[j].Name })
	return o.View.Render(o.IO, r)
}

// writePackage writes files into dir (created when missing), each
// atomically. A file of dir that is not part of the package is refused
// rather than mixed in: an old config.json next to a new image would be a
// package the edge refuses.
func writePackage(dir string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var strangers []string
	for _, e := range entries {
		if _, ours := files[e.Name()]; !ours {
			strangers = append(strangers, e.Name())
		}
	}
	if len(strangers) > 0 {
		return fmt.Errorf("%s holds files that are not part of the edge function package (%v): give an empty or new directory", dir, strangers)
	}
	var errs []error
	for name, content := range files {
		if err := safefile.Write(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func printPackage(io *iostreams.IOStreams, r *PackageReport) error {
	s := render.Out(io)
	rows := make([][]string, 0, len(r.Files))
	for _, f := range r.Files {
		rows = append(rows, []string{f.Name, fmt.Sprint(f.Bytes)})
	}
	fmt.Fprintf(io.Out, "wrote the edge function package of routing table version %d (%s, %d overrides) to %s\n\n", r.Version, r.Table, r.Overrides, r.Dir)
	fmt.Fprint(io.Out, s.Table([]string{"FILE", "BYTES"}, rows))
	fmt.Fprintf(io.Out, "\nchecksum:      %s\n", r.Checksum)
	fmt.Fprintf(io.Out, "routing image: %d bytes; package %d bytes\n", r.ImageBytes, r.PackageBytes)
	fmt.Fprintf(io.Out, "edge memory:   needs %d MB, the function has %d MB\n", r.NeededMemoryMB, r.MemoryMB)
	return nil
}
