// Package rollout keeps the one-rollout-at-a-time lock (its holder: rollout
// id, host, pid, start, nonce; create-if-absent, tombstoned abandon) in the
// Pulumi backend beside the stacks (file:// or s3://, through
// gocloud.dev/blob as Pulumi's own file backend does), and opens that
// backend's bucket for the rollout records, so a CI job on another machine
// can read a rollout and continue it. The record itself is the rollout
// executor's (executor.Record); waves/executor/backend stores it here.
package rollout
