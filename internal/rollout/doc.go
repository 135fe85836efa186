// Package rollout keeps the fleet lock — the one lock every verb that
// changes the fleet takes (its holder: id, verb, host, pid, start, nonce;
// create-if-absent, tombstoned abandon) — in the Pulumi backend beside the
// stacks (file:// or s3://, through gocloud.dev/blob as Pulumi's own file
// backend does), and opens that backend's bucket for the rollout records,
// so a CI job on another machine can read a rollout and continue it. The
// record itself is the rollout executor's (executor.Record);
// internal/adapters/backend stores it here. The package also holds the one
// "is that process alive" check (ProcessAlive).
package rollout
