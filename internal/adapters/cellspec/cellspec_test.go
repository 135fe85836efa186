package cellspec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/waves/executor"
)

func cell() spec.Cell {
	c := spec.Baseline()
	c.ID, c.Index, c.Region = "cell-b", 2, "eu-west-1"
	c.Image = "registry.example.com/app:v1"
	c.AuroraInstances = 2
	c.Alarm5xxRatePercent = 0.5
	return c
}

// A configuration survives the rollout record (JSON, numbers as float64)
// and comes back as the very spec it was.
func TestRoundTripThroughTheRecordIsExact(t *testing.T) {
	want := cell()
	cfg, err := FromSpec(want)
	if err != nil {
		t.Fatal(err)
	}
	rec := executor.CellRecord{Cell: want.ID, Before: &cfg}
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back executor.CellRecord
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, err := ToSpec(*back.Before)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	if !back.Before.Equal(cfg) {
		t.Errorf("a recorded configuration is not Equal to itself")
	}
}

func TestASettingChangeIsADiffNotOnlyTheImage(t *testing.T) {
	a, _ := FromSpec(cell())
	c := cell()
	c.AuroraInstances = 3
	c.CacheNodeType = "cache.r7g.xlarge"
	b, _ := FromSpec(c)
	if a.Equal(b) {
		t.Fatal("a size change is equal: the cell would be skipped as unchanged")
	}
	keys := []string{}
	for _, ch := range executor.Diff(a, b) {
		keys = append(keys, ch.Key)
	}
	if !reflect.DeepEqual(keys, []string{"AuroraInstances", "CacheNodeType"}) {
		t.Errorf("changed keys %v", keys)
	}
}

func TestReleasingIsNeverCarried(t *testing.T) {
	c := cell()
	c.Releasing = true
	cfg, _ := FromSpec(c)
	if _, ok := cfg.Settings["Releasing"]; ok {
		t.Errorf("Releasing is in the configuration")
	}
	cfg.Settings["Releasing"] = true
	if _, err := ToSpec(cfg); err == nil || !strings.Contains(err.Error(), "release protection") {
		t.Errorf("ToSpec accepted a configuration that releases protection: %v", err)
	}
}

func TestUnknownSettingIsAnError(t *testing.T) {
	cfg, _ := FromSpec(cell())
	cfg.Settings["AuroraInstancez"] = 3
	if _, err := ToSpec(cfg); err == nil || !strings.Contains(err.Error(), "AuroraInstancez") {
		t.Errorf("ToSpec dropped an unknown setting: %v", err)
	}
}

// TestEverySettingIsNamedByItsKey: each configuration key, set on a
// cell, changes exactly one recorded setting, and the dry run names that
// setting by the key (in the fleet's namespace), never by the Go field.
func TestEverySettingIsNamedByItsKey(t *testing.T) {
	ns := func(k string) string { return "cells:" + k }
	base, err := FromSpec(spec.Cell{ID: "cell-a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range spec.Keys {
		if k.Name == "image" {
			continue // the image is "image": --image sets it as often as the key
		}
		c := spec.Cell{ID: "cell-a"}
		for _, sample := range []string{"x", "true", `["x"]`} {
			if k.Get(&c) == k.Get(&spec.Cell{}) {
				k.Set(&c, sample, 7)
			}
		}
		if k.Get(&c) == k.Get(&spec.Cell{}) {
			t.Errorf("%s: setting it changed nothing", k.Name)
			continue
		}
		cfg, err := FromSpec(c)
		if err != nil {
			t.Fatal(err)
		}
		changes := executor.Diff(base, cfg)
		if len(changes) != 1 {
			t.Errorf("%s: %d recorded settings changed, want 1: %v", k.Name, len(changes), changes)
			continue
		}
		if got := SettingName(changes[0].Key, ns); got != "cells:"+k.Name {
			t.Errorf("%s: the dry run names its setting %q (recorded as %s)", k.Name, got, changes[0].Key)
		}
	}
	if got := SettingName("Region", ns); got != "aws:region" {
		t.Errorf("Region is named %q", got)
	}
	if got := SettingName("image", ns); got != "image" {
		t.Errorf("image is named %q", got)
	}
}
