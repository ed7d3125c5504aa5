"""The maintenance passes: re-embed (switch when all files are done) or reconcile; and, on an
administrator's invocation alone, a tenant's erasure (``{"task": "purge_tenant", "tenant": T, "confirm": T}``).

EventBridge Scheduler starts a pass. A pass runs until its invocation is nearly out of time, then, if
work remains, queues its own continuation in the maintenance queue (the SQS event source brings it back
here), so a model change or a reconcile sweep over a million files goes on pass after pass instead of
stopping at the first 900 s. A re-embed pass resumes from what is staged (``pipeline/reembed.py``); a
reconcile pass from its sweep, kept in the bucket between passes (``pipeline/reconcile.py``).
"""

import json
import time
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import continue_later, get_container, logger, metrics
from semfs.pipeline.maintenance.purge import purge_tenant
from semfs.pipeline.maintenance.reconcile import load_sweep, new_sweep, reconcile_pass, save_sweep
from semfs.pipeline.maintenance.reembed import reembed

MARGIN_S = 60  # left for the switch, the progress write and queueing the continuation


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    records = event.get("Records") or []
    if records:  # a continuation from the maintenance queue (batch size 1)
        event = json.loads(records[0]["body"])
    budget_s = context.get_remaining_time_in_millis() / 1000 - MARGIN_S
    if event.get("task") == "reconcile":
        return reconcile_step(event, time.monotonic() + budget_s)
    if event.get("task") == "purge_tenant":  # never scheduled: `aws lambda invoke` by an administrator
        tenant = str(event.get("tenant") or "")
        if not tenant or event.get("confirm") != tenant:
            return {"error": "name the tenant twice, as tenant and confirm, to erase it"}
        return {"tenant": tenant, **purge_tenant(get_container(), tenant)}
    progress = reembed(get_container(), limit=event.get("limit"), deadline=time.monotonic() + budget_s)
    metrics.add_metric(name="FilesReembedded", unit="Count", value=progress["done"])
    logger.info("re-embed pass", **progress)
    # every pass gets further (a page of the walk at least), so a walk not at its end goes on
    if progress["remaining"] is None or (progress["remaining"] and progress["done"]) or progress.get("following"):
        continue_later({"task": "reembed", **({"limit": event["limit"]} if event.get("limit") else {})})
        progress["continued"] = True
    return progress


def reconcile_step(event: dict[str, Any], deadline: float) -> dict[str, Any]:
    """One reconcile pass: a new sweep, or the saved one a continuation names."""
    c = get_container()
    sweep = reconcile_pass(c, load_sweep(c, event["sweep"]) if event.get("sweep") else new_sweep(c), deadline)
    report: dict[str, Any] = sweep.report()
    if sweep.phase != "done":
        continue_later({"task": "reconcile", "sweep": save_sweep(c, sweep)})
        metrics.add_metric(name="ReconcilePassesContinued", unit="Count", value=1)
        return {**report, "continued": True, "phase": sweep.phase}
    if event.get("sweep"):
        c.blobs.delete(event["sweep"])
    metrics.add_metric(name="DriftFound", unit="Count", value=sum(v["found"] for v in report.values()))
    logger.info("reconcile sweep done", passes=sweep.passes)
    return report
