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
