package router

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// toAny converts a parsed tree to what encoding/json decodes (last
// duplicate key wins, numbers as json.Number).
func toAny(n *yaml.Node) any {
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = toAny(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		s := []any{}
		for _, c := range n.Content {
			s = append(s, toAny(c))
		}
		return s
	}
	switch n.Tag {
	case "!!str":
		return n.Value
	case "!!int", "!!float":
		return json.Number(n.Value)
	case "!!bool":
		return n.Value == "true"
	}
	return nil
}

func TestParseJSONLines(t *testing.T) {
	n, err := parseJSON("x.json", []byte("{\n  \"a\": [\n    1,\n    \"x\\ny\"\n  ],\n  \"b\": {}\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := n.Content[1]
	if n.Line != 1 || n.Content[0].Line != 2 || a.Line != 2 || a.Content[0].Line != 3 || a.Content[1].Line != 4 || n.Content[2].Line != 6 {
		t.Errorf("lines: root %d, key a %d, array %d, items %d %d, key b %d", n.Line, n.Content[0].Line, a.Line, a.Content[0].Line, a.Content[1].Line, n.Content[2].Line)
	}
	for in, want := range map[string]string{
		"{\"a\": 01}":            "x.json:1: malformed JSON at column 7: numbers must not have leading zeros: \"01\"",
		"[1,\n 2,\n]":            "x.json:3: malformed JSON at column 1: unexpected ']' after ','; remove the trailing comma",
		"{\"a\": \"b\\q\"}":      "x.json:1: malformed JSON at column 10: unknown escape \\q; JSON allows \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX",
		"{\"a\": \"tab\there\"}": "x.json:1: malformed JSON at column 11: unexpected control character U+0009 in a string; write it as an escape such as \\n",
		"{\"a\" 1}":              "x.json:1: malformed JSON at column 6: expected ':' after the key \"a\", found '1'",
		"{\"é\": tru}":           "x.json:1: malformed JSON at column 7: unexpected 't' where a value should start; the file must be JSON, with strings in double quotes",
		"{\"a\": \"open":         "x.json:1: malformed JSON at column 12: unexpected end of file in a string (a missing closing \")",
		"// c\n{}":               "x.json:1: malformed JSON at column 1: unexpected '/' where a value should start",
		"{\"a\": \"é\xffz\"}":    "x.json:1: malformed JSON at column 9: invalid UTF-8: byte 0xff at byte offset 9 of the file; JSON text must be UTF-8",
	} {
		if _, err := parseJSON("x.json", []byte(in)); err == nil || err.Error() != want {
			t.Errorf("parseJSON(%q) = %v\nwant %s", in, err, want)
		}
	}
}

// FuzzJSON checks the hand-written parser against encoding/json: it accepts
// exactly the documents json.Valid accepts (up to its nesting limit) and
// decodes them to the same values.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,-2.5e3,true,false,null,"x"]}`, `"\ud83d\ude00\ud800\u00e9"`, `{"a":1,"a":2}`,
		"\"\xff\"", `[1,]`, `{"a" :1 , }`, ` 0 `, `-0.0E+1`, `01`, `1.`, `"\u12"`, `[[[]]]`, "{\"k\":\"\t\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseJSON("f.json", data)
		valid := json.Valid(data)
		if err != nil {
			if valid && !strings.Contains(err.Error(), "nested deeper") && !(strings.Contains(err.Error(), "invalid UTF-8") && !utf8.Valid(data)) {
				t.Fatalf("rejects valid JSON %q: %v", data, err)
			}
			return
		}
		if !valid {
			t.Fatalf("accepts invalid JSON %q", data)
		}
		var want any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := toAny(n); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q decodes to %#v, encoding/json says %#v", data, got, want)
		}
	})
}
