package access

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/offline"
)

// CloudFront as the origin's caller. CloudFront is not an IAM principal
// on this path: it runs the edge function on each origin request and
// connects to the cell's ALB over HTTPS, so what must hold is written in
// the distribution, the function, the ALB's listener and its
// certificate. The network side (CloudFront's prefix list reaching the
// ALB on 443) is internal/netpath's.

// EdgePath is one thing CloudFront must be able to do, declared by the
// router (router/component.EdgePaths). With Distribution set: the
// distribution runs a published version of Function on its origin
// requests, and each of its origins is HTTPS-only to one of Origins (the
// routed cells' DNS names; the function sends each request to one of
// them, keeping the configured protocol). With Cell set: the cell's ALB
// answers HTTPS on 443 with a certificate covering DNSName.
type EdgePath struct {
	Name       string `json:"name"`
	DeclaredBy string `json:"declaredBy"`
	// Distribution and Function are labels (router/cdn, router/edge).
	Distribution string   `json:"distribution,omitempty"`
	Function     string   `json:"function,omitempty"`
	Origins      []string `json:"origins,omitempty"`
	Cell         string   `json:"cell,omitempty"`
	DNSName      string   `json:"dnsName,omitempty"`
}

// edgeFacts are what the render says of the edge's path.
type edgeFacts struct {
	distributions map[string]distribution // by label
	listeners     []listener
	certificates  map[string][]string // ARN -> names
}

type distribution struct {
	origins      []edgeOrigin
	associations []association
}

type edgeOrigin struct{ id, domain, protocol string }

type association struct{ event, arn string }

type listener struct {
	owner, label, protocol, cert string
	port                         float64
}

// add reads one rendered resource of the edge's path.
func (e *edgeFacts) add(s offline.Stack, typ, label string, in, out map[string]any) {
	if e.distributions == nil {
		e.distributions, e.certificates = map[string]distribution{}, map[string][]string{}
	}
	switch typ {
	case "aws:cloudfront/distribution:Distribution":
		var d distribution
		for _, o := range objects(in["origins"]) {
			co, _ := o["customOriginConfig"].(map[string]any)
			d.origins = append(d.origins, edgeOrigin{id: str(o, "originId"), domain: str(o, "domainName"), protocol: str(co, "originProtocolPolicy")})
		}
		behaviors := objects(in["defaultCacheBehavior"])
		behaviors = append(behaviors, objects(in["orderedCacheBehaviors"])...)
		for _, b := range behaviors {
			for _, a := range objects(b["lambdaFunctionAssociations"]) {
				d.associations = append(d.associations, association{event: str(a, "eventType"), arn: str(a, "lambdaArn")})
			}
		}
		e.distributions[label] = d
	case "aws:lb/listener:Listener":
		port, _ := in["port"].(float64)
		e.listeners = append(e.listeners, listener{owner: s.Owner, label: label, protocol: str(in, "protocol"), cert: str(in, "certificateArn"), port: port})
	case "aws:acm/certificate:Certificate":
		names := []string{str(in, "domainName")}
		if sans, ok := in["subjectAlternativeNames"].([]any); ok {
			for _, n := range sans {
				if s, ok := n.(string); ok {
					names = append(names, s)
				}
			}
		}
		e.certificates[str(out, "arn")] = names
	}
}

