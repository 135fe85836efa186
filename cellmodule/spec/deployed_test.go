package spec

import (
	"reflect"
	"strings"
	"testing"
)

func TestDeployedSpecRoundTrips(t *testing.T) {
	c := Baseline()
	c.ID, c.Index, c.Region, c.Image, c.AuroraInstances, c.Releasing = "cell-b", 2, "eu-west-1", "app:v7", 3, true
	enc, err := EncodeDeployed(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDeployed("cell-b", map[string]any{DeployedOutput: enc})
	c.Releasing = false // never recorded
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("round trip: %+v %v", got, err)
	}
	if _, err := DecodeDeployed("cell-c", map[string]any{DeployedOutput: enc}); err == nil || !strings.Contains(err.Error(), `"cell-b"`) {
		t.Errorf("cell-b's spec read as cell-c's: %v", err)
	}
	if _, err := DecodeDeployed("cell-b", map[string]any{DeployedOutput: "{"}); err == nil {
		t.Error("a corrupt output decoded")
	}
}
