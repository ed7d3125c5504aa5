"""The API's routes, one Powertools ``Router`` per area, joined by ``api/app.py`` with ``include_router``."""

from __future__ import annotations

from semfs.api.routes import entities, files, links, mail, ops, people, search, tags, upload

# in the order a request is matched: /files/facets before /files/<file_id>
ROUTERS = [
    ops.router,
    search.router,
    entities.router,
    links.router,
    people.router,
    mail.router,
    files.router,
    upload.router,
    tags.router,
]
