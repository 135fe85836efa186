package fleet

import (
	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/internal/safefile"
)

// SettingsKey is the top-level section of Pulumi.yaml that holds cellctl's
// own fleet settings (the pulumi CLI tolerates a top-level key it does not
// know and passes none of it to the program, unlike config:, which every
// stack would inherit):
//
//	cellctl:
//	  cloud: sim
const SettingsKey = "cellctl"

// Clouds are the values of cellctl.cloud (the same as --cloud's; package
// cloud, which builds them, depends on this one).
var Clouds = []string{"aws", "sim"}

// Settings are the fleet's cellctl settings (Pulumi.yaml's cellctl:).
type Settings struct {
	// Cloud is the cloud the fleet's commands act on when neither --cloud
	// nor $CELLCTL_CLOUD says ("" when unset).
	Cloud string
	// CloudLine is Cloud's line in Pulumi.yaml.
	CloudLine int
}

// readSettings reads the cellctl: section n into s, reporting each bad key
// at its line with what is allowed.
func readSettings(n *yaml.Node, errs *diag.List) Settings {
	var s Settings
	for _, p := range diag.Pairs(ProjectFile, SettingsKey, n, errs) {
		field := SettingsKey + "." + p.Key.Value
		switch p.Key.Value {
		case "cloud":
			v := p.Value
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || !contains(Clouds, v.Value) {
				errs.Add(ProjectFile, v.Line, field, "must be one of %s (the cloud commands act on when --cloud and $CELLCTL_CLOUD are unset), got %s", diag.Quote(Clouds), diag.KindName(v))
				continue
			}
			s.Cloud, s.CloudLine = v.Value, v.Line
		default:
			errs.Add(ProjectFile, p.Key.Line, field, "unknown key (allowed: %s.cloud)", SettingsKey)
		}
	}
	return s
}

// ReadSettings reads only the cellctl: section of the fleet's Pulumi.yaml
// in dir: what a command needs before it loads the fleet (the cloud it
// acts on). A missing or unparsable Pulumi.yaml gives no settings and no
// error — loading the fleet reports it where a fleet is needed, and a
// command that needs none (version, help) must not fail on it; a bad
// setting is an error naming Pulumi.yaml, its line and what is allowed.
func ReadSettings(dir string) (Settings, error) {
	data, err := safefile.ReadFS(safefile.DirFS(dir), ProjectFile, MaxConfigFileBytes)
	if err != nil {
		return Settings{}, nil
	}
	root, err := diag.ParseYAML(ProjectFile, data)
	if err != nil || root.Kind != yaml.MappingNode {
		return Settings{}, nil
	}
	var errs diag.List
	var s Settings
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == SettingsKey {
			s = readSettings(root.Content[i+1], &errs)
		}
	}
	return s, errs.Err()
}
