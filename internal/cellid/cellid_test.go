package cellid

import "testing"

func TestValid(t *testing.T) {
	for id, want := range map[string]bool{
		"cell-a":                true,
		"cell-0":                true,
		"cell-eu-1":             true,
		"cell-abcdefghijklmno":  true, // 15 after the prefix: ALB/target group names stay within 32
		"cell-abcdefghijklmnop": false,
		"cell-":                 false,
		"cell--a":               false, // RDS/ElastiCache refuse consecutive hyphens
		"cell-a--b":             false,
		"cell-a-":               false,
		"cell-A":                false,
		"cell_a":                false,
		"Cell-a":                false,
		"router":                false,
		"a":                     false,
		"sg-a":                  false,
		"cell-é":                false,
	} {
		if got := Valid(id); got != want {
			t.Errorf("Valid(%q) = %v, want %v", id, got, want)
		}
		if err := Check(id); (err == nil) != want {
			t.Errorf("Check(%q) = %v", id, err)
		}
	}
	if err := Check("cell-A"); err == nil || err.Error() != `invalid cell id "cell-A": use `+Rule {
		t.Fatalf("Check names the rule: %v", err)
	}
}
