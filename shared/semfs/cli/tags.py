"""``semfs tags``: the tag vocabulary, merge suggestions and merges."""

import json
from typing import Annotated, Any

import typer

from semfs.cli.common import (
    Json,
    Tenant,
    app,
    opened,
    out,
    reader_tokens,
)

tags_app = typer.Typer(help="The tag vocabulary: counts, merge suggestions, merges.", invoke_without_command=True)


app.add_typer(tags_app, name="tags")


@tags_app.callback()
def tags_list(
    ctx: typer.Context,
    tenant: Tenant = "default",
    suggest: Annotated[bool, typer.Option("--suggest", help="Show tags that probably mean the same.")] = False,
    as_json: Json = False,
) -> None:
    """Every tag with its manual and auto counts (or, with --suggest, merge candidates with evidence)."""
    if ctx.invoked_subcommand is not None:
        return
    from semfs.pipeline.catalogue.tags import suggest_merges, vocabulary

    with opened() as c:
        rows: list[dict[str, Any]] = (
            [s.model_dump() for s in suggest_merges(c, tenant, readers=reader_tokens(c, tenant))]
            if suggest
            else [
                {"tag": t.tag, "manual": t.manual, "auto": t.auto}
                for t in vocabulary(c, tenant, reader_tokens(c, tenant))
            ]
        )
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        out.print("no tags that look like the same tag" if suggest else f"no tags in tenant '{tenant}'")
        return
    for row in rows:
        if suggest:
            out.print(f"{row['merge']} → {row['into']}  ({'; '.join(row['reasons'])})")
        else:
            out.print(f"{row['tag']}  manual {row['manual']}  auto {row['auto']}")


@tags_app.command("merge")
def tags_merge(source: str, target: str, tenant: Tenant = "default") -> None:
    """Merge tag SOURCE into TARGET on every file; SOURCE keeps working as a search filter."""
    from semfs.pipeline.catalogue.tags import merge

    with opened(tenant) as c:
        changed = merge(c, tenant, source, target)
    out.print(f"merged '{source}' into '{target}' on {changed} file(s)")
