package awsfacts

import "testing"

func TestParseECRImage(t *testing.T) {
	for _, tc := range []struct {
		image, arn, repo string
	}{
		{"123456789012.dkr.ecr.eu-west-1.amazonaws.com/shop/api:v3", "arn:aws:ecr:eu-west-1:123456789012:repository/shop/api", "123456789012.dkr.ecr.eu-west-1.amazonaws.com/shop/api"},
		{"123456789012.dkr.ecr.eu-west-1.amazonaws.com/api@sha256:abc", "arn:aws:ecr:eu-west-1:123456789012:repository/api", "123456789012.dkr.ecr.eu-west-1.amazonaws.com/api"},
		{"123456789012.dkr.ecr-fips.us-east-1.amazonaws.com/api", "arn:aws:ecr:us-east-1:123456789012:repository/api", "123456789012.dkr.ecr-fips.us-east-1.amazonaws.com/api"},
		{"123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/api:1", "arn:aws-cn:ecr:cn-north-1:123456789012:repository/api", "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/api"},
		{"registry.example.com/shop/api:v1", "", "registry.example.com/shop/api"},
		{"public.ecr.aws/nginx/nginx:1", "", "public.ecr.aws/nginx/nginx"},
		{"localhost:5000/api:v1", "", "localhost:5000/api"},
		{"123456789012.dkr.ecr.eu-west-1.amazonaws.com", "", "123456789012.dkr.ecr.eu-west-1.amazonaws.com"},
	} {
		if got := ImageRepository(tc.image); got != tc.repo {
			t.Errorf("ImageRepository(%q) = %q, want %q", tc.image, got, tc.repo)
		}
		img, ok := ParseECRImage(tc.image)
		if ok != (tc.arn != "") || (ok && img.ARN() != tc.arn) {
			t.Errorf("ParseECRImage(%q) = %+v, %v; want ARN %q", tc.image, img, ok, tc.arn)
		}
	}
}
