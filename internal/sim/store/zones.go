package store

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// HostedZone is a Route 53 hosted zone of the simulated account.
type HostedZone struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

var (
	zoneIDPattern   = regexp.MustCompile(`^Z[A-Z0-9]{1,31}$`)
	zoneNamePattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// normalZone checks a zone id and name and returns the name as Route 53
// keeps it (lower case, no trailing dot). A top-level domain is refused:
// Route 53 creates no hosted zone for one.
func normalZone(id, name string) (string, error) {
	if !zoneIDPattern.MatchString(id) {
		return "", fmt.Errorf("zone id %q: want a Route 53 hosted zone id such as Z0123456789ABCDEFGHIJ", id)
	}
	name = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
	if !zoneNamePattern.MatchString(name) {
		return "", fmt.Errorf("zone name %q: want a domain name of two or more labels such as cells.example.com", name)
	}
	return name, nil
}

// AddZone creates (or renames) a hosted zone of the simulated account.
func (c *Cloud) AddZone(id, name string) error {
	name, err := normalZone(id, name)
	if err != nil {
		return err
	}
	return c.s.update(func(st *State, _ *Control) error {
		if st.Zones == nil {
			st.Zones = map[string]string{}
		}
		st.Zones[id] = name
		st.TouchMeta()
		return nil
	})
}

// Zones lists the simulated account's hosted zones by id.
func (c *Cloud) Zones() ([]HostedZone, error) {
	var out []HostedZone
	err := c.s.view(func(st *State, _ *Control) error {
		for id, name := range st.Zones {
			out = append(out, HostedZone{ID: id, Name: name})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// IsRetired reports whether AWS (the simulator) no longer offers engine at
// version for new resources.
func (st *State) IsRetired(engine, version string) bool {
	return slices.Contains(st.Retired, engine+" "+version)
}

// RetireEngineVersion makes the simulator stop offering engine at version
// for new resources, as AWS does with an old minor: creating a cluster at
// it fails with InvalidParameterCombination ("Cannot find version 15.8
// for aurora-postgresql") and DescribeDBEngineVersions no longer lists
// it. Running clusters keep it. restore undoes it.
func (c *Cloud) RetireEngineVersion(engine, version string, restore bool) error {
	if engine == "" || version == "" || strings.ContainsAny(engine+version, " :") {
		return fmt.Errorf("an engine (aurora-postgresql) and a version (15.8) are required, got %q %q", engine, version)
	}
	return c.s.update(func(st *State, _ *Control) error {
		key := engine + " " + version
		i := slices.Index(st.Retired, key)
		switch {
		case restore && i >= 0:
			st.Retired = slices.Delete(st.Retired, i, i+1)
		case !restore && i < 0:
			st.Retired = append(st.Retired, key)
			sort.Strings(st.Retired)
		default:
			return nil
		}
		st.TouchMeta()
		return nil
	})
}

// RetiredEngineVersions lists "<engine> <version>" no longer offered.
func (c *Cloud) RetiredEngineVersions() ([]string, error) {
	var out []string
	err := c.s.view(func(st *State, _ *Control) error {
		out = append(out, st.Retired...)
		return nil
	})
	return out, err
}
