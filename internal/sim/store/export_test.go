package store

// Fingerprint is fingerprint, for the tests of package store_test.
func (c *Cloud) Fingerprint(v any) string { return c.fingerprint(v) }
