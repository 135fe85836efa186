package component

import "github.com/cellctl/cellctl/internal/access"

// RequiredPaths are the requests the router's own resources must allow,
// in the access model's labels (access.Label of the logical names this
// component gives): Lambda and Lambda@Edge's replicas assume the edge
// function's role ("Setting IAM permissions and roles for Lambda@Edge",
// CloudFront Developer Guide: the trust must name both services). name is
// the component's name (the router stack's).
func RequiredPaths(name string) []access.Path {
	role := name + "/edge-role"
	p := func(what, principal string) access.Path {
		return access.Path{Name: name + ": " + what, DeclaredBy: "router/component", Principal: principal, Action: "sts:AssumeRole", Resource: role}
	}
	return []access.Path{
		p("Lambda assumes the edge function's role", "lambda.amazonaws.com"),
		p("Lambda@Edge's replicas assume the edge function's role", "edgelambda.amazonaws.com"),
	}
}

// EdgePaths are what CloudFront, the origins' caller, must be able to do
// (access.EdgePath): each distribution (the primary and the staging one)
// runs a published version of the edge function on its origin requests
// and reaches the cells over HTTPS only, its configured origin being one
// of theirs; and each routed cell (origins: the cells the edge function
// sends requests to, with their DNS names) answers HTTPS on 443 with a
// certificate covering its name.
func EdgePaths(name string, origins []access.CellOrigin) []access.EdgePath {
	const by = "router/component"
	names := make([]string, len(origins))
	for i, o := range origins {
		names[i] = o.DNSName
	}
	var out []access.EdgePath
	for _, d := range []string{PrimaryDistributionName(name), name + "-cdn-staging"} {
		label := access.Label(name, d)
		out = append(out, access.EdgePath{Name: name + ": CloudFront (" + label + ") runs the edge function's published version and reaches the cells over HTTPS",
			DeclaredBy: by, Distribution: label, Function: name + "/edge", Origins: names})
	}
	for _, o := range origins {
		out = append(out, access.EdgePath{Name: name + ": CloudFront reaches " + o.Cell + " at " + o.DNSName + " over HTTPS",
			DeclaredBy: by, Cell: o.Cell, DNSName: o.DNSName})
	}
	return out
}
