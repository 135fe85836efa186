package drift

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/internal/desired"
	"github.com/cellctl/cellctl/internal/fleet"
)

// SecretReader gives a digest of a stack's secret configuration value, so
// cells can be compared without the value ever reaching cellctl's output.
// present is false when the stack file does not hold the key.
type SecretReader interface {
	SecretDigest(ctx context.Context, stack, key string) (digest string, present bool, err error)
}

// SkewRow is one key of the cells × keys view.
type SkewRow struct {
	Key      string `json:"key"`
	Class    Class  `json:"class"`
	Baseline string `json:"baseline"`
	// Values holds each cell's value where it differs from the baseline
	// (all cells for must_unique keys with a duplicate). Secrets show as
	// "[secret]" and "[secret: differs]".
	Values map[string]string `json:"values"`
	// State of each cell listed in Values: outlier, duplicate, excepted
	// or varies (may_vary).
	State map[string]string `json:"state"`
}

// SkewOptions select what Skew compares.
type SkewOptions struct {
	// Cells limits the report to these cells (nil: all); must_unique keys
	// are still compared against the whole fleet.
	Cells []string
	// Secrets reads secret digests; nil reports secret keys as not
	// compared (a note).
	Secrets SecretReader
	// Desired is the desired state the fleet is (nil: the fleet is the
	// repository's): a cell's image, and the baseline's, may come from a
	// rollout rather than a file, and the advice for it is then another.
	Desired *desired.State
}

const (
	secretShown   = "[secret]"
	secretDiffers = "[secret: differs]"
)

// Skew compares the cells of a fleet key by key against the baseline
// (Pulumi.yaml): a must_equal key that differs is an outlier unless the
// policy excepts it, a must_unique key shared by two cells is a
// duplicate, a may_vary key is shown in the view only.
func Skew(ctx context.Context, f *fleet.Fleet, pol *Policy, opts SkewOptions) Part {
	var part Part
	cells := selected(f, opts.Cells)
	in := map[string]bool{}
	for _, c := range cells {
		in[c.ID] = true
	}
	for _, kc := range Classes {
		if kc.Secret {
			row, fs, ex, notes := skewSecret(ctx, f, pol, kc, cells, opts.Secrets)
			part.Notes = append(part.Notes, notes...)
			part.Findings = append(part.Findings, fs...)
			part.Excepted = append(part.Excepted, ex...)
			if row != nil {
				part.Skew = append(part.Skew, *row)
			}
			continue
		}
		row := SkewRow{Key: kc.Key, Class: kc.Class, Baseline: baselineValue(f, kc), Values: map[string]string{}, State: map[string]string{}}
		switch kc.Class {
		case MustUnique:
			owners := map[string][]string{}
			for _, c := range f.Cells {
				v, err := value(c, kc)
				if err != nil {
					part.Notes = append(part.Notes, err.Error())
					continue
				}
				owners[v] = append(owners[v], c.ID)
			}
			for v, ids := range owners {
				if len(ids) < 2 {
					continue
				}
				for _, id := range ids {
					if !in[id] {
						continue
					}
					others := slices.DeleteFunc(slices.Clone(ids), func(s string) bool { return s == id })
					row.Values[id], row.State[id] = v, StatusDuplicate
					part.Findings = append(part.Findings, Finding{Kind: KindSkew, Cell: id, Status: StatusDuplicate, Key: kc.Key, Class: kc.Class, New: v,
						Detail: fmt.Sprintf("also %s of %s", kc.Key, strings.Join(others, ", ")),
						Next:   fmt.Sprintf("give each cell its own %s: change it in all but one of %s's stack files (a deployed cell's index cannot change in place)", kc.Key, strings.Join(ids, ", "))})
				}
			}
		default:
			for _, c := range cells {
				v, err := value(c, kc)
				if err != nil {
					part.Notes = append(part.Notes, err.Error())
					continue
				}
				if v == row.Baseline {
					continue
				}
				row.Values[c.ID] = v
				if kc.Class == MayVary {
					row.State[c.ID] = "varies"
					continue
				}
				fd := Finding{Kind: KindSkew, Cell: c.ID, Status: StatusOutlier, Key: kc.Key, Class: kc.Class, Old: row.Baseline, New: v}
				if ex := pol.Excepted(c.ID, kc.Key); ex != nil {
					row.State[c.ID] = "excepted"
					fd.Detail = ex.Reason
					fd.Next = fmt.Sprintf("excepted in %s:%d; remove the exception once %s is back on the baseline", pol.File, ex.Line, c.ID)
					part.Excepted = append(part.Excepted, fd)
					continue
				}
				row.State[c.ID] = StatusOutlier
				fd.Next = fmt.Sprintf("remove %s from %s to return to the baseline (%s), or add {cell: %s, key: %s, reason: …} to %s",
					f.ConfigKey(kc.Key), c.File, orWhat(row.Baseline, "unset"), c.ID, kc.Key, policyFile(f, pol))
				if kc.Key == RegionKey {
					fd.Next = fmt.Sprintf("set aws:region in %s back to the baseline (%s)", c.File, row.Baseline)
				}
				if next := shippedImageNext(opts.Desired, kc, c, row.Baseline); next != "" {
					fd.Next = next
				}
				part.Findings = append(part.Findings, fd)
			}
		}
		if len(row.Values) > 0 {
			part.Skew = append(part.Skew, row)
		}
	}
	// An exception for a cell that no longer differs is stale.
	if pol != nil {
		for _, ex := range pol.Exceptions {
			c := f.Cell(ex.Cell)
			kc, ok := ClassOf(f.Project, ex.Key)
			if c == nil || !ok || kc.Secret || !in[c.ID] {
				continue
			}
			if v, err := value(c, kc); err == nil && v == baselineValue(f, kc) {
				part.Notes = append(part.Notes, fmt.Sprintf("%s:%d: the exception for %s %s is stale: the cell is on the baseline (%s); remove it", pol.File, ex.Line, ex.Cell, ex.Key, v))
			}
		}
	}
	return part
}

