package router

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveTableKeepsThePreviousAndRefusesLostUpdates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stacks", "routing.json")
	prevPath := filepath.Join(dir, PreviousFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	v1 := demoTable(t)
	if err := SaveTable(path, prevPath, nil, v1); err != nil {
		t.Fatal(err)
	}
	tr, err := DrainCell(v1, "cell-d", DrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveTable(path, prevPath, v1, tr.To); err != nil {
		t.Fatal(err)
	}
	onDisk, err := Load(path)
	if err != nil || !onDisk.Equal(tr.To) {
		t.Fatalf("routing.json is not the new table: %v", err)
	}
	prev, err := Load(prevPath)
	if err != nil || !prev.Equal(v1) {
		t.Fatalf("the previous table is not kept: %v", err)
	}
	if d := Diff(prev, onDisk); d.MovedBuckets != 256 {
		t.Errorf("route --diff of previous → current moves %d buckets", d.MovedBuckets)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}

	// A second operator who read v1 and added a cell is refused.
	other, err := AddCell(v1, NewCell{ID: "cell-e"}, AddOptions{Take: TakeAuto})
	if err != nil {
		t.Fatal(err)
	}
	checkRefusals(t, []refusal{
		{"lost update", func() error { return SaveTable(path, prevPath, v1, other.To) },
			path + ` changed since it was read (version 2 on disk, version 1 when read): another change was made meanwhile; run the command again on the new table`},
		{"not a successor", func() error { return SaveTable(path, prevPath, tr.To, v1) },
			path + `: version: went down from 2 to 1; versions only go up`},
		{"unchanged", func() error { return SaveTable(path, prevPath, tr.To, tr.To) },
			path + `: nothing to save: the table is unchanged at version 2`},
		{"create over an existing file", func() error { return SaveTable(path, prevPath, nil, v1) },
			path + ` already exists; load it and change it instead of creating a new table`},
	})
	if now, _ := Load(path); !now.Equal(tr.To) {
		t.Errorf("a refused save changed the file")
	}
	// The previous table cannot be kept: nothing is written.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	fin0, err := MarkDrained(tr.To, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveTable(path, blocked, tr.To, fin0.To); err == nil || !strings.HasPrefix(err.Error(), "cannot keep the previous table: rename ") {
		t.Errorf("previous path is a directory: %v", err)
	}
	if now, _ := Load(path); !now.Equal(tr.To) {
		t.Errorf("a save that could not keep the previous table changed routing.json")
	}
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	fin, err := MarkDrained(tr.To, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	err = SaveTable(path, prevPath, tr.To, fin.To)
	if err == nil || !strings.HasPrefix(err.Error(), path+" changed since it was read and is no longer valid; fix it and run the command again:\n") {
		t.Errorf("an invalid file on disk: %v", err)
	}
}

func TestCheckDeployed(t *testing.T) {
	local := demoTable(t) // version 1
	s := local.Spec()
	s.Version = 5
	v5 := mustNew(t, s)
	for _, v := range []int64{0, 1} {
		if err := CheckDeployed(local, v); err != nil {
			t.Errorf("deployed %d, local 1: %v", v, err)
		}
	}
	if err := CheckDeployed(v5, 3); err != nil {
		t.Errorf("deployed 3 behind local 5 (unpublished changes are published with this one): %v", err)
	}
	checkRefusals(t, []refusal{
		{"newer deployed", func() error { return CheckDeployed(local, 2) },
			`the deployed router serves routing table version 2, newer than version 1 here: someone else published a change meanwhile; update this checkout (git pull) and run the command again`},
		{"nonsense", func() error { return CheckDeployed(local, -1) },
			`the deployed router reports routing table version -1; versions are positive`},
	})
}
