// Package cellid is the one definition of a cell id, which the fleet
// loader, the cell template and the routing table all check.
//
// A cell id is the cell's stack name and prefixes every AWS name of the
// cell, so it must satisfy the strictest name it becomes part of: RDS and
// ElastiCache identifiers allow lowercase letters, digits and single
// hyphens, start with a letter and do not end with a hyphen; ALB and
// target group names are capped at 32 characters, which bounds the part
// after "cell-" to 15. (ElastiCache CreateReplicationGroup,
// ReplicationGroupId: "cannot end with a hyphen or contain two consecutive
// hyphens" — docs.aws.amazon.com/AmazonElastiCache/latest/APIReference.)
package cellid

import (
	"fmt"
	"regexp"
)

// Prefix starts every cell id (stack files are Pulumi.cell-<id>.yaml).
const Prefix = "cell-"

// MaxLength is the longest cell id: the prefix and 15 characters.
const MaxLength = len(Prefix) + 15

// Rule says what a cell id may be, for error messages.
const Rule = `"cell-" followed by 1–15 lowercase letters, digits or single inner hyphens (e.g. "cell-a", "cell-eu-1")`

var pattern = regexp.MustCompile(`^cell-[a-z0-9]+(-[a-z0-9]+)*$`)

// Valid reports whether id is a cell id.
func Valid(id string) bool { return len(id) <= MaxLength && pattern.MatchString(id) }

// Check returns nil for a cell id, else an error saying what is allowed.
func Check(id string) error {
	if Valid(id) {
		return nil
	}
	return fmt.Errorf("invalid cell id %q: use %s", id, Rule)
}