// shippedImageNext is the advice for an image outlier whose image, or
// the baseline's, a rollout shipped ("" when both come from files: the
// file's advice stands). No stack file holds such an image, so removing
// it from one cannot be the way back: shipping one image to every cell is.
func shippedImageNext(st *desired.State, kc KeyClass, c *fleet.Cell, baseline string) string {
	if st == nil || kc.Key != "image" {
		return ""
	}
	pin, pinned := st.Pins[c.ID]
	switch {
	case pinned && pin.Halted != nil:
		// A halt holds the cell on what its wave shipped: resolving the
		// halt is the way back to one image.
		return fmt.Sprintf("rollout %s's wave %s halted with %s on %s (%s): %s", pin.Rollout, pin.Halted.Wave, c.ID, pin.Image, pin.Halted.Why, pin.Resolve())
	case pinned && st.Release != nil:
		return fmt.Sprintf("rollout %s shipped %s to %s; the fleet's last shipped release is %s (rollout %s): ship one image to every cell with `cellctl deploy --image …`",
			pin.Rollout, pin.Image, c.ID, baseline, st.Release.Rollout)
	case pinned:
		return fmt.Sprintf("rollout %s shipped %s to %s; the repository's baseline is %s: ship one image to every cell with `cellctl deploy --image …`",
			pin.Rollout, pin.Image, c.ID, baseline)
	case st.Release != nil:
		return fmt.Sprintf("rollout %s shipped %s to the fleet but not to %s (it runs the repository's %s): `cellctl deploy --image %s` ships it",
			st.Release.Rollout, baseline, c.ID, c.Image, baseline)
	}
	return ""
}

func policyFile(f *fleet.Fleet, pol *Policy) string {
	if pol != nil && pol.File != "" {
		return pol.File
	}
	return strings.TrimPrefix(f.StackDir+"/"+PolicyFile, "./")
}

// skewSecret compares a secret key by digest. The baseline is the router
// stack's value (what CloudFront sends) when the router holds it, else the
// value most cells hold.
func skewSecret(ctx context.Context, f *fleet.Fleet, pol *Policy, kc KeyClass, cells []*fleet.Cell, r SecretReader) (*SkewRow, []Finding, []Finding, []string) {
	key := f.ConfigKey(kc.Key)
	if r == nil {
		return nil, nil, nil, []string{fmt.Sprintf("%s was not compared (no secrets access in this run)", key)}
	}
	var findings, excepted []Finding
	var notes []string
	digests := map[string]string{}
	failed := map[string]bool{}
	count := map[string]int{}
	for _, c := range f.Cells {
		d, present, err := r.SecretDigest(ctx, c.ID, key)
		if err != nil {
			failed[c.ID] = true
			if slices.ContainsFunc(cells, func(x *fleet.Cell) bool { return x.ID == c.ID }) {
				findings = append(findings, Finding{Kind: KindSkew, Cell: c.ID, Status: StatusUnreadable, Key: kc.Key, Class: kc.Class,
					Detail: "cannot read the secret to compare it: " + err.Error(),
					Next:   "set PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE) to the fleet's passphrase and run `cellctl drift --skew` again"})
			}
			continue
		}
		if !present {
			continue
		}
		digests[c.ID] = d
		count[d]++
	}
	base := ""
	if f.Router != nil && f.Router.HasOriginVerifySecret && kc.Key == fleet.OriginVerifyKey {
		if d, present, err := r.SecretDigest(ctx, fleet.RouterStack, key); err == nil && present {
			base = d
		}
	}
	if base == "" {
		best := 0
		for d, n := range count {
			if n > best || (n == best && d < base) {
				base, best = d, n
			}
		}
	}
	row := &SkewRow{Key: kc.Key, Class: kc.Class, Baseline: secretShown, Values: map[string]string{}, State: map[string]string{}}
	for _, c := range cells {
		d, ok := digests[c.ID]
		if !ok {
			if !failed[c.ID] {
				notes = append(notes, fmt.Sprintf("%s has no %s yet: its first `cellctl up %s` copies the fleet's", c.ID, key, c.ID))
			}
			continue
		}
		if d == base {
			continue
		}
		row.Values[c.ID] = secretDiffers
		fd := Finding{Kind: KindSkew, Cell: c.ID, Status: StatusOutlier, Key: kc.Key, Class: kc.Class, Old: secretShown, New: secretDiffers}
		if ex := pol.Excepted(c.ID, kc.Key); ex != nil {
			row.State[c.ID] = "excepted"
			fd.Detail = ex.Reason
			fd.Next = fmt.Sprintf("excepted in %s:%d", pol.File, ex.Line)
			excepted = append(excepted, fd)
			continue
		}
		row.State[c.ID] = StatusOutlier
		fd.Detail = "its value differs from the router's (CloudFront's): the cell's ALB refuses the fleet's traffic"
		fd.Next = fmt.Sprintf("remove %s from %s and run `cellctl up %s`: cellctl copies the fleet's value into it", key, c.File, c.ID)
		findings = append(findings, fd)
	}
	if len(row.Values) == 0 {
		row = nil
	}
	return row, findings, excepted, notes
}

// selected returns the fleet's cells named in ids (all when ids is
// empty), in fleet order.
func selected(f *fleet.Fleet, ids []string) []*fleet.Cell {
	if len(ids) == 0 {
		return f.Cells
	}
	var out []*fleet.Cell
	for _, c := range f.Cells {
		if slices.Contains(ids, c.ID) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
