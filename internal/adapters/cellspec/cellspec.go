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
	"reflect"
	"strings"

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

// fieldKeys maps a spec.Cell field to the configuration key that sets it
// (spec.Keys): the key's name is the field's in another case, but for the
// fields listed in renamed.
var fieldKeys = func() map[string]string {
	renamed := map[string]string{"CapacityRPS": "capacityRequestsPerSecond"}
	out := map[string]string{}
	t := reflect.TypeOf(spec.Cell{})
	for i := range t.NumField() {
		f := t.Field(i).Name
		for _, k := range spec.Keys {
			if strings.EqualFold(k.Name, f) || renamed[f] == k.Name {
				out[f] = k.Name
			}
		}
	}
	return out
}()

// SettingName is how an operator names a setting of a configuration
// (executor.Diff's key: a spec.Cell field, dotted when nested): the
// configuration key that sets it, in the fleet's namespace (configKey:
// fleet.Fleet.ConfigKey, e.g. "TaskCPU" → "cells:taskCpu"); "aws:region"
// for the region; the wave gate's thresholds as waves.yaml's promote_if;
// anything else (the image) as it is.
func SettingName(setting string, configKey func(string) string) string {
	field, rest, nested := strings.Cut(setting, ".")
	switch {
	case field == "Region" && !nested:
		return "aws:region"
	case field == "Gate" && nested:
		return "promote_if " + rest + " (waves.yaml)"
	}
	if k, ok := fieldKeys[field]; ok && !nested {
		return configKey(k)
	}
	return setting
}
