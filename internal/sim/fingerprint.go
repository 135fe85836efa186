package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// OriginVerify is what the simulated cloud's deployed resources do with
// the X-Origin-Verify header: per stack, the values a cell's ALB listener
// rule accepts and the value each CloudFront origin sends — as
// fingerprints (sha256 of the stored secret), so a test can compare who
// sends what with who accepts what without the secret being revealed.
type OriginVerify struct {
	// Accepts maps a stack to its listener rules' accepted fingerprints.
	Accepts map[string][]string
	// Sends maps a distribution's origin id (the cell) to the fingerprint
	// its custom header carries.
	Sends map[string]string
}

// OriginVerify reads the deployed listener rules and distributions.
func (c *Cloud) OriginVerify(header string) (*OriginVerify, error) {
	out := &OriginVerify{Accepts: map[string][]string{}, Sends: map[string]string{}}
	err := c.s.view(func(st *state, _ *control) error {
		if err := st.anyCorrupt(""); err != nil {
			return err
		}
		for _, r := range st.Resources {
			switch r.Type {
			case "aws:lb/listenerRule:ListenerRule":
				conds, _ := r.Inputs["conditions"].([]any)
				for _, cv := range conds {
					cond, _ := cv.(map[string]any)
					hh, _ := cond["httpHeader"].(map[string]any)
					if name, _ := hh["httpHeaderName"].(string); !strings.EqualFold(name, header) {
						continue
					}
					vals, _ := hh["values"].([]any)
					for _, v := range vals {
						out.Accepts[r.Stack] = append(out.Accepts[r.Stack], c.fingerprint(v))
					}
				}
			case "aws:cloudfront/distribution:Distribution":
				origins, _ := r.Inputs["origins"].([]any)
				for _, ov := range origins {
					o, _ := ov.(map[string]any)
					id, _ := o["originId"].(string)
					hs, _ := o["customHeaders"].([]any)
					for _, hv := range hs {
						h, _ := hv.(map[string]any)
						if name, _ := h["name"].(string); strings.EqualFold(name, header) {
							out.Sends[id] = c.fingerprint(h["value"])
						}
					}
				}
			}
		}
		return nil
	})
	return out, err
}

// fingerprint hashes a stored value, decrypting a secret first; a value
// that cannot be read fingerprints as "unreadable", which matches nothing.
func (c *Cloud) fingerprint(v any) string {
	plain := ""
	switch t := v.(type) {
	case string:
		plain = "plain:" + t
	case map[string]any:
		s, _ := t[tagSecret].(string)
		b, err := c.s.codec.open(s)
		if err != nil {
			return "unreadable"
		}
		plain = "secret:" + string(b)
	default:
		return "unreadable"
	}
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:8])
}
