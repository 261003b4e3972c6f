"""The five roles, answered from the context block alone by the heuristic rules.

* coordinator: the first function of the hot list, in the order the campaign ranked it (self
  time from discovery, or the advisor's score), with a rule that has not been tried on it yet.
  When none is left it answers with an empty `function`, which means "nothing left": the
  campaign treats it as an exit condition. Flags are not read directly: a flag names a
  suspicion, and a rule acts only on a pattern it can see in the source.
* explorer: no workloads. A static proposer has no ground for inventing inputs, and a made-up
  workload would only profile what the author imagined.
* analyst: one cause per rule that finds its pattern, with confidence 1.0 for a structural
  match and 0.5 when the match rests on a module-level fact the function alone does not show.
* optimizer: the first rule, in registry order with the analyst's and advisor's causes first,
  that has not been tried on the function and writes a rewrite; NoRuleApplies otherwise.
* reviewer: the structural hazard checks of `review`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from speedproof.agents.answers import (
    AnalystAnswer,
    CauseClaim,
    CoordinatorAnswer,
    ExplorerAnswer,
)
from speedproof.agents.heuristic import rules
from speedproof.agents.heuristic.review import review
from speedproof.agents.heuristic.subject import NoRuleApplies, Subject
from speedproof.agents.providers.base import ProviderError
from speedproof.source.function import Language

NOTHING_LEFT = ""
NOTHING_LEFT_RATIONALE = "no rule applies to any hot function"
UNCERTAIN_CONFIDENCE = 0.5
LIKELY = 0.5  # a cause at least this probable (or of unknown probability) is tried first


def answer(role: str, context: dict[str, Any]) -> str:
    """The JSON answer of `role` to `context`."""
    handlers = {
        "coordinator": _coordinator,
        "explorer": _explorer,
        "analyst": _analyst,
        "optimizer": _optimizer,
        "reviewer": _reviewer,
    }
    handler = handlers.get(role)
    if handler is None:
        raise ProviderError(f"the heuristic provider has no role {role!r}")
    result = handler(context)
    if isinstance(result, BaseModel):
        return result.model_dump_json(exclude_defaults=True)
    return json.dumps(result, ensure_ascii=False)


# -- context ----------------------------------------------------------------------------------


def _get(mapping: dict[str, Any], key: str, kind: type, where: str = "context") -> Any:
    if key not in mapping:
        raise ProviderError(f"the {where} has no {key!r}")
    value = mapping[key]
    if not isinstance(value, kind):
        raise ProviderError(f"the {where}'s {key!r} is not a {kind.__name__}")
    return value


def _language(context: dict[str, Any]) -> str:
    target = _get(context, "target", dict)
    return str(_get(target, "language", str, "target"))


def _subject(view: dict[str, Any], language: Language, file_text: str | None) -> Subject:
    where = "hot function"
    return Subject(
        name=_get(view, "name", str, where),
        file=_get(view, "file", str, where),
        language=language,
        source=_get(view, "source", str, where),
        start_line=_get(view, "start_line", int, where),
        end_line=_get(view, "end_line", int, where),
        file_text=file_text,
    )


def same_function(a: str, b: str) -> bool:
    """`pkg.mod.f` and `mod.f` or `f` name the same function (names are reported at
    different depths by different profilers)."""
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def tried_rules(history: list[Any], function: str) -> set[str]:
    return {
        str(item["rule"])
        for item in history
        if isinstance(item, dict)
        and item.get("rule")
        and same_function(str(item.get("function", "")), function)
    }


# The verdict the history gives a proposal that has not come back from the judge yet.
BEING_JUDGED = "being judged"


# -- roles ------------------------------------------------------------------------------------


def _coordinator(context: dict[str, Any]) -> CoordinatorAnswer | dict[str, str]:
    language = _language(context)
    views = _get(context, "hot_functions", list)
    history = _get(context, "history", list)
    if language not in ("python", "go"):
        return {"function": NOTHING_LEFT, "rationale": NOTHING_LEFT_RATIONALE}
    # A function chosen for a proposal still being made (a cluster wave's, `campaign.drafts`)
    # shows no rule yet: it is taken, so the wave's next proposal turns to another function.
    taken = [
        str(item.get("function", ""))
        for item in history
        if isinstance(item, dict) and item.get("verdict") == BEING_JUDGED and not item.get("rule")
    ]
    # The hot list comes ranked by the campaign (by self time from discovery, or by the advisor's
    # score that combines a flag with hotness): take it in that order, as a model would.
    for view in (v for v in views if isinstance(v, dict)):
        if not isinstance(view.get("source"), str):
            continue
        subject = _subject(view, language, None)  # type: ignore[arg-type]
        if any(same_function(name, subject.name) for name in taken):
            continue
        tried = tried_rules(history, subject.name)
        found = [f for f in rules.findings(subject) if f.rule not in tried]
        if found:
            more = f"; {len(found) - 1} more rule(s) apply" if len(found) > 1 else ""
            rationale = (
                f"{subject.name} ({float(view.get('self_pct') or 0):.1f} % self, "
                f"{float(view.get('cum_pct') or 0):.1f} % cumulative): {found[0].evidence} "
                f"[rule {found[0].rule}]{more}"
            )
            return CoordinatorAnswer(function=subject.name, rationale=rationale)
    return {"function": NOTHING_LEFT, "rationale": NOTHING_LEFT_RATIONALE}


def _explorer(context: dict[str, Any]) -> ExplorerAnswer:
    _get(context, "workloads", list)
    return ExplorerAnswer(workloads=[])


def _analyst(context: dict[str, Any]) -> AnalystAnswer:
    language = _language(context)
    claims: list[CauseClaim] = []
    if language not in ("python", "go"):
        return AnalystAnswer(causes=[])
    for view in _get(context, "hot_functions", list):
        if not isinstance(view, dict) or not isinstance(view.get("source"), str):
            continue
        subject = _subject(view, language, None)  # type: ignore[arg-type]
        for finding in rules.findings(subject):
            claims.append(
                CauseClaim(
                    function=subject.name,
                    cause=finding.cause,
                    evidence=f"{finding.evidence} (rule {finding.rule})",
                    confidence=1.0 if finding.certain else UNCERTAIN_CONFIDENCE,
                )
            )
    return AnalystAnswer(causes=claims)


def _optimizer(context: dict[str, Any]) -> BaseModel:
    language = _language(context)
    view = _get(context, "function", dict)
    file = _get(context, "file", dict)
    history = _get(context, "history", list)
    path, source = _get(file, "path", str, "file"), _get(file, "source", str, "file")
    if language not in ("python", "go"):
        raise NoRuleApplies(f"the heuristic rules do not cover {language!r} targets")
    subject = _subject(view, language, source)  # type: ignore[arg-type]
    if path != subject.file:
        raise ProviderError(f"the context's file {path!r} does not hold {subject.file!r}")
    tried = tried_rules(history, subject.name)
    order = _preferred(language, subject.name, context, tried)
    for proposal in rules.proposals(subject, order):
        return proposal.answer
    raise NoRuleApplies(
        f"no heuristic rule writes a rewrite for {subject.name} "
        f"(tried before: {', '.join(sorted(tried)) or 'none'})",
        function=subject.name,
        rules=tuple(f.rule for f in rules.findings(subject.without_file())),
    )


def _preferred(language: str, function: str, context: dict[str, Any], tried: set[str]) -> list[str]:
    """Rule ids not yet tried: those whose cause the analyst or advisor claimed for this
    function first, those a reviewer concern names last, the registry's order otherwise."""
    claimed = {
        str(cause.get("cause"))
        for cause in context.get("causes", [])
        if isinstance(cause, dict)
        and same_function(str(cause.get("function", "")), function)
        and (cause.get("probability") is None or float(cause["probability"]) >= LIKELY)
    }
    concerns = " ".join(str(c) for c in context.get("concerns", []))
    causes = {rule.id: rule.cause for rule in rules.PYTHON_RULES}
    causes.update({rule.id: rule.cause for rule in rules.GO_RULES})
    ids = [rule_id for rule_id in rules.rule_ids(language) if rule_id not in tried]
    return sorted(ids, key=lambda r: (r in concerns, causes[r] not in claimed))


def _reviewer(context: dict[str, Any]) -> BaseModel:
    return review(_get(context, "diff", str))
