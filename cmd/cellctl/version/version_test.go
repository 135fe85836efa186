package version

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/iostreams"
)

func TestVersionNamesTheBinaryAndItsSDKs(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	f := &cmdutil.Factory{IO: io, Global: &cmdutil.GlobalOptions{Output: "json"}}
	cmd := NewCmdVersion(f)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var got Info
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Version == "" || !strings.HasPrefix(got.GoVersion, "go1.") {
		t.Fatalf("got %+v", got)
	}
	// (A test binary links only this package's dependencies, so the SDK
	// versions are not asserted here; the doc test runs the command's
	// examples on the real binary.)
	if s := (Info{Version: "v1.2.3", Revision: "0123456789abcdef", Modified: true}).String(); s != "v1.2.3 (0123456789ab, modified)" {
		t.Errorf("String() = %q", s)
	}
}