// objects reads a property that is one object or a list of them.
func objects(v any) []map[string]any {
	switch t := v.(type) {
	case map[string]any:
		return []map[string]any{t}
	case []any:
		var out []map[string]any
		for _, e := range t {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// CheckEdge decides the edge paths: each broken one is a finding, naming
// the path, the resource and what AWS requires.
func (m *Model) CheckEdge(paths []EdgePath) []string {
	var out []string
	for _, p := range paths {
		for _, problem := range m.edgeProblems(p) {
			out = append(out, p.Name+": "+problem)
		}
	}
	return out
}

func (m *Model) edgeProblems(p EdgePath) []string {
	e := m.edge
	if p.Distribution == "" {
		return e.certificateProblems(p)
	}
	d, ok := e.distributions[p.Distribution]
	if !ok {
		return []string{fmt.Sprintf("the render has no distribution %s", p.Distribution)}
	}
	var out []string
	if len(d.associations) == 0 {
		out = append(out, fmt.Sprintf("%s has no Lambda@Edge association: CloudFront would not run %s, and no request would reach a cell", p.Distribution, p.Function))
	}
	// Which function a version belongs to is not compared: the primary
	// runs the version the canary promoted, the deployed function's ARN,
	// whose physical name an offline render (its mocks' auto-names) does
	// not know.
	for _, a := range d.associations {
		if qualifier, published := publishedVersion(a.arn); !published {
			// "You must specify the ARN of a function version; you can't
			// specify an alias or $LATEST" (CloudFront API Reference,
			// LambdaFunctionAssociation, LambdaFunctionARN).
			out = append(out, fmt.Sprintf("%s's %s association names %s (%s), not a published version: CloudFront runs only a numbered version of a function (an ARN ending in :<version>, not $LATEST, an alias or the unqualified function)",
				p.Distribution, a.event, a.arn, qualifierWords(qualifier)))
		}
	}
	for _, o := range d.origins {
		if o.protocol != "https-only" {
			out = append(out, fmt.Sprintf("%s's origin %s connects with originProtocolPolicy %q: CloudFront must reach the cells over HTTPS only (the edge function keeps the configured protocol)", p.Distribution, o.id, firstNonEmpty(o.protocol, "none")))
		}
		if !slices.ContainsFunc(p.Origins, func(n string) bool {
			return strings.EqualFold(strings.TrimSuffix(n, "."), strings.TrimSuffix(o.domain, "."))
		}) {
			out = append(out, fmt.Sprintf("%s's origin %s is %s, no routed cell's DNS name (%s): no cell's certificate is for it", p.Distribution, o.id, o.domain, strings.Join(p.Origins, ", ")))
		}
	}
	return out
}

// certificateProblems checks that the cell's ALB answers HTTPS on 443
// with a certificate covering its DNS name ("Requiring HTTPS for
// communication between CloudFront and your custom origin", CloudFront
// Developer Guide: the origin's certificate must match the origin domain
// name). A certificate the render does not declare (cells:certificateArn,
// an existing one) cannot be read offline: its names are not judged.
func (e edgeFacts) certificateProblems(p EdgePath) []string {
	if p.DNSName == "" {
		return []string{fmt.Sprintf("%s exports no DNS name (dnsName): CloudFront has no name to reach it at", p.Cell)}
	}
	var https []listener
	for _, l := range e.listeners {
		if l.owner == p.Cell && l.protocol == "HTTPS" && l.port == 443 {
			https = append(https, l)
		}
	}
	if len(https) == 0 {
		return []string{fmt.Sprintf("%s has no HTTPS listener on 443 for CloudFront to reach %s at", p.Cell, p.DNSName)}
	}
	var out []string
	for _, l := range https {
		names, declared := e.certificates[l.cert]
		switch {
		case l.cert == "":
			out = append(out, fmt.Sprintf("%s has no certificate", l.label))
		case declared && !awsmodel.CertificateCovers(names, p.DNSName):
			out = append(out, fmt.Sprintf("%s's certificate %s is for %s, not %s: CloudFront refuses the origin's certificate (502)", l.label, l.cert, strings.Join(names, ", "), p.DNSName))
		}
	}
	return out
}

// publishedVersion returns a Lambda function ARN's qualifier and whether
// it names a published version (a number).
func publishedVersion(arn string) (string, bool) {
	parts := strings.Split(arn, ":")
	if len(parts) != 8 || parts[5] != "function" {
		return "", false
	}
	q := parts[7]
	for _, c := range q {
		if c < '0' || c > '9' {
			return q, false
		}
	}
	return q, q != ""
}

func qualifierWords(q string) string {
	switch q {
	case "":
		return "unqualified"
	case "$LATEST":
		return "$LATEST"
	}
	return "alias " + q
}

// CellOrigin is a routed cell and the DNS name CloudFront reaches it at
// (its dnsName output, which the edge function sends its requests to).
type CellOrigin struct {
	Cell    string
	DNSName string
}
