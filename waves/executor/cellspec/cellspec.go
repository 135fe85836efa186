// Package cellspec converts between a cell's typed configuration
// (cellmodule/spec.Cell, what the fleet loader produces and the cell
// template consumes) and the executor's plain CellConfig, which the rollout
// record keeps as JSON. The deploy command's adapters use it on both sides
// of the executor: the desired configurations it ships, and the recorded
// before-configs a rollback hands back to the engine seam
// (stackrun.Inputs.Cell). The round trip is exact: every field of spec.Cell
// is carried, so a rollback restores every setting, not only the image.
package cellspec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/waves/executor"
)

// FromSpec is the executor's view of a cell's configuration. Releasing is
// dropped: it is set by `destroy --release-protected` only, never something
// a rollout ships or restores.
func FromSpec(c spec.Cell) (executor.CellConfig, error) {
	c.Releasing = false
	raw, err := json.Marshal(c)
	if err != nil {
		return executor.CellConfig{}, fmt.Errorf("cell %s: encoding its configuration: %w", c.ID, err)
	}
	var settings map[string]any
	if err := json.Unmarshal(raw, &settings); err != nil {
		return executor.CellConfig{}, fmt.Errorf("cell %s: encoding its configuration: %w", c.ID, err)
	}
	delete(settings, "Image")
	delete(settings, "Releasing")
	return executor.CellConfig{Image: c.Image, Settings: settings}, nil
}

// ToSpec decodes a configuration back into a spec. A key spec.Cell does not
// have is an error, never dropped: a recorded setting this build cannot
// express must not be silently left out of a rollback.
func ToSpec(cfg executor.CellConfig) (spec.Cell, error) {
	settings := map[string]any{}
	for k, v := range cfg.Settings {
		settings[k] = v
	}
	settings["Image"] = cfg.Image
	raw, err := json.Marshal(settings)
	if err != nil {
		return spec.Cell{}, fmt.Errorf("decoding a cell configuration: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c spec.Cell
	if err := dec.Decode(&c); err != nil {
		return spec.Cell{}, fmt.Errorf("decoding the configuration of cell %v: %w", cfg.Settings["ID"], err)
	}
	if c.Releasing {
		return spec.Cell{}, fmt.Errorf("cell %s: a recorded configuration cannot release protection", c.ID)
	}
	return c, nil
}
