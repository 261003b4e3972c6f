"""Where a candidate patch meets the program: two detached worktrees at the base revision and a
scratch folder (`trees`, `scratch`), the patch applied to the candidate's (`apply`, with where
each hunk landed: `hunks`, `landing`), and what a tree holds, compared after every stage
(`snapshot`). Nothing is imported here."""
