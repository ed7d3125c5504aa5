"""Running the store: status, the queue, retries, re-index, re-embed, reconcile, resume, eval and the demo."""

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from semfs.cli.common import (
    Json,
    Tenant,
    app,
    err,
    opened,
    out,
    reader_tokens,
    tenant_option,
)
from semfs.domain.vocabulary import SearchMode


@app.command()
def status(
    tenant: Annotated[
        str | None, typer.Option("--tenant", help="Only this tenant (default: all).", callback=tenant_option)
    ] = None,
    as_json: Json = False,
) -> None:
    """Counts of files by status and outcome."""
    from rich.table import Table

    from semfs.pipeline.catalogue.files import status_rows, status_warnings
    from semfs.pipeline.catalogue.jobs import jobs_view
    from semfs.pipeline.maintenance.reembed import progress

    with opened() as c:
        who = {t: reader_tokens(c, t) for t in ([tenant] if tenant else c.repo.tenants())}
        rows = status_rows(c, tenant, who[tenant] if tenant else None)
        reembedding = progress(c)
        active = c.index.active_model()
        queue = {t: jobs_view(c, t, who[t]) for t in who}
    if as_json:
        print(
            json.dumps(
                [{"status": s, "outcome": o, "count": n} for s, o, n in rows],
                indent=2,
            )
        )
        return
    table = Table(title="files by status and outcome" + (f" (tenant {tenant})" if tenant else ""))
    for col in ("status", "outcome", "files"):
        table.add_column(col)
    for s, o, n in rows:
        table.add_row(s, o or "-", str(n))
    out.print(table)
    for warning in status_warnings(rows):
        out.print(f"[yellow]{warning}[/yellow]")
    _queue_and_model(queue, active, reembedding)


def _queue_and_model(queue: dict[str, Any], active: str | None, reembedding: dict[str, Any] | None) -> None:
    """What ``semfs status`` says under its table: the queue per tenant, the model, a re-embed's progress."""
    for t, view in queue.items():
        if view.jobs:
            counts = ", ".join(f"{k} {n}" for k, n in view.counts.items())
            out.print(f"in the queue for tenant {t}: {counts} (semfs cancel FILE_ID takes a queued file out)")
    out.print(f"searchable embedding model: {active or '(none yet)'}")
    walk = (reembedding or {}).get("walk") or {}
    if reembedding and walk and not walk.get("finished"):
        eta = f", ETA {reembedding['eta_s']:.0f} s" if reembedding.get("eta_s") is not None else ""
        out.print(
            f"re-embedding to {reembedding['model']}: {walk.get('walked', 0)} of {walk.get('total', 0)} files "
            f"walked, {reembedding['done']} re-embedded in the last pass ({reembedding['rate_per_s']} files/s{eta})"
        )


@app.command()
def retry(file_id: str, tenant: Tenant = "default") -> None:
    """Run a failed file through the pipeline again (a new attempt)."""
    from semfs.pipeline.intake.ingest import retry as run_again

    with opened(tenant) as c:
        record = run_again(c, tenant, file_id)
    outcome = record.outcome.value if record.outcome else record.status.value
    out.print(f"{record.file_id} {record.filename}: {outcome}" + (f" — {record.error}" if record.error else ""))
    if outcome.startswith(("FAILED", "REJECTED")):
        raise typer.Exit(1)


@app.command()
def cancel(file_id: str, tenant: Tenant = "default") -> None:
    """Take a file that semfs serve has queued, and not started, out of the queue."""
    from semfs.pipeline.catalogue.files import cancel as cancel_queued

    with opened(tenant) as c:
        record = cancel_queued(c, tenant, file_id)
    out.print(f"cancelled {record.file_id} ({record.filename})")


@app.command()
def reindex() -> None:
    """Rebuild the search index from the records and stored blobs."""
    from semfs.pipeline.maintenance.reindex import reindex as rebuild_index

    with opened() as c:
        n = rebuild_index(c)
    out.print(f"reindexed {n} file(s)")


