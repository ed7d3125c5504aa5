"""``semfs …`` — the local command line. Honours ``SEMFS_DATA_DIR`` and ``--tenant``.

Each module is one area of commands, each command a thin shell over a pipeline function: ``files``
(ingest, ls, show, cat, get, versions, tag, rm, restore, trash), ``query`` (search, ask, context, contacts), ``tags``,
``ops`` (status, the queue, maintenance, a tenant's erasure, eval, the demo), ``serve``, ``keys`` and ``people``
(users, groups, share).
``common`` holds the app, the consoles, the shared options and the container a command opens. Importing a
module registers its commands, in the order ``semfs --help`` lists them.
"""

from __future__ import annotations

import os

from semfs.cli import files, keys, mail, ops, people, query, serve, tags  # noqa: F401  (registers the commands)
from semfs.cli.common import app

__all__ = ["app", "main"]

# the order of ``semfs --help``: what a newcomer does first, then finding, then running the store
_HELP_ORDER = [
    *("ingest", "ls", "show", "cat", "get", "versions", "tag", "note", "history", "share", "rm", "restore", "trash"),
    *("search", "similar", "ask", "context", "contacts", "entities", "entity"),
    *(
        "status",
        "retry",
        "cancel",
        "resume",
        "reindex",
        "reembed",
        "reconcile",
        "purge-tenant",
        "eval",
        "demo",
        "serve",
        "mcp",
    ),
]
app.registered_commands.sort(
    key=lambda cmd: _HELP_ORDER.index(str(cmd.name or getattr(cmd.callback, "__name__", ""))),
)


def main() -> None:
    # semfs uses no pydantic plugin: looking for one reads every installed package's entry points, a
    # thirtieth of a second on every command
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "1")
    app(prog_name="semfs")


if __name__ == "__main__":
    main()
