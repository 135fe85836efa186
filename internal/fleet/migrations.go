package fleet

import "github.com/cellctl/cellctl/internal/awsfacts"

// checkMigrations refuses migration settings that cannot work
// (spec.Cell.MigrationsProblem): a rollback command without a migration
// command, or migrations on a cell whose region, Aurora version or
// instance class (a T class) has no RDS Data API, through which the
// control plane bootstraps the database users. The error is reported at
// the line of the first key that set it in the cell's own file, else once
// at the baseline's line.
func (l *loader) checkMigrations(file string, f *Fleet, c *Cell) {
	err := c.MigrationsProblem()
	if err == nil {
		return
	}
	keys, hint := []string{f.ConfigKey("migrationRollbackCommand")}, ""
	// classFirst: the T class is the cause, so the error names the line
	// that set the class, in the cell's file or else the baseline's, even
	// when the migration command is the cell's own.
	classFirst := false
	if c.RunsMigrations() {
		// The key that causes it first: the region, or else the version.
		keys = []string{f.ConfigKey("auroraEngineVersion"), f.ConfigKey("migrationCommand"), "aws:region"}
		hint = "; set " + f.ConfigKey("auroraEngineVersion") + " to a version with the Data API, or leave " + f.ConfigKey("migrationCommand") + " unset (the cell then runs no migrations)"
		if _, none := awsfacts.DataAPIUnavailableRegions[c.Region]; none {
			keys = []string{"aws:region", f.ConfigKey("migrationCommand"), f.ConfigKey("auroraEngineVersion")}
			hint = "; leave " + f.ConfigKey("migrationCommand") + " unset for cells in " + c.Region + " (they then run no migrations)"
		}
		if awsfacts.DataAPIProblem(c.Region, c.AuroraEngineVersion) == nil && awsfacts.DataAPIInstanceClassProblem(c.AuroraInstanceClass) != nil {
			// Region and version have it; the T class is the cause.
			keys, classFirst = []string{f.ConfigKey("auroraInstanceClass"), f.ConfigKey("migrationCommand")}, true
			hint = "; set " + f.ConfigKey("auroraInstanceClass") + " to a class other than T (such as db.r6g.large, or db.serverless), or leave " +
				f.ConfigKey("migrationCommand") + " unset (the cell then runs no migrations)"
		}
	}
	where := keys
	if classFirst {
		where = keys[:1]
	}
	for _, key := range where {
		if line, set := c.Lines[key]; set {
			l.errs.Add(file, line, key, "%v%s", err, hint)
			return
		}
	}
	for _, key := range where {
		if line, set := f.BaselineLines[key]; set {
			if !l.reported[key+"/migrations"] {
				l.errs.Add(ProjectFile, line, key, "%v%s", err, hint)
			}
			l.reported[key+"/migrations"] = true
			return
		}
	}
	l.errs.Add(file, 0, keys[0], "%v%s", err, hint)
}
