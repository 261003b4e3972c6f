"""Opening a campaign: a new one from a manifest, or a killed one from its folder.

The provider is built and preflighted before anything else, so a mistyped model or a dead
endpoint fails at once with the provider's own message and no folder, ref or ledger row is
made. A new campaign starts from the repository's HEAD (committed work only), gets an id of the
form `20250611-142233-9f3c1a` (UTC time and 6 random hex digits: sortable, unique, valid in a
git ref name), a folder (`<target>/.speedproof/campaigns/<id>` unless `--out` names one) with
its own ledger, and the refs `refs/speedproof/<id>/base` and `head`.

A resumed campaign reads its options back from its ledger; a limit, the model, the base URL,
a seat (`--analyst`, `--reviewer`) or `--explorer` given again replaces the recorded one, and
the resume event records what was given. When a seat is the advisor's, the manifest's advisor
is opened and checked against its baseline with the provider, before anything is made; a model
advisor's answers are then cached in the campaign folder. Stale
worktrees a killed run left behind are removed first (`workspace.cleanup_stale`).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from speedproof.agents.providers.base import Provider
from speedproof.agents.providers.preflight import PreflightReport, preflight
from speedproof.agents.providers.registry import make_provider
from speedproof.campaign import parents
from speedproof.campaign.advice import AdvisorSeats, open_seats
from speedproof.campaign.loop import Setting
from speedproof.campaign.options import CampaignOptions, OptionsError, seat
from speedproof.campaign.records import CampaignLedger
from speedproof.cluster.jobs import Cluster
from speedproof.cluster.preflight import Needs, judge_needs
from speedproof.cluster.spec import open_cluster
from speedproof.ground.errors import SpeedproofError
from speedproof.ground.git import repository_root
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.worktree.scratch import sweep_scratch
from speedproof.judge.worktree.trees import cleanup_stale, resolve_rev
from speedproof.ledger import LEDGER_FILE
from speedproof.manifest_loading import load_manifest

CAMPAIGNS_FOLDER = Path(".speedproof") / "campaigns"


class CampaignError(SpeedproofError):
    """A campaign cannot be started or resumed as asked."""


@dataclass(frozen=True)
class Request:
    """What the command line gave; None means "not given" (so a resume keeps the record's)."""

    manifest: Path | None = None
    model: str | None = None
    base_url: str | None = None
    limits: dict[str, Any] | None = None
    out: Path | None = None
    allow_unsandboxed: bool = False
    stability_check: bool = True
    resume: Path | None = None
    analyst: str | None = None
    reviewer: str | None = None
    explorer: bool | None = None
    # Holdout inputs outside the repository; not recorded, so a resume must give it again.
    holdout_dir: Path | None = None
    # Judge candidates on this cluster (`--cluster`); a resume keeps the recorded one.
    cluster: str | None = None


@dataclass(frozen=True)
class Opened:
    setting: Setting
    options: CampaignOptions
    preflight: PreflightReport
    resumed: bool
    removed_worktrees: tuple[Path, ...] = ()


def new_campaign_id(now: datetime | None = None) -> str:
    moment = now or datetime.now(UTC)
    return f"{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def resolve(request: Request) -> CampaignOptions:
    """The options to run with: the request's, or the record's with the request's on top."""
    limits = {k: v for k, v in (request.limits or {}).items() if v is not None}
    if request.resume is None:
        if request.manifest is None:
            raise OptionsError("a new campaign needs --manifest")
        base = CampaignOptions(manifest=request.manifest, out=request.out)
        return replace(
            base,
            model=request.model or base.model,
            base_url=request.base_url,
            limits=base.limits.overlay(limits),
            allow_unsandboxed=request.allow_unsandboxed,
            stability_check=request.stability_check,
            analyst=seat(request.analyst or "model", "analyst"),
            reviewer=seat(request.reviewer or "model", "reviewer"),
            explorer=bool(request.explorer),
            cluster=request.cluster,
        )
    if request.out is not None:
        raise OptionsError("--out names a new campaign's folder; --resume already names one")
    record = _record(request.resume)
    recorded = CampaignOptions.from_record(record["options"], resume=request.resume)
    return replace(
        recorded,
        manifest=request.manifest or recorded.manifest,
        model=request.model or recorded.model,
        base_url=request.base_url if request.base_url is not None else recorded.base_url,
        limits=recorded.limits.overlay(limits),
        allow_unsandboxed=request.allow_unsandboxed,
        analyst=seat(request.analyst or recorded.analyst, "analyst"),
        reviewer=seat(request.reviewer or recorded.reviewer, "reviewer"),
        explorer=recorded.explorer if request.explorer is None else request.explorer,
        cluster=request.cluster or recorded.cluster,
    )


def _record(folder: Path) -> dict[str, Any]:
    if not (folder / LEDGER_FILE).is_file():
        raise CampaignError(f"{folder} holds no campaign ledger ({LEDGER_FILE}); nothing to resume")
    ledger = CampaignLedger.in_folder(folder)
    try:
        rows = ledger.query("SELECT id FROM campaigns ORDER BY created_at")
        if len(rows) != 1:
            raise CampaignError(
                f"{folder} holds {len(rows)} campaigns; a campaign folder holds one"
            )
        record = ledger.campaign(rows[0]["id"])
    finally:
        ledger.close()
    if record is None:
        raise CampaignError(f"{folder}: the campaign record vanished while being read")
    return record


@contextmanager
def open_campaign(request: Request) -> Iterator[Opened]:
    """The campaign `request` asks for, with its ledger open for the block."""
    options = resolve(request)
    provider = make_provider(options.model, base_url=options.base_url)
    checked = preflight(provider)
    loaded = load_manifest(options.manifest)
    seats = open_seats(
        loaded, analyst=options.analyst == "advisor", reviewer=options.reviewer == "advisor"
    )
    sandbox = make_sandbox(allow_unsandboxed=options.allow_unsandboxed)
    repo = repository_root(loaded.root.resolve())
    needs = judge_needs(
        loaded.manifest.target.language,
        loaded.manifest.counts_instructions,
        sandboxed=not options.allow_unsandboxed,
    )
    with _cluster(options.cluster, needs) as cluster:
        if options.resume is None:
            campaign = new_campaign_id()
            folder = (options.out or loaded.root / CAMPAIGNS_FOLDER / campaign).resolve()
            if (folder / LEDGER_FILE).exists():
                raise CampaignError(f"{folder} already holds a campaign; continue it with --resume")
            parents.check_campaign_id(repo, campaign)
            base_rev = resolve_rev(repo, "HEAD")
            removed: list[Path] = []
        else:
            folder = options.resume.resolve()
            campaign = str(_record(folder)["id"])
            base_rev = ""
            removed = cleanup_stale(repo)
        sweep_scratch()
        ledger = CampaignLedger.in_folder(folder)
        advice = None
        try:
            advice = None if seats is None else seats.cached(folder)
            setting = Setting(
                campaign=campaign,
                loaded=loaded,
                repo=repo,
                folder=folder,
                sandbox=sandbox,
                ledger=ledger,
                provider=provider,
                provider_name=provider_label(provider, options.model),
                limits=options.limits,
                stability_check=options.stability_check,
                advice=advice,
                explore=options.explorer,
                holdout_dir=request.holdout_dir,
                cluster=cluster,
            )
            if options.resume is None:
                _start(setting, options, base_rev, checked)
            else:
                _resume(setting, request, removed)
            yield Opened(setting, options, checked, options.resume is not None, tuple(removed))
        finally:
            _close(advice)
            ledger.close()


@contextmanager
def _cluster(spec: str | None, needs: Needs) -> Iterator[Cluster | None]:
    """The cluster candidates are judged on, opened before anything is made (one that does not
    answer leaves no campaign behind), or None to judge them here."""
    if spec is None:
        yield None
        return
    with open_cluster(spec, needs=needs) as cluster:
        yield cluster


def _close(advice: AdvisorSeats | None) -> None:
    if advice is not None:
        advice.close()


def _start(
    setting: Setting, options: CampaignOptions, base_rev: str, checked: PreflightReport
) -> None:
    ledger = setting.ledger
    ledger.start_campaign(
        setting.campaign,
        target=setting.loaded.manifest.target.name,
        repo=setting.repo,
        base_rev=base_rev,
        options={**options.to_record(), "sandbox": setting.sandbox.name},
    )
    parents.record_base(setting.repo, setting.campaign, base_rev)
    ledger.add_event(
        setting.campaign,
        "start",
        {
            "base_rev": base_rev,
            "folder": str(setting.folder),
            "options": options.to_record(),
            "provider": checked.model_dump(),
            "sandbox": setting.sandbox.name,
            "advisor": None if setting.advice is None else setting.advice.model,
        },
    )


def _resume(setting: Setting, request: Request, removed: list[Path]) -> None:
    given = {
        "model": request.model,
        "base_url": request.base_url,
        "manifest": str(request.manifest) if request.manifest else None,
        "analyst": request.analyst,
        "reviewer": request.reviewer,
        "explorer": request.explorer,
        "cluster": request.cluster,
        **(request.limits or {}),
    }
    setting.ledger.add_event(
        setting.campaign,
        "resume",
        {
            "given": {k: v for k, v in given.items() if v is not None},
            "removed_worktrees": [str(p) for p in removed],
            "sandbox": setting.sandbox.name,
        },
    )


def provider_label(provider: Provider, spec: str) -> str:
    name = getattr(provider, "name", None)
    return name if isinstance(name, str) and name else spec
