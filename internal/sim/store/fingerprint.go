package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
)

// OriginVerify is what the simulated cloud's deployed resources do with
// the X-Origin-Verify header: per stack, the values a cell's ALB listener
// rule accepts and the value CloudFront sends each cell — as fingerprints
// (sha256 of the stored secret), so a test can compare who sends what with
// who accepts what without the secret being revealed.
type OriginVerify struct {
	// Accepts maps a stack to its listener rules' accepted fingerprints.
	Accepts map[string][]string
	// Sends maps each cell a distribution's requests reach to the
	// fingerprint they carry. The cells are the edge function's choice
	// (the origins of the config.json of the version the distribution
	// runs): the function replaces only the origin's domain, so a request
	// carries the custom header of the origin the default behavior
	// targets — the fleet's one origin. A distribution whose function
	// code cannot be read reaches no cell here.
	Sends map[string]string
}

// OriginVerify reads the deployed listener rules and distributions.
func (c *Cloud) OriginVerify(header string) (*OriginVerify, error) {
	out := &OriginVerify{Accepts: map[string][]string{}, Sends: map[string]string{}}
	err := c.s.view(func(st *State, _ *Control) error {
		vw := newView(st, c.s.codec)
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
				sent := ""
				target, _ := r.Inputs["defaultCacheBehavior"].(map[string]any)
				targetID, _ := target["targetOriginId"].(string)
				origins, _ := r.Inputs["origins"].([]any)
				for _, ov := range origins {
					o, _ := ov.(map[string]any)
					if id, _ := o["originId"].(string); id != targetID {
						continue
					}
					hs, _ := o["customHeaders"].([]any)
					for _, hv := range hs {
						h, _ := hv.(map[string]any)
						if name, _ := h["name"].(string); strings.EqualFold(name, header) {
							sent = c.fingerprint(h["value"])
						}
					}
				}
				fc, ok := vw.EdgeBuild(c.s.dir, r)
				var cfg struct {
					Origins map[string]string `json:"origins"`
				}
				if !ok || sent == "" || json.Unmarshal([]byte(fc.Files["config.json"]), &cfg) != nil {
					continue
				}
				for cell := range cfg.Origins {
					out.Sends[cell] = sent
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

// EdgeBuild is the stored code of the function version the distribution's
// origin request association runs; false when it has none or it cannot be
// read.
func (v *View) EdgeBuild(dir string, dist *Record) (LambdaCode, bool) {
	var fc LambdaCode
	arn := distributionLambdaArn(v, dist)
	parts := strings.Split(arn, ":")
	if len(parts) < 8 {
		return fc, false
	}
	var fn *Record
	for _, r := range v.State.Resources {
		if r.Type == TypeFunction && Refers(r, arn) {
			fn = r
			break
		}
	}
	if fn == nil {
		return fc, false
	}
	if err := ReadJSON(filepath.Join(dir, functionDir, fn.Region, fn.ID, versionFile(parts[7])), &fc); err != nil {
		return fc, false
	}
	return fc, true
}

func distributionLambdaArn(v *View, dist *Record) string {
	b := v.Outputs(dist)["defaultCacheBehavior"]
	if !b.IsObject() {
		return ""
	}
	as := b.ObjectValue()["lambdaFunctionAssociations"]
	if !as.IsArray() || len(as.ArrayValue()) == 0 {
		return ""
	}
	a := as.ArrayValue()[0]
	if !a.IsObject() {
		return ""
	}
	if s := a.ObjectValue()["lambdaArn"]; s.IsString() {
		return s.StringValue()
	}
	return ""
}
