package fleet

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/diag"
)

// setBool stores a Bool key: a YAML boolean, or the string "true"/"false"
// that `pulumi config set` writes.
func (l *loader) setBool(c *spec.Cell, k spec.Key, file, field string, v *yaml.Node) bool {
	if v.Kind == yaml.MappingNode && hasKey(v, "secure") {
		l.errs.Add(file, v.Line, field, "cannot be a secret: cellctl reads it to validate the fleet; store it in plaintext")
		return false
	}
	if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!bool" && v.ShortTag() != "!!str") || (v.Value != "true" && v.Value != "false") {
		l.errs.Add(file, v.Line, field, "must be %s, got %s", k.Describe(), diag.KindName(v))
		return false
	}
	k.Set(c, v.Value, 0)
	return true
}

// checkBaselineLanes checks cells:lanes and cells:laneShardSize as the
// fleet baseline sets them, once, at Pulumi.yaml's lines.
func (l *loader) checkBaselineLanes(f *Fleet) {
	err := f.Baseline.LanesProblem()
	if err == nil {
		return
	}
	key := f.ConfigKey("laneShardSize")
	line, ok := f.BaselineLines[key]
	if !ok {
		key = f.ConfigKey("lanes")
		line = f.BaselineLines[key]
	}
	l.errs.Add(ProjectFile, line, key, "%v", err)
}

// checkLanes checks the pair a cell ends up with, at the line of the key
// the cell's own file sets. A pair wholly inherited from the baseline was
// already reported there.
func (l *loader) checkLanes(f *Fleet, file string, c *Cell) {
	err := c.LanesProblem()
	if err == nil {
		return
	}
	lanesKey := f.ConfigKey("lanes")
	from := ""
	if _, ok := c.Lines[lanesKey]; !ok {
		from = fmt.Sprintf(" (%s is %d, from %s)", lanesKey, c.Lanes, ProjectFile)
	}
	for _, name := range []string{"laneShardSize", "lanes"} {
		key := f.ConfigKey(name)
		if line, ok := c.Lines[key]; ok {
			l.errs.Add(file, line, key, "%v%s", err, from)
			return
		}
	}
	if f.Baseline.LanesProblem() == nil {
		// Unreachable: neither key is set here, so the pair is the baseline's.
		l.errs.Add(file, 0, f.ConfigKey("laneShardSize"), "%v", err)
	}
}
