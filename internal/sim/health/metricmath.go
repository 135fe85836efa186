package health

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The metric math the simulator evaluates in alarms.

// expr is a parsed metric math expression: numbers, query ids, + - * /,
// parentheses and FILL(x, value) — what the cell template's alarms use.
// Any other function is refused with an error, never guessed.
type expr interface {
	eval(lookup func(id string) (float64, bool, error)) (float64, error)
}

type numExpr float64
type idExpr string
type negExpr struct{ x expr }
type binExpr struct {
	op   byte
	l, r expr
}
type fillExpr struct {
	x   expr
	def float64
}

func (n numExpr) eval(func(string) (float64, bool, error)) (float64, error) { return float64(n), nil }

func (i idExpr) eval(lookup func(string) (float64, bool, error)) (float64, error) {
	v, ok, err := lookup(string(i))
	if err != nil {
		return 0, err
	}
	if !ok {
		return math.NaN(), nil
	}
	return v, nil
}

func (n negExpr) eval(l func(string) (float64, bool, error)) (float64, error) {
	v, err := n.x.eval(l)
	return -v, err
}

func (b binExpr) eval(lookup func(string) (float64, bool, error)) (float64, error) {
	l, err := b.l.eval(lookup)
	if err != nil {
		return 0, err
	}
	r, err := b.r.eval(lookup)
	if err != nil {
		return 0, err
	}
	switch b.op {
	case '+':
		return l + r, nil
	case '-':
		return l - r, nil
	case '*':
		return l * r, nil
	}
	if r == 0 {
		return math.NaN(), nil // no datapoint, as CloudWatch drops a division by zero
	}
	return l / r, nil
}

func (f fillExpr) eval(lookup func(string) (float64, bool, error)) (float64, error) {
	v, err := f.x.eval(lookup)
	if err == nil && math.IsNaN(v) {
		return f.def, nil
	}
	return v, err
}

type exprParser struct {
	src  string
	toks []string
	i    int
}

func parseExpr(src string) (expr, error) {
	p := &exprParser{src: src}
	for i := 0; i < len(src); {
		c := rune(src[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case strings.ContainsRune("+-*/(),", c):
			p.toks = append(p.toks, string(c))
			i++
		case unicode.IsDigit(c) || c == '.':
			j := i
			for j < len(src) && (unicode.IsDigit(rune(src[j])) || src[j] == '.') {
				j++
			}
			p.toks = append(p.toks, src[i:j])
			i = j
		case unicode.IsLetter(c) || c == '_':
			j := i
			for j < len(src) && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])) || src[j] == '_') {
				j++
			}
			p.toks = append(p.toks, src[i:j])
			i = j
		default:
			return nil, fmt.Errorf("the simulator cannot evaluate expression %q (unexpected %q)", src, c)
		}
	}
	e, err := p.sum()
	if err == nil && p.i != len(p.toks) {
		err = fmt.Errorf("unexpected %q", p.toks[p.i])
	}
	if err != nil {
		return nil, fmt.Errorf("the simulator cannot evaluate expression %q: %v", src, err)
	}
	return e, nil
}

func (p *exprParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *exprParser) next() string { t := p.peek(); p.i++; return t }

func (p *exprParser) sum() (expr, error) {
	l, err := p.product()
	for err == nil && (p.peek() == "+" || p.peek() == "-") {
		op := p.next()[0]
		var r expr
		if r, err = p.product(); err == nil {
			l = binExpr{op: op, l: l, r: r}
		}
	}
	return l, err
}

func (p *exprParser) product() (expr, error) {
	l, err := p.unary()
	for err == nil && (p.peek() == "*" || p.peek() == "/") {
		op := p.next()[0]
		var r expr
		if r, err = p.unary(); err == nil {
			l = binExpr{op: op, l: l, r: r}
		}
	}
	return l, err
}

func (p *exprParser) unary() (expr, error) {
	if p.peek() == "-" {
		p.next()
		x, err := p.unary()
		return negExpr{x}, err
	}
	t := p.next()
	switch {
	case t == "":
		return nil, fmt.Errorf("unexpected end")
	case t == "(":
		e, err := p.sum()
		if err == nil && p.next() != ")" {
			err = fmt.Errorf("missing )")
		}
		return e, err
	case unicode.IsDigit(rune(t[0])) || t[0] == '.':
		f, err := strconv.ParseFloat(t, 64)
		return numExpr(f), err
	case p.peek() == "(":
		if t != "FILL" {
			return nil, fmt.Errorf("function %s is not supported by the simulator (only FILL)", t)
		}
		p.next()
		x, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.next() != "," {
			return nil, fmt.Errorf("FILL needs two arguments")
		}
		d, err := p.unary()
		if err != nil {
			return nil, err
		}
		n, ok := d.(numExpr)
		if !ok || p.next() != ")" {
			return nil, fmt.Errorf("FILL's second argument must be a number")
		}
		return fillExpr{x: x, def: float64(n)}, nil
	}
	return idExpr(t), nil
}

type Query struct {
	ID, Label               string
	Namespace, Metric, Stat string
	Dims                    map[string]string
	Period                  time.Duration
	ReturnData              bool
}
