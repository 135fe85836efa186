package engine

import "testing"

// The default provider's assumeRole as the engine records it: the stack
// config's object as JSON in a string; an explicit provider's as an
// object.
func TestAssumedRoleReadsBothShapes(t *testing.T) {
	const role = "arn:aws:iam::222233334444:role/cellctl-deploy"
	for _, tc := range []struct {
		in      any
		want    string
		wantErr bool
	}{
		{nil, "", false},
		{"", "", false},
		{`{"roleArn":"` + role + `","sessionName":"cellctl"}`, role, false},
		{map[string]any{"roleArn": role}, role, false},
		{"not json", "", true},
		{42.0, "", true},
	} {
		got, err := assumedRole(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("assumedRole(%v) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
