package cloud

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/awssts"
	"github.com/cellctl/cellctl/internal/fleet"
	"golang.org/x/sync/errgroup"
)

// DefaultSessionName is the session cellctl's readers open when a stack's
// aws:assumeRole names none: CloudTrail in the cell's account shows
// "cellctl" for every read cellctl made there.
const DefaultSessionName = "cellctl"

// TargetOf is the reader target of a stack's Access on this cloud: its
// region, and on top of the bundle's credentials the stack's profile (on
// AWS) and the role it assumes, so every reader of a cell in another
// account signs as that account's role — the same role its provider
// deploys with.
func (b *Bundle) TargetOf(ctx context.Context, a fleet.Access) (awsapi.Target, error) {
	t, err := b.Target(ctx, a.Region)
	if err != nil {
		return awsapi.Target{}, err
	}
	return b.AsAccess(t, a), nil
}

// AsAccess is base (a target of this bundle) moved to a's region and
// credentials: what TargetOf returns, for callers that reach the cloud
// once and then build many targets (the quota audit's units).
func (b *Bundle) AsAccess(base awsapi.Target, a fleet.Access) awsapi.Target {
	t := base
	t.Region = a.Region
	t.Profile, t.Role = "", awsapi.Role{}
	if b.Kind == AWS {
		t.Profile = a.Profile
	}
	if a.Role.RoleARN != "" {
		name := a.Role.SessionName
		if name == "" {
			name = DefaultSessionName
		}
		t.Role = awsapi.Role{ARN: a.Role.RoleARN, SessionName: name, ExternalID: a.Role.ExternalID, Duration: a.Role.Duration}
	}
	return t
}

// AccessError is a stack whose account cannot be reached: its role
// cannot be assumed, or the credentials reach another account than the
// one its stack file declares.
type AccessError struct {
	Stacks []string
	Err    error
}

func (e *AccessError) Error() string { return e.Err.Error() }
func (e *AccessError) Unwrap() error { return e.Err }

// CheckAccess proves, before any stack of stacks runs, that every account
// they live in can be reached as their stack files say: each distinct
// role is assumed once (STS GetCallerIdentity signed with the assumed
// session) and the account it lands in must be the one declared. A stack
// with no account settings runs with the caller's own credentials and is
// not checked here (the provider reports those). An unreachable account
// is an error naming the role and the stacks that need it: nothing was
// created, and no other stack ran.
func (b *Bundle) CheckAccess(ctx context.Context, fl *fleet.Fleet, stacks []string) error {
	// need is one stack's use of an Access, labelled for the message.
	type need struct{ stack, label string }
	byAccess := map[fleet.Access][]need{}
	for _, s := range stacks {
		a, ok := accessOf(fl, s)
		if ok && (a.Role.RoleARN != "" || a.Account != "") {
			byAccess[a] = append(byAccess[a], need{s, s})
		}
		// A cell whose records go through cells:dnsAssumeRole needs that
		// role too, before anything of it is created.
		if c := fl.Cell(s); c != nil && c.DNSRole().RoleARN != "" {
			d := c.DNSAccess()
			byAccess[d] = append(byAccess[d], need{s, s + " (" + fl.ConfigKey(fleet.DNSRoleKey) + ")"})
		}
	}
	if len(byAccess) == 0 {
		return nil
	}
	labels := func(a fleet.Access) []string {
		out := make([]string, len(byAccess[a]))
		for i, n := range byAccess[a] {
			out[i] = n.label
		}
		return out
	}
	accesses := make([]fleet.Access, 0, len(byAccess))
	for a := range byAccess {
		accesses = append(accesses, a)
	}
	sort.Slice(accesses, func(i, j int) bool {
		return strings.Join(labels(accesses[i]), ",") < strings.Join(labels(accesses[j]), ",")
	})
	errs := make([]error, len(accesses))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, a := range accesses {
		g.Go(func() error {
			errs[i] = b.reach(gctx, a, labels(a))
			return nil
		})
	}
	_ = g.Wait()
	var failed []string
	var msgs []string
	for i, err := range errs {
		if err != nil {
			for _, n := range byAccess[accesses[i]] {
				if !slices.Contains(failed, n.stack) {
					failed = append(failed, n.stack)
				}
			}
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &AccessError{Stacks: failed, Err: fmt.Errorf("%s\nnothing was created or changed: no stack ran", strings.Join(msgs, "\n"))}
}

// reach checks one Access.
func (b *Bundle) reach(ctx context.Context, a fleet.Access, stacks []string) error {
	who := strings.Join(stacks, ", ")
	t, err := b.TargetOf(ctx, a)
	if err != nil {
		return fmt.Errorf("%s: cannot reach account %s: %w", who, a.AccountLabel(), err)
	}
	id, err := awsapi.CallerIdentity(ctx, t)
	if err != nil {
		if a.Role.RoleARN != "" {
			return fmt.Errorf("%s: %s", who, awssts.RoleCannotBeAssumed(a.Role.RoleARN, err))
		}
		return fmt.Errorf("%s: cannot reach account %s with the configured credentials: %w", who, a.AccountLabel(), err)
	}
	if a.Account != "" && id.Account != a.Account {
		how := "the configured credentials"
		if a.Role.RoleARN != "" {
			how = "the role " + a.Role.RoleARN
		}
		return fmt.Errorf("%s: declared in account %s, but %s reach account %s (%s): fix the stack file or the credentials", who, a.Account, how, id.Account, id.ARN)
	}
	return nil
}

// accessOf is the Access of a cell or the router stack.
func accessOf(fl *fleet.Fleet, stack string) (fleet.Access, bool) {
	if stack == fleet.RouterStack {
		if fl.Router == nil {
			return fleet.Access{}, false
		}
		return fl.Router.Access(), true
	}
	c := fl.Cell(stack)
	if c == nil {
		return fleet.Access{}, false
	}
	return c.Access(), true
}
