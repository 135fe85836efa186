// Package version holds `cellctl version`: what this binary is, read from
// the build information Go embeds (the module version or VCS revision,
// the Go toolchain, and the Pulumi SDKs the programs were built with).
package version

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
)

// Info is what `cellctl version` reports.
type Info struct {
	Version string `json:"version"`
	// Revision and Modified are the VCS state the binary was built from
	// ("" when built without VCS information).
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
	// Modules are the versions of the SDKs cellctl's programs are built
	// with: what a deployed stack's provider and engine must match.
	Modules map[string]string `json:"modules"`
}

// watched are the dependencies whose versions an operator asks about.
var watched = []string{
	"github.com/pulumi/pulumi/sdk/v3",
	"github.com/pulumi/pulumi-aws/sdk/v6",
}

// Read returns the running binary's version information.
func Read() Info {
	info := Info{Version: "(devel)", Modules: map[string]string{}}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	info.GoVersion = bi.GoVersion
	if v := bi.Main.Version; v != "" {
		info.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		for _, w := range watched {
			if d.Path == w {
				info.Modules[w] = d.Version
			}
		}
	}
	return info
}

// String is the one-line form `--version` prints.
func (i Info) String() string {
	v := i.Version
	if i.Revision != "" {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (" + rev
		if i.Modified {
			v += ", modified"
		}
		v += ")"
	}
	return v
}

var formats = []render.Format[Info]{
	{Name: render.FormatTable, Render: printInfo},
	render.JSONFormat(func(i Info) any { return i }),
}

// NewCmdVersion builds `cellctl version`.
func NewCmdVersion(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:         "version",
		Short:       "Print cellctl's version, its Go toolchain and the Pulumi SDKs it is built with",
		Annotations: map[string]string{cmdutil.Cloudless: "true"},
		Example:     "  cellctl version\n  cellctl version -o json\n  cellctl --version",
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			view, err := render.Pick(f.Global.Output, formats...)
			if err != nil {
				return err
			}
			return view.Render(f.IO, Read())
		},
	}
}

func printInfo(io *iostreams.IOStreams, i Info) error {
	fmt.Fprintf(io.Out, "%-15s %s\n", "cellctl", i)
	fmt.Fprintf(io.Out, "%-15s %s\n", "go", i.GoVersion)
	for _, w := range watched {
		if v, ok := i.Modules[w]; ok {
			name := strings.SplitN(strings.TrimPrefix(w, "github.com/pulumi/"), "/", 2)[0]
			fmt.Fprintf(io.Out, "%-15s %s\n", name+" sdk", v)
		}
	}
	return nil
}
