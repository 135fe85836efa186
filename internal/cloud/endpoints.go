package cloud

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/internal/fleet"
)

// EndpointEnv is the environment variable the AWS SDKs read for the base
// endpoint of every service (AWS SDKs and Tools Reference Guide,
// "Service-specific endpoints"); EndpointEnv + "_<SERVICE>" sets one
// service's. cellctl's readers are AWS SDK for Go v2 clients, which
// honour both.
const EndpointEnv = "AWS_ENDPOINT_URL"

// EndpointNote is what `--cloud aws` prints when its calls do not go to
// AWS's own endpoints — a local emulator such as LocalStack or moto, set
// up as its users do: AWS_ENDPOINT_URL* in environ, or aws:endpoints in
// the fleet's stack files (eps, fleet.Fleet.Endpoints). "" when neither
// is set. An operator who rehearses against an emulator sees it named on
// every command, and one who forgot the variable in a shell sees why a
// production read looks empty.
func EndpointNote(environ []string, eps []fleet.Endpoint) string {
	var lines []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if v != "" && (k == EndpointEnv || strings.HasPrefix(k, EndpointEnv+"_")) {
			lines = append(lines, fmt.Sprintf("  %s=%s (environment: cellctl's AWS reads)", k, v))
		}
	}
	sort.Strings(lines)
	for _, e := range eps {
		lines = append(lines, fmt.Sprintf("  %s → %s (aws:endpoints, %s:%d: the stacks' aws providers)", e.Service, e.URL, e.File, e.Line))
	}
	if len(lines) == 0 {
		return ""
	}
	return "--cloud aws talks to these endpoints instead of AWS's own:\n" + strings.Join(lines, "\n")
}
