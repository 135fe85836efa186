package quota

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/sim"
)

func TestFlags(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--add-cells", "-1"}, "--add-cells must be 0 or more"},
		{[]string{"-o", "markdown"}, `--output "markdown" is not supported here`},
	} {
		f := cmdutil.NewFactory(io)
		f.Global.Output = render.FormatTable
		cmd := NewCmdQuota(f, func(*Options) error { return nil })
		cmd.Flags().StringVarP(&f.Global.Output, "output", "o", "table", "")
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Out)
		cmd.SetErr(io.ErrOut)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// The table and the exit code against the simulator's AWS API: no
// Elastic IP left for two more cells in us-east-1.
func TestQuotaRunTableAndFinding(t *testing.T) {
	c, err := sim.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetQuota("us-east-1", "ec2/L-0263D0A3", 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	endpoint, stop, err := sim.ServeAPI(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	io, _, out, _ := iostreams.Test()
	v, _ := render.Pick(render.FormatTable, tableView, jsonView)
	opts := &Options{IO: io, Fleet: func() (*fleet.Fleet, error) { return fl, nil }, View: v, Parallel: 2, AddCells: 2,
		Targets: func(context.Context) (func(fleet.Access) awsapi.Target, error) {
			return func(a fleet.Access) awsapi.Target { return awsapi.Sim(endpoint, a.Region) }, nil
		}}
	err = quotaRun(ctx, opts)
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) {
		t.Fatalf("quotaRun = %v, want findings (exit 2)", err)
	}
	for _, want := range []string{"HEADROOM (CELLS)", "ec2/L-0263D0A3", "critical us-east-1 ec2/L-0263D0A3: 0 used + 2 for the new cells = 2 > limit 1",
		"next: request an increase: aws service-quotas request-service-quota-increase --region us-east-1 --service-code ec2 --quota-code L-0263D0A3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
}
