package provider

import (
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/sim/store"
)

// ReadLive is read, for the tests of package provider_test.
func ReadLive(c *store.Cloud, key, typ, id string) (resource.PropertyMap, []string, string, error) {
	return read(c, key, typ, id)
}

// Opts is the provider's options, for tests that change them.
func (p *Provider) Opts() *Options { return &p.opts }
