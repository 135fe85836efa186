package spec

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	for in, want := range map[string][]string{
		`["./migrate","up"]`:                      {"./migrate", "up"},
		` [ "./migrate" , "up", "--to=v2" ] `:     {"./migrate", "up", "--to=v2"},
		`["sh", "-c", "migrate up && echo done"]`: {"sh", "-c", "migrate up && echo done"},
		`["./migrate", ""]`:                       {"./migrate", ""},
	} {
		got, err := ParseCommand(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseCommand(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		`./migrate up`:          "JSON array of strings",
		`"./migrate up"`:        "JSON array of strings",
		`["./migrate", 1]`:      "JSON array of strings",
		`["a"] ["b"]`:           "JSON array of strings",
		`["a"`:                  "JSON array of strings",
		`null`:                  "got null",
		`[]`:                    "executable first",
		`["", "up"]`:            "executable first",
		`["./migrate", "a\nb"]`: "control character (U+000A)",
		// encoding/json's leniencies, refused: a null element used to be
		// run as "", a trailing "]" went unnoticed.
		`["/app/migrate", null, "up"]`: "element 1 is null, not a string: must be a JSON array of strings",
		`["/app/migrate", "up"]]`:      `with nothing after the array; got "]" after it`,
		`["/app/migrate", "up"] x`:     `with nothing after the array; got "x" after it`,
		`["/app/migrate", true]`:       "element 1 is a boolean (true), not a string",
		`["/app/migrate", ["up"]]`:     "element 1 is an array, not a string",
		`[{"a": 1}]`:                   "element 0 is an object, not a string",
		`[null]`:                       "element 0 is null, not a string",
	} {
		if _, err := ParseCommand(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCommand(%s): %v, want an error with %q", in, err, want)
		}
	}
}

// The command keys go through the key table: Set parses, Get is the
// canonical JSON drift compares, and a rollback command alone is refused.
func TestMigrationKeys(t *testing.T) {
	c := Baseline()
	c.Region, c.AuroraEngineVersion = "eu-west-1", "16"
	k, ok := Lookup("migrationCommand")
	if !ok || k.Check(` ["./migrate", "up"] `) != nil {
		t.Fatalf("migrationCommand: %v %v", ok, k.Check(`["./migrate", "up"]`))
	}
	k.Set(&c, ` ["./migrate", "up"] `, 0)
	if !c.RunsMigrations() || k.Get(&c) != `["./migrate","up"]` {
		t.Errorf("set/get: %q %q", c.MigrationCommand, k.Get(&c))
	}
	if c.MigrationTimeoutSeconds != DefaultMigrationTimeoutSeconds || c.MigrationsProblem() != nil {
		t.Errorf("timeout %d, problem %v", c.MigrationTimeoutSeconds, c.MigrationsProblem())
	}
	if b := Baseline(); b.RunsMigrations() || FormatCommand(b.MigrationCommand) != "" || b.MigrationsProblem() != nil {
		t.Errorf("the baseline runs migrations: %+v", b.MigrationCommand)
	}
	c.AuroraEngineVersion = "16.0"
	if err := c.MigrationsProblem(); err == nil || !strings.Contains(err.Error(), "16.1") {
		t.Errorf("16.0 has no Data API: %v", err)
	}
	c.MigrationCommand = nil
	c.MigrationRollbackCommand = []string{"./migrate", "down"}
	if err := c.MigrationsProblem(); err == nil || !strings.Contains(err.Error(), "migrationCommand is not") {
		t.Errorf("a rollback command alone: %v", err)
	}
}

// The migration settings survive the deployedSpec output; an output
// written before they existed reads as the baseline (no migrations,
// the default timeout), not as a zero timeout.
func TestDeployedSpecCarriesMigrations(t *testing.T) {
	c := Baseline()
	c.ID, c.Index, c.Region, c.Image = "cell-b", 2, "eu-west-1", "app:v7"
	c.MigrationCommand = []string{"./migrate", "up"}
	c.MigrationRollbackCommand = []string{"./migrate", "down", "1"}
	c.MigrationTimeoutSeconds = 1800
	enc, err := EncodeDeployed(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDeployed("cell-b", map[string]any{DeployedOutput: enc})
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("round trip: %+v %v", got, err)
	}
	old := `{"ID":"cell-b","Index":2,"Region":"eu-west-1","Image":"app:v6"}`
	got, err = DecodeDeployed("cell-b", map[string]any{DeployedOutput: old})
	if err != nil || got.RunsMigrations() || got.MigrationTimeoutSeconds != DefaultMigrationTimeoutSeconds {
		t.Errorf("an output before migrations: %+v %v", got, err)
	}
}
