package router

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cellctl/cellctl/internal/diag"
	"gopkg.in/yaml.v3"
)

// parseJSON reads strict JSON (RFC 8259: no comments, no trailing commas,
// one document) into a yaml.Node tree with line numbers, so the loader can
// use the diag helpers and point at lines. Strings decode as encoding/json
// decodes them (a lone surrogate escape becomes U+FFFD, which every
// field's validation then refuses), except that invalid UTF-8 is an error
// naming the byte and its offset (RFC 8259 §8.1: JSON text is UTF-8);
// FuzzJSON checks it agrees with encoding/json on every valid UTF-8 input. It is hand-written because encoding/json's token API
// made loading a table with many overrides several times slower.
func parseJSON(file string, data []byte) (*yaml.Node, error) {
	p := &jsonParser{data: data, line: 1}
	p.skipSpace()
	if p.pos == len(data) {
		return nil, &diag.Error{File: file, Line: 1, Msg: "the file is empty; expected a JSON object with \"version\", \"buckets\", \"cells\" and \"overrides\""}
	}
	root, err := p.value(0)
	if err == nil {
		p.skipSpace()
		if p.pos < len(data) {
			err = p.errorf("unexpected %s after the end of the JSON document", p.found())
		}
	}
	if err != nil {
		je := err.(*jsonError)
		return nil, &diag.Error{File: file, Line: je.line, Msg: fmt.Sprintf("malformed JSON at column %d: %s", je.col, je.msg)}
	}
	return root, nil
}

type jsonParser struct {
	slab      []yaml.Node // nodes are allocated in chunks: a table holds ~10 per override
	data      []byte
	pos       int
	line      int
	lineStart int // offset of the current line, for columns
	buf       []byte
}

type jsonError struct {
	line, col int
	msg       string
}

func (e *jsonError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.line, e.col, e.msg)
}

const maxJSONDepth = 64

func (p *jsonParser) node(kind yaml.Kind, tag, value string, line int) *yaml.Node {
	if len(p.slab) == 0 {
		p.slab = make([]yaml.Node, 256)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	n.Kind, n.Tag, n.Value, n.Line = kind, tag, value, line
	return n
}

func (p *jsonParser) errorf(format string, args ...any) error {
	col := utf8.RuneCount(p.data[p.lineStart:min(p.pos, len(p.data))]) + 1
	return &jsonError{line: p.line, col: col, msg: fmt.Sprintf(format, args...)}
}

// found names the byte at the current position for an error message.
func (p *jsonParser) found() string {
	if p.pos >= len(p.data) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.data[p.pos:])
	switch {
	case r == utf8.RuneError:
		return fmt.Sprintf("byte %#02x", p.data[p.pos])
	case r < 0x20:
		return fmt.Sprintf("control character %U", r)
	}
	return fmt.Sprintf("%q", r)
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\r':
		case '\n':
			p.line++
			p.lineStart = p.pos + 1
		default:
			return
		}
		p.pos++
	}
}

func (p *jsonParser) value(depth int) (*yaml.Node, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of file; a value (object, array, string, number, true, false or null) is missing")
	}
	line := p.line
	switch c := p.data[p.pos]; {
	case c == '{':
		if depth >= maxJSONDepth {
			return nil, p.errorf("nested deeper than %d levels", maxJSONDepth)
		}
		return p.object(depth)
	case c == '[':
		if depth >= maxJSONDepth {
			return nil, p.errorf("nested deeper than %d levels", maxJSONDepth)
		}
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.node(yaml.ScalarNode, "!!str", s, line), nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]struct{ word, tag string }{{"true", "!!bool"}, {"false", "!!bool"}, {"null", "!!null"}} {
			if len(p.data)-p.pos >= len(lit.word) && string(p.data[p.pos:p.pos+len(lit.word)]) == lit.word {
				p.pos += len(lit.word)
				return p.node(yaml.ScalarNode, lit.tag, lit.word, line), nil
			}
		}
	}
	hint := ""
	if c := p.data[p.pos]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '\'' {
		hint = "; the file must be JSON, with strings in double quotes"
	}
	return nil, p.errorf("unexpected %s where a value should start%s", p.found(), hint)
}

