"""The guard: what a patch may not touch, read twice. First from the patch text
(`check.check_patch`: headers, protected paths), before any toolchain is looked up; then from
what git reports changed once it is applied (`check.check_applied`: changed files, the added
Python and Go lines, harness probes, plugins and code as data). Nothing is imported here."""
