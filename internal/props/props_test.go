package props

import (
	"slices"
	"testing"
)

func TestStringList(t *testing.T) {
	for _, c := range []struct {
		in   any
		want []string
		ok   bool
	}{
		{nil, nil, true},
		{[]any{"subnet-1", "subnet-2"}, []string{"subnet-1", "subnet-2"}, true},
		{[]string{"sg-1"}, []string{"sg-1"}, true},
		{[]any{"subnet-1", 2.0}, nil, false},
		{"subnet-1", nil, false},
		{map[string]any{}, nil, false},
	} {
		got, ok := StringList(c.in)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("StringList(%#v) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
