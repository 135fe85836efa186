package access

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/offline"
)

// KindRepository is an Amazon ECR repository: ECS pulls a task's image
// from it as the task's execution role.
const KindRepository = "ecr-repository"

// AnyResource is a path's resource for an action that takes no resource
// (Resource "*" in a policy, e.g. ecr:GetAuthorizationToken): it is
// decided by the caller's identity policy, in the caller's account.
const AnyResource = "*"

// Image is an image a rendered task definition runs, and how its pull is
// decided.
type Image struct {
	// TaskDefinition is the task definition's label.
	TaskDefinition string `json:"taskDefinition"`
	Image          string `json:"image"`
	// Repository is the ECR repository's label in the model
	// (RepositoryLabel); "" when the image is not in ECR.
	Repository string `json:"repository,omitempty"`
	// Note says why no IAM path decides a pull from another registry.
	Note string `json:"note,omitempty"`
}

// RepositoryLabel is an ECR repository's label in the model. The
// repository is none of the fleet's stacks' (the fleet renders no
// repository), so it is named by where it lives.
func RepositoryLabel(img awsfacts.ECRImage) string {
	return "ecr/" + img.Account + "/" + img.Region + "/" + img.Repository
}

// Images are the images the render's task definitions run, by task
// definition and image.
func (m *Model) Images() []Image {
	out := append([]Image{}, m.images...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].TaskDefinition != out[j].TaskDefinition {
			return out[i].TaskDefinition < out[j].TaskDefinition
		}
		return out[i].Image < out[j].Image
	})
	return out
}

// repository adds (or returns) an ECR repository.
func (m *Model) repository(img awsfacts.ECRImage) *Resource {
	return m.AddResource(&Resource{ARN: img.ARN(), Account: img.Account, Region: img.Region, Kind: KindRepository,
		Label: RepositoryLabel(img)})
}

// addImages records the images of a task definition's containers. An ECR
// image's repository joins the model without a policy unless the render
// has its repository policy (addRepositoryPolicy): a pull from another
// account needs one ("Private repository policies", Amazon ECR User
// Guide). Any other registry is reached with its own credentials (the
// container's repositoryCredentials) or none, which no IAM policy
// decides: it is recorded with a note, never as a path.
func (m *Model) addImages(s offline.Stack, r *offline.Resource, defs string) error {
	var cs []struct {
		Image string `json:"image"`
	}
	if err := json.Unmarshal([]byte(defs), &cs); err != nil {
		return fmt.Errorf("not a JSON list of container definitions: %w", err)
	}
	label := Label(s.Name, r.Name)
	for _, c := range cs {
		if c.Image == "" {
			continue
		}
		img := Image{TaskDefinition: label, Image: c.Image}
		if ecr, ok := awsfacts.ParseECRImage(c.Image); ok {
			img.Repository = m.repository(ecr).Label
		} else {
			img.Note = fmt.Sprintf("%s is not in an ECR private registry: ECS pulls it with the registry's own credentials or none, which no IAM policy decides",
				awsfacts.ImageRepository(c.Image))
		}
		m.images = append(m.images, img)
	}
	return nil
}
