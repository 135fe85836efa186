package fleet

import (
	"net/url"
	"regexp"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/diag"
)

// EmulatorKeys are the aws provider settings a user of a local AWS
// emulator (LocalStack, moto) sets beside credentials from the
// environment: the endpoints, path-style S3 addressing and the checks an
// emulator cannot answer (STS credential validation, the account id
// lookup, the EC2 metadata API, the region list). Every provider a stack
// creates carries them — the stack's own, the router's us-east-1 edge
// provider and a cell's DNS provider — or the emulator sees some calls
// and AWS the rest.
var EmulatorKeys = []string{"endpoints", "s3UsePathStyle", "skipCredentialsValidation", "skipMetadataApiCheck", "skipRegionValidation", "skipRequestingAccountId"}

// Endpoint is one service endpoint an aws:endpoints entry names, with
// where it was set.
type Endpoint struct {
	Service string `json:"service"`
	URL     string `json:"url"`
	File    string `json:"file"`
	Line    int    `json:"line"`
}

// servicePattern is the shape of a key of pulumi-aws's endpoints block
// ("s3", "sts", "servicequotas", "elbv2"…); the provider itself refuses a
// name it does not know when the program builds the provider.
var servicePattern = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// emulatorKey validates one of EmulatorKeys (false: key is not one of
// them). The skip flags and s3UsePathStyle are booleans; aws:endpoints
// is a list of mappings from service to an http(s) URL, as pulumi-aws
// takes it. The endpoints set are appended to eps.
func (l *loader) emulatorKey(eps *[]Endpoint, file, full, key string, v *yaml.Node) bool {
	switch key {
	case "s3UsePathStyle", "skipCredentialsValidation", "skipMetadataApiCheck", "skipRegionValidation", "skipRequestingAccountId":
		if v.Kind != yaml.ScalarNode || v.Value != "true" && v.Value != "false" {
			got := diag.KindName(v)
			if v.Kind == yaml.ScalarNode {
				got = diag.Echo(v.Value)
			}
			l.errs.Add(file, v.Line, full, "must be true or false, got %s", got)
		}
		return true
	case "endpoints":
		l.endpoints(eps, file, full, v)
		return true
	}
	return false
}

func (l *loader) endpoints(eps *[]Endpoint, file, full string, v *yaml.Node) {
	const form = `a list of service: URL mappings, such as [{s3: "http://localhost:4566", sts: "http://localhost:4566"}]`
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		l.errs.Add(file, v.Line, full, "must be %s, got %s", form, diag.KindName(v))
		return
	}
	var found []Endpoint
	for _, item := range v.Content {
		if item.Kind != yaml.MappingNode || len(item.Content) == 0 {
			l.errs.Add(file, item.Line, full, "each entry must be a mapping of service to URL (%s), got %s", form, diag.KindName(item))
			continue
		}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, val := item.Content[i], item.Content[i+1]
			field := full + "." + k.Value
			if !servicePattern.MatchString(k.Value) {
				l.errs.Add(file, k.Line, field, "must name an AWS service as the aws provider's endpoints block does (lowercase letters and digits, such as s3 or sts), got %s", diag.Echo(k.Value))
				continue
			}
			if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!str" {
				l.errs.Add(file, val.Line, field, "must be a URL, got %s", diag.KindName(val))
				continue
			}
			u, err := url.Parse(val.Value)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				l.errs.Add(file, val.Line, field, "must be an http:// or https:// URL with a host, such as http://localhost:4566, got %s", diag.Echo(val.Value))
				continue
			}
			found = append(found, Endpoint{Service: k.Value, URL: val.Value, File: file, Line: val.Line})
		}
	}
	*eps = append(*eps, found...)
}

// Endpoints are the aws:endpoints every stack of the fleet runs with: a
// stack's own, else the fleet's in Pulumi.yaml (a stack's value replaces
// the project's, as Pulumi merges config), each once, in file and line
// order. Empty: every stack talks to AWS's endpoints (unless the
// environment says otherwise: AWS_ENDPOINT_URL).
func (f *Fleet) Endpoints() []Endpoint {
	seen := map[Endpoint]bool{}
	var out []Endpoint
	add := func(own []Endpoint) {
		eps := own
		if len(eps) == 0 {
			eps = f.baseEndpoints
		}
		for _, e := range eps {
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	for _, c := range f.Cells {
		add(c.Endpoints)
	}
	if f.Router != nil {
		add(f.Router.Endpoints)
	}
	if len(f.Cells) == 0 && f.Router == nil {
		add(nil)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out
}
