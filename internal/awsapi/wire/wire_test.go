package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	ts := time.Date(2024, 9, 29, 22, 10, 0, 500e6, time.UTC)
	in := map[string]any{"Id": "m3", "Values": []any{96.85, 2.0}, "Timestamps": []any{ts}, "Count": 3, "Neg": -2, "Ok": true, "None": nil,
		"Names": []string{"a"}, "Num": json.Number("70.0")}
	b, err := EncodeCBOR(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeCBOR(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"Id": "m3", "Values": []any{96.85, 2.0}, "Timestamps": []any{ts}, "Count": 3.0, "Neg": -2.0, "Ok": true, "None": nil,
		"Names": []any{"a"}, "Num": 70.0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip =\n%#v\nwant\n%#v", got, want)
	}
	if _, err := EncodeCBOR(map[string]any{"x": struct{}{}}); err == nil || !strings.Contains(err.Error(), "x: wire: cannot encode struct") {
		t.Errorf("unsupported value: %v", err)
	}
	if _, err := DecodeCBOR([]byte{0xff, 0x00}); err == nil {
		t.Error("garbage decoded")
	}
}
