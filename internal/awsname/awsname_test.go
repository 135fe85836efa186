package awsname

import (
	"strings"
	"testing"
	"time"
)

func TestTwoFleetsNeverShareAName(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 15, 0, 0, time.UTC)
	all := func(c Cell) []string {
		return []string{c.Alarm("5xx-rate"), c.LogGroup(), c.CacheAppUser(), c.CacheDefaultUser(), c.CacheUserGroup(),
			c.DBCluster(), c.FinalSnapshot(false, at), c.FinalSnapshot(true, at), c.LaneQueue(0), c.TaskFamily(), c.MigrationTaskFamily()}
	}
	seen := map[string]string{}
	long := "cell-abcdefghijklmno"
	for _, c := range []Cell{For("", long), For("prod", long), For("staging", long), For("shop-prod-eu-central-two", long), For("shop-prod-eu-central-twx", long), For("prod", "cell-a")} {
		for _, n := range all(c) {
			if prev, dup := seen[n]; dup {
				t.Errorf("%s names %q, as %s does", c, n, prev)
			}
			seen[n] = c.Prefix + "/" + c.ID
		}
	}
	// Each within its service's limit.
	c := For("shop-prod-eu-central-two", long)
	for n, max := range map[string]int{c.CacheAppUser(): MaxCacheUserID, c.CacheDefaultUser(): MaxCacheUserID, c.CacheUserGroup(): MaxCacheUserID,
		c.DBCluster(): MaxDBIdentifier, c.LaneQueue(255): MaxQueueName} {
		if len(n) > max || strings.HasSuffix(n, "-") || strings.Contains(n, "--") {
			t.Errorf("%q: %d characters (max %d) or a bad hyphen", n, len(n), max)
		}
	}
}

func TestWithoutPrefixNamesStayAsBefore(t *testing.T) {
	for _, c := range []Cell{For("", "cell-a"), For(None, "cell-a")} {
		if c.Alarm("5xx-rate") != "cellctl-cell-a-5xx-rate" || c.LogGroup() != "/cellctl/cell-a/service" || c.CacheAppUser() != "cell-a-app" ||
			c.CacheDefaultUser() != "cell-a-default" || c.CacheUserGroup() != "cell-a-users" || c.DBCluster() != "cell-a-db" ||
			c.LaneQueue(3) != "cell-a-lane-3" || c.TaskFamily() != "cell-a-service" || c.MigrationTaskFamily() != "cell-a-migrate" || c.FinalSnapshot(false, time.Time{}) != "cell-a-final" {
			t.Errorf("%+v: names changed", c)
		}
	}
	if got := For("prod", "cell-a").Alarm("5xx-rate"); got != "cellctl-prod-cell-a-5xx-rate" {
		t.Errorf("alarm %s", got)
	}
	if got := Dashboard(None, "my.shop"); got != "cellctl-my-shop-fleet" {
		t.Errorf("dashboard %s", got)
	}
}

func TestFitCutsWithAHash(t *testing.T) {
	a, b := Fit(strings.Repeat("a", 50)+"-x", 40), Fit(strings.Repeat("a", 50)+"-y", 40)
	if len(a) != 40 || len(b) != 40 || a == b {
		t.Errorf("%q %q", a, b)
	}
	if Fit("short", 40) != "short" {
		t.Error("a short name was changed")
	}
}

func TestPrefixes(t *testing.T) {
	for p, ok := range map[string]bool{"": true, None: true, "prod": true, "shop-prod": true, "a1": true,
		"cell": false, "my-cell": false, "cells": true, "Prod": false, "1x": false, "a--b": false, "a-": false,
		strings.Repeat("a", MaxPrefix+1): false} {
		if err := CheckPrefix(p); (err == nil) != ok {
			t.Errorf("CheckPrefix(%q) = %v", p, err)
		}
	}
	for project, want := range map[string]string{"cells": "cells", "My_Shop.prod": "my-shop-prod", "9lives": "p9lives"} {
		if got, err := FromProject(project); err != nil || got != want {
			t.Errorf("FromProject(%q) = %q, %v; want %q", project, got, err, want)
		}
	}
	if got, err := FromProject(strings.Repeat("long", 20)); err != nil || len(got) > MaxPrefix {
		t.Errorf("long project: %q %v", got, err)
	}
	if _, err := FromProject("cell"); err == nil {
		t.Error(`project "cell" gave a prefix with the label "cell"`)
	}
}
