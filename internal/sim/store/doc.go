// Package store is the simulated AWS account on disk: its live resources
// (records of what the provider created, with out-of-band edits and alarm
// states), faults, latency rules, quota overrides, Route 53 zones, retired
// engine versions, KMS keys and Lambda code, in a directory of JSON files
// (see store.go) shared by every cellctl process: one exclusive flock per
// change, atomic renames, one resource file per stack. Secret values are
// encrypted with the key in secret.key (AES-256-GCM, codec.go) so that a
// read can return them, as secrets, unchanged: a hashed value would read
// back as drift.
//
// Cloud is the account's API; the provider, the health model and the AWS
// APIs (sibling packages) work on its State under its lock (Update, Read)
// and read resources through a View, the cloud as internal/awsmodel sees
// it.
package store
