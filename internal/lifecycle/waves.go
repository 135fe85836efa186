package lifecycle

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// addToWave returns waves.yaml with cell appended to the cells of wave
// (the last wave when wave is ""), and the wave's name. The file is edited
// as text at the position yaml.v3 reports for the wave's cells — comments,
// order and formatting of the rest of the file stay byte for byte (a
// re-encoded document would not). Flow lists (`cells: [a, b]`) get
// `, cell` before the bracket; block lists get one more `- cell` line.
func addToWave(data []byte, wave, cell string) ([]byte, string, error) {
	lists, err := waveLists(data)
	if err != nil {
		return nil, "", err
	}
	if len(lists) == 0 {
		return nil, "", errors.New("no waves")
	}
	var names []string
	var target *yaml.Node
	for i, w := range lists {
		names = append(names, w.name)
		if w.name == wave || (wave == "" && i == len(lists)-1) {
			if w.cells == nil || w.cells.Kind != yaml.SequenceNode {
				return nil, "", fmt.Errorf("wave %q has no cells list", w.name)
			}
			target, wave = w.cells, w.name
		}
	}
	if target == nil {
		return nil, "", fmt.Errorf("no wave %q (waves: %s)", wave, strings.Join(names, ", "))
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if target.Style&yaml.FlowStyle != 0 {
		// The closing bracket: after the last item (or the opening one).
		line, col := target.Line, target.Column
		if n := len(target.Content); n > 0 {
			line, col = target.Content[n-1].Line, target.Content[n-1].Column
		}
		l := lines[line-1]
		off := bytes.IndexByte(l[col-1:], ']')
		if off < 0 {
			return nil, "", fmt.Errorf("line %d: the flow list of wave %q does not close on its last item's line; edit it by hand", line, wave)
		}
		at := col - 1 + off
		sep := ", "
		if len(target.Content) == 0 {
			sep = ""
		}
		nl := append(append(append([]byte{}, l[:at]...), []byte(sep+cell)...), l[at:]...)
		lines[line-1] = nl
		return bytes.Join(lines, nil), wave, nil
	}
	if len(target.Content) == 0 {
		return nil, "", fmt.Errorf("wave %q has an empty block list; edit it by hand", wave)
	}
	last := target.Content[len(target.Content)-1]
	if last.Kind != yaml.ScalarNode || last.Line > len(lines) {
		return nil, "", fmt.Errorf("wave %q: unexpected cells list", wave)
	}
	l := string(lines[last.Line-1])
	dash := strings.LastIndex(l[:last.Column-1], "-")
	if dash < 0 {
		return nil, "", fmt.Errorf("line %d: cannot find the list item of wave %q", last.Line, wave)
	}
	item := l[:dash] + "- " + cell + "\n"
	out := append([][]byte{}, lines[:last.Line]...)
	if !bytes.HasSuffix(lines[last.Line-1], []byte("\n")) {
		out[len(out)-1] = append(append([]byte{}, out[len(out)-1]...), '\n')
	}
	out = append(out, []byte(item))
	out = append(out, lines[last.Line:]...)
	return bytes.Join(out, nil), wave, nil
}

// waveList is one wave of waves.yaml as yaml.v3 parsed it: its name and
// its cells node (nil when it has none), whose positions the edits use.
type waveList struct {
	name  string
	cells *yaml.Node
}

// waveLists parses waves.yaml down to each wave's name and cells node.
func waveLists(data []byte) ([]waveList, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a mapping")
	}
	var waves *yaml.Node
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "waves" {
			waves = root.Content[i+1]
		}
	}
	if waves == nil || waves.Kind != yaml.SequenceNode {
		return nil, errors.New("no waves")
	}
	out := make([]waveList, 0, len(waves.Content))
	for _, w := range waves.Content {
		var l waveList
		for i := 0; i+1 < len(w.Content); i += 2 {
			switch w.Content[i].Value {
			case "name":
				l.name = w.Content[i+1].Value
			case "cells":
				l.cells = w.Content[i+1]
			}
		}
		out = append(out, l)
	}
	return out, nil
}
