package access

import (
	"fmt"
	"strings"
)

// S3 access points. A request through an access point names the access
// point's ARN (objects: <access point ARN>/object/<key>); the caller's
// identity policy and the access point's policy are evaluated on that
// ARN, and the bucket's policy on the bucket's own ARN, with the
// s3:DataAccessPoint* keys describing the access point: "both the access
// point and the underlying bucket must permit the request" (Amazon S3 User
// Guide, "Configuring IAM policies for using access points"; a bucket
// delegates with an Allow conditioned on s3:DataAccessPointAccount,
// "Delegating access control to access points").

// AttachAccessPoint records that the access point labelled ap serves the
// bucket labelled bucket.
func (m *Model) AttachAccessPoint(ap, bucket string) error {
	a, b := m.ResourceByLabel(ap), m.ResourceByLabel(bucket)
	if a == nil || a.Kind != KindAccessPoint {
		return fmt.Errorf("no access point %s in the render", ap)
	}
	if b == nil || b.Kind != KindBucket {
		return fmt.Errorf("no bucket %s in the render", bucket)
	}
	a.bucket = b
	return nil
}

// SetAccessPointOwner records that the access point labelled ap is owner's
// way to its prefix of the bucket: the forbidden paths try every other
// owner's principals against owner's prefix through it, and owner's
// principals against another owner's prefix through it.
func (m *Model) SetAccessPointOwner(ap, owner string) error {
	a := m.ResourceByLabel(ap)
	if a == nil || a.Kind != KindAccessPoint {
		return fmt.Errorf("no access point %s in the render", ap)
	}
	a.serves = owner
	return nil
}

// accessPointOf returns the access point an ARN addresses (the access
// point itself or an object through it) and the key ("" for the access
// point itself).
func (m *Model) accessPointOf(arn string) (*Resource, string, bool) {
	a, ok := ParseARN(arn)
	if !ok || a.Service != "s3" || !strings.HasPrefix(a.Resource, "accesspoint/") {
		return nil, "", false
	}
	rest := strings.TrimPrefix(a.Resource, "accesspoint/")
	name, tail, _ := strings.Cut(rest, "/")
	ap := m.resources[fmt.Sprintf("arn:%s:s3:%s:%s:accesspoint/%s", a.Partition, a.Region, a.Account, name)]
	if ap == nil {
		return nil, "", false
	}
	key, isObject := strings.CutPrefix(tail, "object/")
	if !isObject {
		key = ""
	}
	return ap, key, true
}

// dataAction reports whether an action on an access point's ARN reaches
// the bucket's data (objects, listings) rather than managing the access
// point itself (s3:PutAccessPointPolicy, s3:DeleteAccessPoint…), which the
// bucket's policy has no part in.
func dataAction(action string) bool {
	return !strings.Contains(strings.ToLower(action), "accesspoint")
}

// bucketForm is a request through an access point as the bucket's policy
// sees it: the bucket's ARN (and the object's key) and the access point's
// keys in the context. ok is false when the access point serves no known
// bucket.
func (m *Model) bucketForm(req Request, ap *Resource, key string) (Request, bool) {
	if ap.bucket == nil || !dataAction(req.Action) {
		return Request{}, false
	}
	res := ap.bucket.ARN
	if key != "" {
		res += "/" + key
	}
	ctx := make(map[string][]string, len(req.Context)+3)
	for k, v := range req.Context {
		ctx[k] = v
	}
	ctx["s3:DataAccessPointAccount"] = []string{ap.Account}
	ctx["s3:DataAccessPointArn"] = []string{ap.ARN}
	ctx["s3:AccessPointNetworkOrigin"] = []string{"Internet"}
	return Request{Principal: req.Principal, Action: req.Action, Resource: res, Context: ctx}, true
}

// throughBucket decides the bucket's half of a request made through an
// access point, once the access point's half allowed it: an explicit
// Deny of the bucket policy wins; an Allow of the bucket policy naming
// the caller (or everyone, as a delegation does) permits; in the bucket's
// own account the caller's identity policy on the bucket's ARN does too.
func (m *Model) throughBucket(v Verdict, p *Principal, ap *Resource, key string) Verdict {
	breq, ok := m.bucketForm(v.Request, ap, key)
	if !ok {
		v.Decision, v.Reason = Undecidable, fmt.Sprintf("access point %s serves no bucket of the render", ap.Label)
		return v
	}
	ctx := requestContext(breq, p)
	var res, id match
	if ap.bucket.Policy != nil {
		res.add(ap.bucket.Policy, breq, ctx, p)
	}
	if len(res.deny) > 0 {
		v.Decision, v.Deciding = ExplicitDeny, res.deny
		v.Reason = "the bucket's policy denies it through the access point: " + refList(res.deny)
		return v
	}
	if len(res.denyUndecidable) > 0 {
		v.Decision, v.Reason = Undecidable, "a Deny of the bucket's policy may apply: "+strings.Join(res.denyUndecidable, "; ")
		return v
	}
	if res.allowDirect || res.allowViaAccount {
		v.Deciding = append(v.Deciding, res.allow...)
		return v
	}
	if p.Account == ap.bucket.Account {
		for i := range p.Identity {
			id.add(&p.Identity[i], breq, ctx, nil)
		}
		if len(id.deny) == 0 && len(id.allow) > 0 {
			v.Deciding = append(v.Deciding, id.allow...)
			return v
		}
	}
	if len(res.allowUndecidable) > 0 {
		v.Decision, v.Reason = Undecidable, "an Allow of the bucket's policy may apply: "+strings.Join(res.allowUndecidable, "; ")
		return v
	}
	v.Decision, v.Deciding = ImplicitDeny, nil
	v.Reason = "the access point allows it but the bucket does not: its policy must delegate to the access point (s3:DataAccessPointAccount) or allow the caller"
	return v
}

// BucketRequest is a request made through an access point as the
// bucket's policy sees it (the bucket's ARN, the access point's keys in
// the context); ok is false for a request not made through an access
// point of the model. An outside evaluator judges the bucket's half of
// such a request with it.
func (m *Model) BucketRequest(req Request) (Request, bool) {
	ap, key, ok := m.accessPointOf(req.Resource)
	if !ok {
		return Request{}, false
	}
	return m.bucketForm(req, ap, key)
}
