"""Entities: the people, organisations, amounts, dates and identifiers the caller's files name."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.params import Query

from semfs.api.models import EntityList, EntityOut, FileEntities
from semfs.api.request import container, current_tenant, new_router, ok, readers, record_in_tenant
from semfs.domain.errors import NotFound
from semfs.domain.vocabulary import EntityKind
from semfs.pipeline.query.entities import entity_page, file_entities, list_entities

router = new_router()


@router.get("/entities", summary="The entities the files name, by kind", responses=ok(EntityList))
def entities_route(
    kind: EntityKind | None = None,
    q: Annotated[str | None, Query(max_length=200, description="Only entities whose name holds this")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> EntityList:
    """People, organisations, email addresses, phone numbers, amounts, dates and identifiers found in the
    text of the caller's files, each with how many files name it, those named in the most files first."""
    return EntityList(entities=list_entities(container(), current_tenant(), kind, q, limit, readers=readers()))


@router.get("/entity", summary="One entity: its contact, files and threads", responses=ok(EntityOut))
def entity_route(
    name: Annotated[str, Query(min_length=1, max_length=200, description="An entity id, or the entity as written")],
) -> EntityOut:
    """The entity ``name`` names (``organisation:acme``, "Acme Corp", "INV-2024-0042"): the contact it is
    linked to, the latest versions of the files that name it with where, and their mail threads."""
    try:
        page = entity_page(container(), current_tenant(), name, readers=readers())
    except NotFound as e:  # the same answer whether another tenant's files name it or none do
        raise NotFoundError("no file names this entity") from e
    return EntityOut.model_validate(page.model_dump())


@router.get("/files/<file_id>/entities", summary="The entities one file names", responses=ok(FileEntities))
def file_entities_route(file_id: str) -> FileEntities:
    record = record_in_tenant(file_id)
    return FileEntities(entities=file_entities(container(), record.tenant_id, record.file_id))
