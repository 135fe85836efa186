package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// DeployedRole is the IAM role (aws:assumeRole's roleArn) a deployed
// stack's default aws provider assumed at its last update: "" when it
// assumed none. known is false when the stack was never deployed or its
// state holds no default aws provider. The apply path compares it with
// the stack file's (a deployed cell's role is where it lives).
func (e *Engine) DeployedRole(ctx context.Context, stack string) (role string, known bool, err error) {
	d, err := e.deployed(ctx, stack)
	if err != nil || d == nil {
		return "", false, err
	}
	for _, r := range d.Resources {
		if r.Type != "pulumi:providers:aws" {
			continue
		}
		if urn := resource.URN(r.URN); !urn.IsValid() || !strings.HasPrefix(urn.Name(), "default") {
			continue
		}
		role, err := assumedRole(r.Inputs["assumeRole"])
		if err != nil {
			return "", false, fmt.Errorf("stack %s: its default aws provider's assumeRole: %w", stack, err)
		}
		return role, true, nil
	}
	return "", false, nil
}

// assumedRole reads roleArn from a provider's assumeRole input: an object,
// or — as the engine passes a default provider its stack config — the
// object's JSON in a string.
func assumedRole(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		if t == "" {
			return "", nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(t), &m); err != nil {
			return "", fmt.Errorf("not an object: %w", err)
		}
		return assumedRole(m)
	case map[string]any:
		s, _ := t["roleArn"].(string)
		return s, nil
	}
	return "", fmt.Errorf("%T, not an object", v)
}
