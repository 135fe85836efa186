//go:build tools

// This file records the tools cellctl's build needs as dependencies of the
// tools module so `go mod tidy` keeps them pinned: the pulumi CLI
// (`make pulumi` builds it) and actionlint, which `make lint-workflows` uses
// to check the CI workflows in docs/workflows/.
package tools

import (
	_ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
	_ "github.com/rhysd/actionlint/cmd/actionlint"
)
