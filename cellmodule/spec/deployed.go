package spec

import (
	"encoding/json"
	"fmt"
)

// DeployedOutput is the cell stack output that carries the cell's effective
// configuration as JSON: what the stack was last deployed with. A rollout
// records it before a wave and redeploys it on a rollback, so the record is
// what really ran, never the repository's files. Nothing in Cell is secret
// (the origin-verify secret is an argument of the component, not a spec
// field), so the output is plain.
const DeployedOutput = "deployedSpec"

// EncodeDeployed is the DeployedOutput value of c. Releasing is never
// recorded: lifting protection is an act of one destroy, not configuration.
func EncodeDeployed(c Cell) (string, error) {
	c.Releasing = false
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("cell %s: encoding its deployed configuration: %w", c.ID, err)
	}
	return string(b), nil
}

// DecodeDeployed reads the DeployedOutput of a cell stack's outputs. A
// stack without it (deployed by a cellctl that did not export it) or with
// a value that does not decode is an error: a rollout must not guess what
// a cell runs. A field the output predates (written by a cellctl before
// the key existed) reads as its Baseline default, which is how the cell
// behaved then (no migrations, say), so drift does not report every new
// key as a change.
func DecodeDeployed(cell string, outputs map[string]any) (Cell, error) {
	raw, ok := outputs[DeployedOutput]
	if !ok {
		return Cell{}, fmt.Errorf("cell %s: its stack has no %s output, so what it runs is unknown; run `cellctl up %s` once with the configuration it should keep", cell, DeployedOutput, cell)
	}
	text, ok := raw.(string)
	if !ok {
		return Cell{}, fmt.Errorf("cell %s: its %s output is a %T, not a JSON string", cell, DeployedOutput, raw)
	}
	c := Baseline()
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return Cell{}, fmt.Errorf("cell %s: its %s output does not decode: %w", cell, DeployedOutput, err)
	}
	if c.ID != cell {
		return Cell{}, fmt.Errorf("cell %s: its %s output is cell %q's configuration", cell, DeployedOutput, c.ID)
	}
	return c, nil
}
