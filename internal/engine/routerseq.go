package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router/component"
)

// The router's create/update sequence. CloudFront refuses a continuous
// deployment policy on CreateDistribution ("Continuous deployment policy
// is not supported during distribution creation"), and refuses a change
// of the settings it locks on a linked distribution (price class,
// aliases, viewer certificate, HTTP version, …: awsfacts.CloudFrontCDLockedFields,
// with AWS's sources). So an up of the router runs, in the same workspace
// under the same lock, the passes its state calls for:
//
//   - no primary yet (a first up), or a primary the state shows detached
//     (a run stopped inside this sequence): apply with the policy
//     detached, then attach it — an ordinary update;
//   - a linked primary whose locked settings this run changes (the
//     documented workflow, CloudFront Developer Guide, "CloudFront
//     continuous deployment workflow",
//     https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/continuous-deployment-workflow.html,
//     and "Update primary and staging distributions",
//     https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/understanding-continuous-deployment.html):
//     detach the policy from the primary alone, its locked settings held
//     as deployed (a targeted update); apply the change to the detached
//     primary; attach the policy again, and check the primary says so;
//   - otherwise one pass, attached.
//
// The state is the sequence's record: Pulumi writes it before (a pending
// operation) and after every resource write, and each run decides its
// passes from it, never from what an earlier run meant to do. A run
// killed anywhere is finished by the next up: stopped before the detach
// landed, the primary is still linked and the sequence starts again;
// after it, the primary is detached and the rerun applies and attaches.
// A change that fails after the detach attaches the policy again with
// the primary's settings held (nothing left unlinked); should that fail
// too, the error says the primary is detached and that `cellctl up
// --router` finishes it. Which shape a pass renders is decided here, from
// the state, never by the caller.

const distributionType = "aws:cloudfront/distribution:Distribution"

// routerPass is one pass of the router's sequence: how the primary is
// rendered, and whether the update touches the primary alone.
type routerPass struct {
	name string // detach, apply, attach, relink
	// attach renders the primary with its policy; hold keeps its locked
	// settings as deployed.
	attach, hold bool
	// primaryOnly targets the update at the primary distribution: the
	// detach changes nothing else (a new certificate, say, is created
	// only once the primary can take it).
	primaryOnly bool
}

// routerSeq is the sequence an up of the router runs.
type routerSeq struct {
	passes []routerPass
	// primaryURN and primaryID name the deployed primary ("" : none).
	primaryURN, primaryID string
	// policy is the id of the policy the deployed primary is attached to
	// ("" : detached or not deployed).
	policy string
	// locked are the locked settings this run changes on a linked primary.
	locked []string
}

var singlePass = &routerSeq{passes: []routerPass{{name: "apply", attach: true}}}

// unlinked reports whether the sequence detaches a linked primary.
func (s *routerSeq) unlinked() bool { return len(s.locked) > 0 }

// routerSequence decides the passes of an up of the router run with f,
// from the router stack's state.
func (e *Engine) routerSequence(ctx context.Context, f *fleet.Fleet) (*routerSeq, error) {
	d, err := e.deployed(ctx, fleet.RouterStack)
	if err != nil {
		return nil, err
	}
	seq := &routerSeq{}
	if d != nil {
		want := component.PrimaryDistributionName(fleet.RouterStack)
		for _, r := range d.Resources {
			if r.Type == distributionType && urnName(r.URN) == want {
				seq.primaryURN, seq.primaryID = r.URN, r.ID
				seq.policy, _ = r.Outputs["continuousDeploymentPolicyId"].(string)
				if seq.policy != "" && f != nil && f.Router != nil {
					seq.locked = lockedChanges(component.PrimaryLinkedSettings(f.Router.PriceClass, f.Router.ViewerDomains, f.Router.ViewerCertificateArn), r.Inputs)
				}
				break
			}
		}
	}
	switch {
	case seq.primaryURN == "" || seq.policy == "":
		seq.passes = []routerPass{{name: "apply"}, {name: "attach", attach: true}}
	case seq.unlinked():
		seq.passes = []routerPass{{name: "detach", hold: true, primaryOnly: true}, {name: "apply"}, {name: "attach", attach: true}}
	default:
		seq.passes = singlePass.passes
	}
	return seq, nil
}

