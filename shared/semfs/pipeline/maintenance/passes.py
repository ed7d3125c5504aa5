"""One invocation of the maintenance function, whatever started it: a re-embed pass (the schedule, or its own
continuation), a reconcile pass (likewise), or a tenant's erasure (an administrator's ``aws lambda invoke`` with
``{"task": "purge_tenant", "tenant": T, "confirm": T}``, never scheduled).

A pass runs until its deadline, then says whether work remains and with which task to go on
(``Pass.continue_with``); the host queues that (in AWS the maintenance queue brings it back), so a model change or
a sweep over a million files goes on pass after pass instead of stopping at the first 900 s. A re-embed pass
resumes from what is staged (``reembed.py``); a reconcile pass from its sweep, kept in the blob store between
passes (``reconcile.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from semfs.domain.errors import InvalidRequest
from semfs.observability import get_logger
from semfs.pipeline.maintenance.purge import purge_tenant
from semfs.pipeline.maintenance.reconcile import load_sweep, new_sweep, reconcile_pass, save_sweep
from semfs.pipeline.maintenance.reembed import reembed

if TYPE_CHECKING:
    from semfs.ports import Container

log = get_logger(__name__)


@dataclass
class Pass:
    """What one pass did (``report``, the invocation's answer), the task to queue for the next pass when
    work remains, and the counts to publish as metrics."""

    report: dict[str, Any]
    continue_with: dict[str, Any] | None = None
    metrics: dict[str, int] = field(default_factory=dict)


def maintenance_pass(c: Container, task: dict[str, Any], deadline: float) -> Pass:
    """Run the pass ``task`` names (``reembed`` when it names none) until ``deadline`` (monotonic)."""
    match task.get("task"):
        case "reconcile":
            return _reconcile(c, task, deadline)
        case "purge_tenant":
            return _purge(c, task, deadline)
        case "poll_mail":
            return _poll_mail(c, deadline)
        case _:
            return _reembed(c, task, deadline)


def _reembed(c: Container, task: dict[str, Any], deadline: float) -> Pass:
    progress = reembed(c, limit=task.get("limit"), deadline=deadline)
    log.info("re-embed pass", **progress)
    done = Pass(progress, metrics={"FilesReembedded": progress["done"]})
    # every pass gets further (a page of the walk at least), so a walk not at its end goes on
    if progress["remaining"] is None or (progress["remaining"] and progress["done"]) or progress.get("following"):
        done.continue_with = {"task": "reembed", **({"limit": task["limit"]} if task.get("limit") else {})}
        progress["continued"] = True
    return done


def _poll_mail(c: Container, deadline: float) -> Pass:
    """Every enabled mail account, until the deadline (the next schedule reads the rest: each folder's cursor
    says where it stopped)."""
    from semfs.pipeline.intake.mailboxes import poll_all

    reports = poll_all(c, deadline=deadline)
    failed = [r.account for r in reports if r.error]
    read = sum(f.read for r in reports for f in r.folders)
    files = sum(f.files for r in reports for f in r.folders)
    report = {"accounts": len(reports), "failed": len(failed), "messages": read, "files": files}
    return Pass(report, metrics={"MailMessagesRead": read, "MailAccountsFailed": len(failed)})


def _reconcile(c: Container, task: dict[str, Any], deadline: float) -> Pass:
    """A new sweep, or the saved one a continuation names."""
    sweep = reconcile_pass(c, load_sweep(c, task["sweep"]) if task.get("sweep") else new_sweep(c), deadline)
    report: dict[str, Any] = sweep.report()
    if sweep.phase != "done":
        return Pass(
            {**report, "continued": True, "phase": sweep.phase},
            continue_with={"task": "reconcile", "sweep": save_sweep(c, sweep)},
            metrics={"ReconcilePassesContinued": 1},
        )
    if task.get("sweep"):
        c.blobs.delete(task["sweep"])
    log.info("reconcile sweep done", passes=sweep.passes)
    return Pass(report, metrics={"DriftFound": sum(v["found"] for v in report.values())})


def _purge(c: Container, task: dict[str, Any], deadline: float) -> Pass:
    """A tenant's erasure, in as many passes as it takes: one that runs out of time queues the next, which
    starts at the step it stopped in (``purge.purge_tenant``); each pass's report is its progress."""
    tenant = str(task.get("tenant") or "")
    if not tenant or task.get("confirm") != tenant:
        return Pass({"error": "name the tenant twice, as tenant and confirm, to erase it"})
    try:
        step, cursor = int(task.get("step") or 0), task.get("cursor")
        report = purge_tenant(c, tenant, deadline=deadline, start=step, cursor=cursor)
    except InvalidRequest as e:  # no tenant id (domain/tenants.py): refused before anything is touched
        return Pass({"error": e.reason})
    if report["done"]:
        return Pass({"tenant": tenant, **report})
    following = {"task": "purge_tenant", "tenant": tenant, "confirm": tenant, "step": report["next_step"]}
    if report["cursor"]:
        following["cursor"] = report["cursor"]
    return Pass(
        {"tenant": tenant, **report, "continued": True}, continue_with=following, metrics={"PurgePassesContinued": 1}
    )
