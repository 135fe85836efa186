//go:build tools

// This file records the tools cellctl's build needs as dependencies of the
// tools module so `go mod tidy` keeps them pinned: the pulumi CLI
// (`make pulumi` builds it) and actionlint, which `make lint-workflows` uses
// to check the CI workflows in docs/workflows/. actionlint stays at v1.7.7:
// v1.7.8 and later build against go.yaml.in/yaml/v4 v4.0.0-rc.3, which the
// pulumi CLI's dependency graph lifts to rc.4, whose API they do not compile
// with; v1.7.7 uses gopkg.in/yaml.v3 and adds no upgrade to pulumi's graph.
package tools

import (
	_ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
	_ "github.com/rhysd/actionlint/cmd/actionlint"
)
