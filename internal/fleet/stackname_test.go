package fleet

import (
	"strings"
	"testing"
)

func TestValidStackName(t *testing.T) {
	for _, ok := range []string{"router", "cell-a", "cell-b2", "cell-eu-west-1a"} {
		if err := ValidStackName(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"../../../etc/passwd", "cell-a/../x", "", "Cell-A", "cell-", "routers", "cell-a\x00", strings.Repeat("cell-a", 50)} {
		err := ValidStackName(bad)
		if err == nil || !strings.Contains(err.Error(), "is not a valid stack name") || len(err.Error()) > 320 { // a 64-byte echo plus the rule, never the whole input
			t.Errorf("%q: %v", bad, err)
		}
	}
}
