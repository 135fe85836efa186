// Package render draws cellctl's human output: tables (lipgloss/table) and
// status words, styled on a terminal and plain, stable text when piped so
// scripts and golden tests can read it.
package render

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/muesli/termenv"
)

// Styles picks colours for one destination.
type Styles struct {
	r     *lipgloss.Renderer
	color bool
}

// NewStyles returns styles for a writer; color false yields plain text.
func NewStyles(w io.Writer, color bool) *Styles {
	r := lipgloss.NewRenderer(w)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return &Styles{r: r, color: color}
}

// Color reports whether styling is on.
func (s *Styles) Color() bool { return s.color }

func (s *Styles) fg(c string, text string) string {
	if !s.color {
		return text
	}
	return s.r.NewStyle().Foreground(lipgloss.Color(c)).Render(text)
}

// Good, Bad, Warn, Dim and Bold style a word.
func (s *Styles) Good(t string) string { return s.fg("2", t) }
func (s *Styles) Bad(t string) string  { return s.fg("1", t) }
func (s *Styles) Warn(t string) string { return s.fg("3", t) }
func (s *Styles) Dim(t string) string  { return s.fg("8", t) }
func (s *Styles) Bold(t string) string {
	if !s.color {
		return t
	}
	return s.r.NewStyle().Bold(true).Render(t)
}

// Table renders rows under headers. On a terminal it draws a rounded,
// styled table; otherwise aligned columns with no borders.
func (s *Styles) Table(headers []string, rows [][]string) string {
	t := table.New().Headers(headers...).Rows(rows...)
	if s.color {
		header := s.r.NewStyle().Bold(true).Padding(0, 1)
		cell := s.r.NewStyle().Padding(0, 1)
		t = t.Border(lipgloss.RoundedBorder()).
			BorderStyle(s.r.NewStyle().Foreground(lipgloss.Color("8"))).
			StyleFunc(func(row, col int) lipgloss.Style {
				if row == table.HeaderRow {
					return header
				}
				return cell
			})
	} else {
		cell := s.r.NewStyle().PaddingRight(2)
		t = t.Border(lipgloss.HiddenBorder()).
			BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
			BorderHeader(false).BorderColumn(false).
			StyleFunc(func(row, col int) lipgloss.Style { return cell })
	}
	out := t.Render()
	if !s.color {
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRight(l, " ")
		}
		out = strings.Join(lines, "\n")
	}
	return out + "\n"
}

// MarkdownTable renders rows under headers as a GitHub-flavoured markdown
// table (lipgloss/table with the markdown border, columns padded to their
// widest cell), for pull-request and issue comments: the one markdown
// table of cellctl's views. Every cell goes through MarkdownEscape, so a
// value cannot break the table (a cell already escaped, or made with
// MarkdownCode, stays as it is).
func MarkdownTable(headers []string, rows [][]string) string {
	escaped := make([][]string, len(rows))
	for i, r := range rows {
		escaped[i] = make([]string, len(r))
		for j, v := range r {
			escaped[i][j] = MarkdownEscape(v)
		}
	}
	t := table.New().Headers(headers...).Rows(escaped...).
		Border(lipgloss.MarkdownBorder()).BorderTop(false).BorderBottom(false)
	return t.Render() + "\n"
}

// MarkdownEscape keeps a value inside one markdown table cell or list
// line: a pipe not already escaped is escaped, a line break becomes a
// space. Escaping twice changes nothing.
func MarkdownEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '|' && (i == 0 || s[i-1] != '\\'):
			b.WriteString(`\|`)
		case c == '\n':
			b.WriteByte(' ')
		case c == '\r':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// MarkdownCode is s as inline code that stays in one table cell:
// backticks become quotes, pipes are escaped, one line; "" stays "".
func MarkdownCode(s string) string {
	if s == "" {
		return ""
	}
	return "`" + MarkdownEscape(strings.ReplaceAll(s, "`", "'")) + "`"
}

// JSON writes v as one indented JSON document.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
