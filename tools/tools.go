//go:build tools

// This file records the pulumi CLI as a dependency of the tools module so
// `go mod tidy` keeps it pinned; `make bin/pulumi` builds it.
package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