// RouterLinkedChange says how up applies the fleet's router change when
// it touches a setting CloudFront locks on the deployed primary while its
// policy links it ("": no such change, or no linked primary deployed).
// It reads the router's state only (`cellctl plan` asks it).
func (e *Engine) RouterLinkedChange(ctx context.Context) (string, error) {
	seq, err := e.routerSequence(ctx, e.opts.Fleet)
	if err != nil || !seq.unlinked() {
		return "", err
	}
	return seq.previewNote(), nil
}

// lockedChanges lists the locked settings whose rendered value want
// differs from the deployed primary's inputs (aliases compare as a set,
// the viewer certificate by the keys want knows). A setting the deployed
// inputs do not hold was not rendered then and is not judged.
func lockedChanges(want, deployed map[string]any) []string {
	var changed []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		w, d := want[k], deployed[k]
		if _, ok := deployed[k]; !ok {
			continue
		}
		switch k {
		case "aliases":
			if !reflect.DeepEqual(stringSet(w), stringSet(d)) {
				changed = append(changed, k)
			}
		case "viewerCertificate":
			wm, _ := w.(map[string]any)
			dm, _ := d.(map[string]any)
			for ck, cv := range wm {
				if !reflect.DeepEqual(cv, dm[ck]) {
					changed = append(changed, k)
					break
				}
			}
		default:
			if !reflect.DeepEqual(w, d) {
				changed = append(changed, k)
			}
		}
	}
	return changed
}

func stringSet(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, s := range list {
		if str, ok := s.(string); ok {
			out = append(out, str)
		}
	}
	sort.Strings(out)
	return out
}

// withPass is f as one pass of the router's sequence renders it: whether
// the primary's continuous deployment policy is attached, and whether its
// locked settings are held as deployed.
func withPass(f *fleet.Fleet, stack string, p routerPass) *fleet.Fleet {
	if stack != fleet.RouterStack || f.Router == nil || f.Router.AttachDeploymentPolicy == p.attach && f.Router.HoldLinkedFields == p.hold {
		return f
	}
	r := *f.Router
	r.AttachDeploymentPolicy, r.HoldLinkedFields = p.attach, p.hold
	copied := *f
	copied.Router = &r
	return &copied
}

// attachNote is what the report says after the first up's second pass.
const attachNote = "created the primary CloudFront distribution without its continuous deployment policy (CloudFront refuses one on create), then attached the policy in a second update"

// resumeNote is what it says when the up found the primary detached.
const resumeNote = "the primary CloudFront distribution was detached from its continuous deployment policy (an earlier run stopped inside the router's sequence): applied the change, then attached the policy again"

// unlinkNote is what the report says after the unlink sequence.
func (s *routerSeq) unlinkNote(policy string) string {
	return fmt.Sprintf("the change touches %s, which CloudFront refuses on a distribution linked by a continuous deployment policy: "+
		"detached the policy from the primary CloudFront distribution %s, applied the change, then attached the policy %s again (the primary is linked)",
		strings.Join(s.locked, ", "), s.primaryID, policy)
}

// previewNote is what a preview says of a run that needs the unlink
// sequence.
func (s *routerSeq) previewNote() string {
	return fmt.Sprintf("the change touches %s of the primary CloudFront distribution %s, which CloudFront refuses while the continuous deployment policy %s links it: "+
		"up applies it with the unlink sequence (detach the policy from the primary, apply the change, attach the policy again)",
		strings.Join(s.locked, ", "), s.primaryID, s.policy)
}

// seqError is a failed pass of the router's sequence, with what it left
// and how to finish (advice); the run's error keeps the advice after the
// engine's own message.
type seqError struct {
	err    error
	advice string
}

