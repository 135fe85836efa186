// Package wire converts between plain Go values and the CBOR data model of
// the Smithy RPC v2 CBOR protocol, which the pinned aws-sdk-go-v2
// CloudWatch client speaks (service/cloudwatch v1.76.0: rpcv2.NewCBOR).
// The simulator's AWS API server encodes its answers with it, and the
// readers' tests re-encode documented AWS response bodies with it.
//
// Plain values are what encoding/json produces plus time.Time:
// map[string]any, []any, string, float64, json.Number, int, int64, bool,
// time.Time and nil. Timestamps travel as CBOR tag 1 around epoch seconds,
// as the protocol requires.
package wire

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"
)

// Content type and protocol header of Smithy RPC v2 CBOR.
const (
	ContentTypeCBOR = "application/cbor"
	ProtocolHeader  = "Smithy-Protocol"
	ProtocolCBOR    = "rpc-v2-cbor"
)

// EncodeCBOR encodes a plain value.
func EncodeCBOR(v any) ([]byte, error) {
	c, err := toCBOR(v)
	if err != nil {
		return nil, err
	}
	return cbor.Encode(c), nil
}

// DecodeCBOR decodes a CBOR document into plain values (maps, lists,
// strings, float64 for every number, time.Time for tag-1 timestamps).
func DecodeCBOR(p []byte) (any, error) {
	if len(p) == 0 {
		return map[string]any{}, nil
	}
	v, err := cbor.Decode(p)
	if err != nil {
		return nil, err
	}
	return fromCBOR(v)
}

func toCBOR(v any) (cbor.Value, error) {
	switch x := v.(type) {
	case nil:
		return &cbor.Nil{}, nil
	case bool:
		return cbor.Bool(x), nil
	case string:
		return cbor.String(x), nil
	case int:
		return intCBOR(int64(x)), nil
	case int32:
		return intCBOR(int64(x)), nil
	case int64:
		return intCBOR(x), nil
	case float64:
		return floatCBOR(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return intCBOR(i), nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return cbor.Float64(f), nil
	case time.Time:
		return &cbor.Tag{ID: 1, Value: cbor.Float64(float64(x.UnixMilli()) / 1e3)}, nil
	case []any:
		l := make(cbor.List, 0, len(x))
		for _, e := range x {
			c, err := toCBOR(e)
			if err != nil {
				return nil, err
			}
			l = append(l, c)
		}
		return l, nil
	case []string:
		l := make(cbor.List, 0, len(x))
		for _, e := range x {
			l = append(l, cbor.String(e))
		}
		return l, nil
	case map[string]any:
		m := cbor.Map{}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c, err := toCBOR(x[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			m[k] = c
		}
		return m, nil
	}
	return nil, fmt.Errorf("wire: cannot encode %T", v)
}

// floatCBOR keeps integral doubles as floats: a double-typed member
// (Threshold 70.0) must stay a double on the wire.
func floatCBOR(f float64) cbor.Value { return cbor.Float64(f) }

func intCBOR(i int64) cbor.Value {
	if i < 0 {
		return cbor.NegInt(uint64(-1 - i))
	}
	return cbor.Uint(uint64(i))
}

func fromCBOR(v cbor.Value) (any, error) {
	switch x := v.(type) {
	case cbor.Uint:
		return float64(x), nil
	case cbor.NegInt:
		return -1 - float64(x), nil
	case cbor.Float32:
		return float64(x), nil
	case cbor.Float64:
		return float64(x), nil
	case cbor.String:
		return string(x), nil
	case cbor.Slice:
		return []byte(x), nil
	case cbor.Bool:
		return bool(x), nil
	case *cbor.Nil, *cbor.Undefined:
		return nil, nil
	case cbor.List:
		out := make([]any, 0, len(x))
		for _, e := range x {
			p, err := fromCBOR(e)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	case cbor.Map:
		out := make(map[string]any, len(x))
		for k, e := range x {
			p, err := fromCBOR(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = p
		}
		return out, nil
	case *cbor.Tag:
		if x.ID != 1 {
			return nil, fmt.Errorf("wire: unsupported CBOR tag %d", x.ID)
		}
		t, err := cbor.AsTime(x)
		if err != nil {
			return nil, err
		}
		return t.UTC(), nil
	}
	return nil, fmt.Errorf("wire: unsupported CBOR value %T", v)
}
