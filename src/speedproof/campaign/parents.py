"""The accepted chain as git commits on refs of the campaign's own, beside the user's branches.

An accepted candidate becomes a commit whose parent is the previous link (the campaign's base
for the first), made in a throwaway worktree so the user's branches, index and working tree are
never touched. Refs:

    refs/speedproof/<campaign>/base            the revision the campaign started from
    refs/speedproof/<campaign>/accepted/<NNN>  the NNN-th accepted link (001, 002, …)
    refs/speedproof/<campaign>/head            the newest link: what the next candidate is
                                               judged against

The refs keep the commits reachable (git's garbage collector never removes them) and let a
person inspect the chain with ordinary git (`git log refs/speedproof/<campaign>/head`). The
ledger stays the record: a resumed campaign reads its head from the "accepted" events and
rewrites the refs to match, so a kill between making a commit and recording it loses nothing.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.git import git, git_ok
from speedproof.judge.worktree.apply import apply_patch
from speedproof.judge.worktree.trees import worktree

REF_ROOT = "refs/speedproof"
_IDENTITY = (
    "-c",
    "user.name=speedproof",
    "-c",
    "user.email=speedproof@localhost",
    "-c",
    "commit.gpgsign=false",
)


def ref(campaign: str, name: str) -> str:
    """The full name of one of the campaign's refs (`base`, `head`, `accepted/001`)."""
    return f"{REF_ROOT}/{campaign}/{name}"


def accepted_ref(campaign: str, index: int) -> str:
    return ref(campaign, f"accepted/{index:03d}")


def check_campaign_id(repo: Path, campaign: str) -> None:
    """A campaign id must make valid ref names (it is generated, but may come from a record)."""
    record, _ = git(repo, "check-ref-format", ref(campaign, "head"))
    if not record.ok:
        raise InfrastructureError(f"campaign id {campaign!r} does not make a valid git ref name")


def set_ref(repo: Path, name: str, sha: str) -> None:
    git_ok(repo, "update-ref", name, sha)


def record_base(repo: Path, campaign: str, base_rev: str) -> None:
    """Point the campaign's base and head refs at its starting revision."""
    set_ref(repo, ref(campaign, "base"), base_rev)
    set_ref(repo, ref(campaign, "head"), base_rev)


def commit_candidate(repo: Path, parent: str, patch: str, message: str) -> str:
    """A new commit: `parent` with `patch` applied; returns its sha. No branch moves."""
    with worktree(repo, parent) as tree:
        apply_patch(tree.path, patch)
        git_ok(tree.path, "add", "-A")
        git_ok(tree.path, *_IDENTITY, "commit", "-q", "--no-verify", "-m", message)
        sha = git_ok(tree.path, "rev-parse", "HEAD").decode("ascii").strip()
    return sha


def record_link(repo: Path, campaign: str, index: int, sha: str) -> None:
    """Make `sha` the campaign's `index`-th accepted link and its head."""
    set_ref(repo, accepted_ref(campaign, index), sha)
    set_ref(repo, ref(campaign, "head"), sha)


def sync_refs(repo: Path, campaign: str, base_rev: str, links: list[str]) -> None:
    """Make the refs say what the ledger says: base, each link, and the head."""
    set_ref(repo, ref(campaign, "base"), base_rev)
    for index, sha in enumerate(links, start=1):
        set_ref(repo, accepted_ref(campaign, index), sha)
    set_ref(repo, ref(campaign, "head"), links[-1] if links else base_rev)


def commit_exists(repo: Path, sha: str) -> bool:
    record, _ = git(repo, "cat-file", "-e", f"{sha}^{{commit}}")
    return record.ok


def cumulative_diff(repo: Path, base_rev: str, head: str) -> str:
    """The whole change from the campaign's base to its newest link, as `git diff` writes it."""
    if base_rev == head:
        return ""
    out = git_ok(repo, "diff", "--no-color", "--no-ext-diff", base_rev, head)
    return out.decode("utf-8", "surrogateescape")