func (e *seqError) Error() string { return e.err.Error() + "; " + e.advice }
func (e *seqError) Unwrap() error { return e.err }

// wrapDetached adds a failed sequence's advice to outer, the run's error
// as the engine tells it (its diagnostics, or the CLI's error).
func wrapDetached(outer, runErr error) error {
	var se *seqError
	if errors.As(runErr, &se) && !strings.Contains(outer.Error(), se.advice) {
		return fmt.Errorf("%w; %s", outer, se.advice)
	}
	return outer
}

// detachedError is a run that left the primary detached from its policy.
func detachedError(primary string, cause error) error {
	if primary == "" {
		primary = "of the router"
	}
	return &seqError{err: cause, advice: fmt.Sprintf("the primary CloudFront distribution %s is detached from its continuous deployment policy "+
		"(viewers are served, but no router canary can reach the staging distribution until it is attached again): "+
		"run `cellctl up --router` to finish — it applies the change and attaches the policy", primary)}
}

// routerPasses runs the passes after the first (whose error is err) and
// checks, from the state, that the primary ends attached. pass runs one
// pass in the run's workspace. A failed change on the detached primary
// attaches the policy again with the primary's settings held; whatever
// cannot be re-linked is said, with the command that finishes it.
func (e *Engine) routerPasses(ctx context.Context, seq *routerSeq, err error, pass func(routerPass) error, res *stackrun.Result) error {
	// relink attaches the policy to the primary alone, its settings as
	// deployed, after the change (cause) failed on it detached.
	relink := func(cause error) error {
		if rerr := pass(routerPass{name: "relink", attach: true, hold: true, primaryOnly: true}); rerr != nil {
			return detachedError(seq.primaryID, fmt.Errorf("%w (attaching the policy again failed too: %v)", cause, cleanErr(rerr)))
		}
		if now, rerr := e.routerSequence(ctx, nil); rerr != nil || now.policy == "" {
			return detachedError(seq.primaryID, cause)
		}
		return &seqError{err: cause, advice: fmt.Sprintf("the continuous deployment policy was attached to the primary CloudFront distribution %s again, its settings as they were", seq.primaryID)}
	}
	if err != nil {
		if seq.primaryURN != "" && seq.policy == "" {
			// The primary was detached before this run (a run stopped
			// inside the sequence) and the change failed on it.
			return relink(err)
		}
		return err // the primary is as it was: linked, or not created
	}
	for _, p := range seq.passes[1:] {
		if seq.unlinked() && p.name == "apply" {
			// The detach must have landed before the change is sent.
			now, rerr := e.routerSequence(ctx, nil)
			if rerr != nil {
				return rerr
			}
			if now.policy != "" {
				return fmt.Errorf("detaching the continuous deployment policy from the primary CloudFront distribution %s did not take (it still names %s): nothing else was changed", seq.primaryID, now.policy)
			}
		}
		if perr := pass(p); perr != nil {
			if p.name == "apply" {
				return relink(perr)
			}
			return detachedError(seq.primaryID, perr)
		}
	}
	now, err := e.routerSequence(ctx, nil)
	if err != nil {
		return err
	}
	if now.policy == "" {
		return detachedError(now.primaryID, errors.New("after the attach the primary CloudFront distribution names no continuous deployment policy"))
	}
	switch {
	case seq.unlinked():
		res.Notes = append(res.Notes, seq.unlinkNote(now.policy))
	case seq.primaryURN == "":
		res.Notes = append(res.Notes, attachNote)
	default:
		res.Notes = append(res.Notes, resumeNote)
	}
	return nil
}

// targets are the resources a pass updates (nil: all).
func (e *Engine) targets(seq *routerSeq, p routerPass) []string {
	if p.primaryOnly && seq.primaryURN != "" {
		return []string{seq.primaryURN}
	}
	return nil
}

// passRequest is the request of a pass after the first: the first
// refreshed when asked, the others run on what it read.
func passRequest(req stackrun.Request) stackrun.Request {
	again := req
	again.Refresh = false
	return again
}