func (p *jsonParser) object(depth int) (*yaml.Node, error) {
	n := p.node(yaml.MappingNode, "!!map", "", p.line)
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return n, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			hint := ""
			if p.pos < len(p.data) && p.data[p.pos] == '}' {
				hint = "; remove the trailing comma"
			} else if p.pos < len(p.data) {
				hint = "; keys need double quotes"
			}
			return nil, p.errorf("expected a key in double quotes, found %s%s", p.found(), hint)
		}
		line := p.line
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':' after the key %q, found %s", key, p.found())
		}
		p.pos++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, p.node(yaml.ScalarNode, "!!str", key, line), v)
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			return n, nil
		}
		return nil, p.errorf("expected ',' or '}' after the value of %q, found %s", key, p.found())
	}
}

func (p *jsonParser) array(depth int) (*yaml.Node, error) {
	n := p.node(yaml.SequenceNode, "!!seq", "", p.line)
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return n, nil
	}
	for {
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			return nil, p.errorf("unexpected ']' after ','; remove the trailing comma")
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, v)
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return n, nil
		}
		return nil, p.errorf("expected ',' or ']' in an array, found %s", p.found())
	}
}

// str reads a string starting at its opening quote.
func (p *jsonParser) str() (string, error) {
	p.pos++ // "
	start := p.pos
	// Fast path: no escapes, plain ASCII.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
		p.pos++
	}
	b := append(p.buf[:0], p.data[start:p.pos]...)
	defer func() { p.buf = b[:0] }()
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(b), nil
		case c < 0x20:
			return "", p.errorf("unexpected %s in a string; write it as an escape such as \\n", p.found())
		case c >= 0x80:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				// encoding/json would turn it into U+FFFD, and the message
				// would then show a character the file does not contain.
				return "", p.errorf("invalid UTF-8: byte %#02x at byte offset %d of the file; JSON text must be UTF-8", c, p.pos)
			}
			b = append(b, p.data[p.pos:p.pos+size]...)
			p.pos += size
		case c != '\\':
			b = append(b, c)
			p.pos++
		default:
			if p.pos+1 >= len(p.data) {
				p.pos++
				return "", p.errorf("unexpected end of file in a string")
			}
			e := p.data[p.pos+1]
			p.pos += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", p.errorf("\\u must be followed by four hex digits")
				}
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
						save := p.pos
						p.pos += 2
						var ok2 bool
						if r2, ok2 = p.hex4(); !ok2 {
							return "", p.errorf("\\u must be followed by four hex digits")
						}
						if utf16.DecodeRune(r, r2) == utf8.RuneError {
							p.pos = save // not a pair: the second escape stands alone
							r2 = -1
						}
					}
					if r2 < 0 {
						r = utf8.RuneError
					} else {
						r = utf16.DecodeRune(r, r2)
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				p.pos--
				return "", p.errorf("unknown escape \\%c; JSON allows \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX", e)
			}
		}
	}
	return "", p.errorf("unexpected end of file in a string (a missing closing \")")
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.data)-p.pos < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(v), true
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonParser) number() (*yaml.Node, error) {
	start, line := p.pos, p.line
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	bad := func() error {
		return p.errorf("malformed number %q", string(p.data[start:min(p.pos+1, len(p.data))]))
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	intStart := p.pos
	if digits() == 0 {
		return nil, bad()
	}
	if p.data[intStart] == '0' && p.pos-intStart > 1 {
		text := string(p.data[start:p.pos])
		p.pos = start
		return nil, p.errorf("numbers must not have leading zeros: %q", text)
	}
	tag := "!!int"
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		tag = "!!float"
		if digits() == 0 {
			return nil, bad()
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		tag = "!!float"
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, bad()
		}
	}
	return p.node(yaml.ScalarNode, tag, string(p.data[start:p.pos]), line), nil
}
