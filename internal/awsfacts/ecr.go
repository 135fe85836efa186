package awsfacts

import (
	"fmt"
	"regexp"
	"strings"
)

// ImageRepository is the repository an image reference names: the
// reference without its tag or digest ("registry.example.com/shop/api"
// for "registry.example.com/shop/api:v3").
func ImageRepository(image string) string {
	repo, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo
}

// ECRImage is an image in an Amazon ECR private registry.
type ECRImage struct {
	Partition, Account, Region string
	// Repository is the repository's name ("shop/api").
	Repository string
}

// ecrRegistry is a private registry's host:
// <account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn] ("Private
// registry concepts", Amazon ECR User Guide).
var ecrRegistry = regexp.MustCompile(`^(\d{12})\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$`)

// ParseECRImage reads an image reference that names an ECR private
// registry; ok is false for any other registry (a public one, Docker
// Hub), whose pulls no IAM policy decides.
func ParseECRImage(image string) (img ECRImage, ok bool) {
	host, rest, found := strings.Cut(ImageRepository(image), "/")
	m := ecrRegistry.FindStringSubmatch(host)
	if !found || m == nil || rest == "" {
		return ECRImage{}, false
	}
	img = ECRImage{Partition: "aws", Account: m[1], Region: m[2], Repository: rest}
	if m[3] != "" {
		img.Partition = "aws-cn"
	}
	return img, true
}

// ARN is the repository's ARN, the resource of ecr:BatchGetImage and
// ecr:GetDownloadUrlForLayer.
func (i ECRImage) ARN() string {
	return fmt.Sprintf("arn:%s:ecr:%s:%s:repository/%s", i.Partition, i.Region, i.Account, i.Repository)
}

// ECRPullActions are what pulling an image from a repository needs on
// the repository (the manifest, then each layer's download URL), after
// ecr:GetAuthorizationToken, which takes no resource ("Private
// repository policies", Amazon ECR User Guide;
// AmazonECSTaskExecutionRolePolicy).
var ECRPullActions = []string{"ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"}

// ECRTokenAction is the registry login; it has no resource-level
// permissions (Resource "*").
const ECRTokenAction = "ecr:GetAuthorizationToken"
