package access

import (
	"testing"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/policy"
)

// A pull from another account's repository is allowed once the
// repository's policy names the caller (both sides allow), and the
// registry login, which takes no resource, is the caller's identity
// policy's alone.
func TestCrossAccountPullNeedsTheRepositoryPolicy(t *testing.T) {
	img, _ := awsfacts.ParseECRImage(acctB + ".dkr.ecr.us-east-1.amazonaws.com/shop/api:v1")
	m := NewModel()
	m.AddPrincipal(&Principal{ARN: roleA, Account: acctA, Label: "exec", Identity: []Policy{{Name: "exec", Doc: doc(
		allow([]string{"ecr:GetAuthorizationToken", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"}, []string{"*"}))}}})
	repo := m.repository(img)
	pull := Path{Name: "pull", Principal: "exec", Action: "ecr:BatchGetImage", Resource: RepositoryLabel(img)}
	login := Path{Name: "login", Principal: "exec", Action: awsfacts.ECRTokenAction, Resource: AnyResource}
	got := m.CheckRequired([]Path{pull, login})
	if !got[0].Finding || got[1].Finding {
		t.Fatalf("without a repository policy: pull %s (%s), login %s (%s); want the pull denied, the login allowed",
			got[0].Decision, got[0].Reason, got[1].Decision, got[1].Reason)
	}
	repo.Policy = &Policy{Name: "repo", Doc: doc(policy.Statement{Sid: "Pull", Effect: policy.Allow, Principal: policy.AWSPrincipals(roleA),
		Action: policy.Values{"ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"}})}
	if got := m.CheckRequired([]Path{pull}); got[0].Finding {
		t.Fatalf("with the repository policy: %s (%s)", got[0].Decision, got[0].Reason)
	}
}