@app.command(name="reembed")
def reembed_cmd(
    file: Annotated[list[str] | None, typer.Option("--file", help="Only this file id (repeatable).")] = None,
    tag: Annotated[str | None, typer.Option("--tag", help="Only files with this tag.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="At most N files this run.")] = None,
) -> None:
    """Re-embed with the configured model (SEMFS_EMBEDDER / SEMFS_EMBEDDING_MODEL); searches switch to
    the new vectors in one step once every file has them."""
    from semfs.pipeline.maintenance.reembed import reembed

    with opened() as c:
        result = reembed(c, file_ids=file or [], tag=tag, limit=limit)
    out.print(
        f"{result['done']} file(s) re-embedded with {result['model']}"
        + (f"; switched from {result['from_model']}" if result["switched"] else "")
        + (f"; {result['remaining']} remaining" if result["remaining"] else "")
        + (
            "; more to do (the walk over the archive stopped at --limit): run it again to go on"
            if result["remaining"] is None
            else ""
        )
    )


@app.command(name="reconcile")
def reconcile_cmd(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only report what drifted.")] = False,
    as_json: Json = False,
) -> None:
    """Compare stored objects, records and the index; repair drift and report the counts."""
    from semfs.pipeline.maintenance.reconcile import reconcile

    with opened() as c:
        report = reconcile(c, repair=not dry_run)
    if as_json:
        print(json.dumps(report, indent=2))
        return
    for kind, counts in report.items():
        out.print(f"{kind.replace('_', ' ')}: found {counts['found']}, fixed {counts['fixed']}")


@app.command(name="purge-tenant")
def purge_tenant_cmd(
    tenant: Annotated[
        str, typer.Argument(help="The tenant whose every file, record and index entry goes.", callback=tenant_option)
    ],
    yes: Annotated[
        str | None, typer.Option("--yes", metavar="TENANT", help="The tenant's name again, to confirm.")
    ] = None,
    as_json: Json = False,
) -> None:
    """Erase a whole tenant: its files (every stored version), text, vectors, index entries, records,
    threads, contacts, tags and saved views. There is no trash for this and no undo."""
    from semfs.pipeline.maintenance.purge import purge_tenant

    if yes != tenant:
        err.print(
            f"[red]this erases everything of tenant {tenant!r} for good: "
            f"run it again with --yes {tenant} to confirm[/red]"
        )
        raise typer.Exit(2)
    with opened() as c:
        report = purge_tenant(c, tenant)
    if as_json:
        print(json.dumps({"tenant": tenant, **report}, indent=2))
        return
    out.print(
        f"tenant {tenant} erased: {report['records']} record(s), {report['objects']} stored object(s), "
        f"{report['index_documents']} index document(s), {report['mail_items']} mail item(s), "
        f"{report['tag_items']} tag item(s), {report['saved_views']} saved view(s), "
        f"{report['entity_items']} entity item(s)"
    )
    if report["in_flight"]:
        out.print(
            f"[yellow]{report['in_flight']} of its files were being processed: once they end, run this "
            "again to remove what they wrote after the purge[/yellow]"
        )


@app.command(name="resume")
def resume_cmd() -> None:
    """Finish files a crash left mid-pipeline (every stage is idempotent, so they restart safely)."""
    from semfs.pipeline.intake.ingest import resume

    with opened() as c:
        done = resume(c)
    if not done:
        out.print("nothing to resume: no file was left mid-pipeline")
        return
    counts = Counter(r.outcome.value if r.outcome else r.status.value for r in done)
    out.print(f"resumed {len(done)} file(s): " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    for r in done:
        out.print(f"  {r.file_id} {r.filename}: {r.outcome.value if r.outcome else r.status.value}")


@app.command(name="eval")
def eval_cmd(
    beir_dir: Annotated[Path, typer.Argument(help="A BEIR folder: corpus.jsonl[.gz], queries.jsonl, qrels/test.tsv")],
    mode: Annotated[str, typer.Option("--mode", help="hybrid | keyword | semantic | all")] = "hybrid",
    run_out: Annotated[Path | None, typer.Option("--run-out", help="Write a TREC run file.")] = None,
    max_docs: Annotated[int | None, typer.Option("--max-docs", help="Only the first N documents (smoke runs).")] = None,
    as_json: Json = False,
) -> None:
    """Retrieval quality on a BEIR set: nDCG@10, MRR@10, R@10, R@100."""
    from rich.table import Table

    from semfs.config import Settings
    from semfs.evaluation import evaluate

    modes: list[SearchMode] = ["keyword", "semantic", "hybrid"] if mode == "all" else [mode]  # type: ignore[list-item]
    try:
        settings = Settings()
    except Exception as e:
        err.print(f"[red]configuration error:[/red] {e}")
        raise typer.Exit(2) from e
    if not (beir_dir / "queries.jsonl").exists():
        err.print(f"[red]{beir_dir} is not a BEIR folder (no queries.jsonl)[/red]")
        raise typer.Exit(2)
    results = evaluate(
        settings, beir_dir, modes, run_out=run_out, max_docs=max_docs, progress=None if as_json else err.console
    )
    if as_json:
        print(json.dumps(results, indent=2))
        return
    table = Table(title=f"{beir_dir.name}: {results[0]['queries']} queries, {results[0]['documents']} documents")
    for col in ("mode", "nDCG@10", "MRR@10", "R@10", "R@100", "p50 ms", "p95 ms"):
        table.add_column(col)
    for r in results:
        table.add_row(
            r["mode"],
            f"{r['ndcg@10']:.4f}",
            f"{r['mrr@10']:.4f}",
            f"{r['recall@10']:.4f}",
            f"{r['recall@100']:.4f}",
            f"{r['latency_ms_p50']:.1f}",
            f"{r['latency_ms_p95']:.1f}",
        )
    out.print(table)


@app.command()
def demo(
    folder: Annotated[Path, typer.Option("--dir", help="Where to write the demo corpus.")] = Path(".semfs/demo"),
    tenant: Tenant = "default",
    ingest_it: Annotated[bool, typer.Option("--ingest/--no-ingest")] = True,
) -> None:
    """Generate the demo corpus (a fictional organisation's files) and ingest it."""
    from semfs.demo import ingest_demo, write_demo_corpus

    written = write_demo_corpus(folder)
    out.print(f"wrote {len(written)} demo files to {folder}")
    if not ingest_it:
        return
    with opened(create=True) as c:
        counts = ingest_demo(c, tenant, folder, progress=err.console)
    out.print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
