package awsmodel

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

const (
	lowerAlnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	upperAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	hexChars   = "0123456789abcdef"
	digits     = "0123456789"
)

// Rand derives AWS-looking random values from a seed. Every value is drawn
// from its own label, so the same seed always yields the same id for the
// same purpose no matter which other values were drawn, or in what order.
type Rand struct{ seed [32]byte }

func newRand(seed []byte) Rand { return Rand{seed: sha256.Sum256(seed)} }

// NewSeed returns a fresh random seed for a resource.
func NewSeed() []byte {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return b
}

// DeterministicSeed is the seed the mocks use: derived from type and logical
// name, so a plan prints the same ids every time.
func DeterministicSeed(typ, name string) []byte {
	return []byte(typ + "\x00" + name)
}

func (r Rand) stream(label string, n int) []byte {
	out := make([]byte, 0, n+32)
	for i := uint32(0); len(out) < n; i++ {
		h := sha256.New()
		h.Write(r.seed[:])
		h.Write([]byte(label))
		var c [4]byte
		binary.BigEndian.PutUint32(c[:], i)
		h.Write(c[:])
		out = h.Sum(out)
	}
	return out[:n]
}

// Chars returns n characters of charset.
func (r Rand) Chars(label string, n int, charset string) string {
	b := r.stream(label, n*2)
	out := make([]byte, n)
	for i := range out {
		v := binary.BigEndian.Uint16(b[2*i:])
		out[i] = charset[int(v)%len(charset)]
	}
	return string(out)
}

// Hex returns n lowercase hex digits.
func (r Rand) Hex(label string, n int) string {
	return hex.EncodeToString(r.stream(label, (n+1)/2))[:n]
}

// Intn returns a number in [0, n).
func (r Rand) Intn(label string, n int) int {
	if n <= 0 {
		return 0
	}
	return int(binary.BigEndian.Uint64(r.stream(label, 8)) % uint64(n))
}

// UUID returns a version-4-shaped UUID.
func (r Rand) UUID(label string) string {
	b := r.stream(label, 16)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ResourceID returns an EC2-style id: prefix + "-0" + 16 hex digits.
func (r Rand) ResourceID(prefix string) string {
	return prefix + "-0" + r.Hex("id:"+prefix, 16)
}
