"""The tag vocabulary, merge suggestions and merges."""

from __future__ import annotations

from semfs.api.models import (
    MergeOut,
    SuggestionsOut,
    TagMerge,
    TagsOut,
)
from semfs.api.request import admin_only, container, current_tenant, new_router, ok, readers

router = new_router()


@router.get("/tags", summary="The tag vocabulary with counts", responses=ok(TagsOut))
def tags() -> TagsOut:
    from semfs.pipeline.catalogue.tags import vocabulary

    stats = vocabulary(container(), current_tenant(), readers())
    return TagsOut.model_validate({"tags": [{"tag": t.tag, "manual": t.manual, "auto": t.auto} for t in stats]})


@router.get(
    "/tags/suggestions", summary="Tags that probably mean the same, with evidence", responses=ok(SuggestionsOut)
)
def tag_suggestions() -> SuggestionsOut:
    from semfs.pipeline.catalogue.tags import suggest_merges

    return SuggestionsOut(suggestions=suggest_merges(container(), current_tenant(), readers=readers()))


@router.post("/tags/merge", summary="Merge one tag into another", responses=ok(MergeOut))
def tag_merge(request: TagMerge) -> MergeOut:
    from semfs.pipeline.catalogue.tags import merge

    admin_only()  # a merge renames the tag on every file, those the caller cannot see included
    changed = merge(container(), current_tenant(), request.merge, request.into)
    return MergeOut(merged=request.merge, into=request.into, files=changed)
