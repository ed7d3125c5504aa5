"""Pure domain code: ids, tags, RRF, grouping, change summaries, text helpers."""

from __future__ import annotations

import pytest

from semfs.domain.changes import change_summary
from semfs.domain.errors import FileRejected, PermanentError, RetryableError, family_name
from semfs.domain.ids import chunk_id, execution_name, file_id_for, normalise_filename
from semfs.domain.models import IndexHit
from semfs.domain.outcomes import Outcome, Status
from semfs.domain.ranking import bm25, file_scores, fuse_files, group_by_file, min_max, overfetch, rrf
from semfs.domain.tags import is_valid_tag, merge_tags, slugify
from semfs.domain.text import query_terms, sentences

pytestmark = pytest.mark.unit


def test_file_id_is_deterministic_and_identity_sensitive() -> None:
    a = file_id_for("acme", "upload", "report.pdf", "ab" * 32)
    assert a == file_id_for("acme", "upload", "report.pdf", "ab" * 32)
    assert a != file_id_for("other", "upload", "report.pdf", "ab" * 32)
    assert a != file_id_for("acme", "upload", "report.pdf", "cd" * 32)
    assert chunk_id(a, 3) == f"{a}:3"


def test_execution_name_fits_step_functions_rules() -> None:
    name = execution_name("acme", "f_" + "x" * 24)
    assert len(name) <= 80
    assert all(ch.isalnum() or ch in "-_" for ch in name)


def test_normalise_filename_folds_only_cosmetics() -> None:
    assert normalise_filename("  Contract  FINAL.docx ") == "contract final.docx"
    assert normalise_filename("ｃｏｎｔｒａｃｔ.docx") == "contract.docx"  # NFKC folds full-width


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Q3 Financials", "q3-financials"),
        ("Acme Corp.", "acme-corp"),
        ("  Café — Déjà vu ", "cafe-deja-vu"),
        ("!!!", ""),
        ("a" * 80, ""),  # one overlong word: no tag rather than a cut one
        ("Invoice 2291 and pallet manifest for November shipment", "invoice-2291-and-pallet-manifest-for-november"),
    ],
)
def test_slugify(text: str, slug: str) -> None:
    assert slugify(text) == slug
    assert slug == "" or is_valid_tag(slug)


def test_merge_tags_keeps_order_and_drops_duplicates() -> None:
    assert merge_tags(["Q3 Financials", "acme corp"], ["q3-financials", "", "Invoices"]) == [
        "q3-financials",
        "acme-corp",
        "invoices",
    ]


def _hits(*ids: str) -> list[IndexHit]:
    return [IndexHit(chunk_id=i, file_id=i.split(":")[0], score=0.0) for i in ids]


def test_rrf_scores_are_sum_of_reciprocal_ranks() -> None:
    fused = rrf([_hits("a:0", "b:0", "c:0"), _hits("b:0", "c:0", "d:0")], k=60)
    scores = {h.chunk_id: h.score for h in fused}
    assert fused[0].chunk_id == "b:0"
    assert scores["b:0"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a:0"] == pytest.approx(1 / 61)
    assert scores["d:0"] == pytest.approx(1 / 63)
    assert [h.chunk_id for h in fused] == ["b:0", "c:0", "a:0", "d:0"]


def test_group_by_file_scores_a_file_by_its_best_chunk() -> None:
    hits = [
        IndexHit(chunk_id="f1:0", file_id="f1", score=0.5),
        IndexHit(chunk_id="f2:0", file_id="f2", score=0.4),
        IndexHit(chunk_id="f1:1", file_id="f1", score=0.3),
    ]
    groups = group_by_file(hits)
    assert [(f, s, [h.chunk_id for h in hs]) for f, s, hs in groups] == [
        ("f1", 0.5, ["f1:0", "f1:1"]),
        ("f2", 0.4, ["f2:0"]),
    ]


def test_files_are_fused_per_file_so_a_card_adds_to_its_files_chunks() -> None:
    """k-NN ranks the contract's chunk first, BM25 the handbook's chunk; the handbook's card also
    matched. Per chunk the two chunks tie (1/61 + 1/62 each); per file the card's rank adds to its file."""
    knn = _hits("contract:5", "handbook:2")
    chunks = _hits("handbook:2", "contract:5")
    cards = _hits("handbook:card")
    files = fuse_files([knn, chunks, cards], "rrf", k=60)
    assert [f for f, _, _ in files] == ["handbook", "contract"]
    assert files[0][1] == pytest.approx(1 / 62 + 1 / 61 + 1 / 61)
    assert [h.chunk_id for h in files[0][2]] == ["handbook:2", "handbook:card"]  # the chunk is the snippet


def test_min_max_follows_opensearchs_normalization_processor() -> None:
    """OpenSearch's min_max: (s - min) / (max - min), the minimum floored at 0.001 so it still counts,
    and 1.0 for a leg whose scores are all equal; arithmetic_mean then weighs legs, a miss counting 0."""
    assert min_max([10.0, 6.0, 2.0]) == [1.0, 0.5, 0.001]
    assert min_max([3.0]) == [1.0] and min_max([2.0, 2.0]) == [1.0, 1.0]
    bm25 = [IndexHit(chunk_id=f"{f}:0", file_id=f, score=s) for f, s in (("a", 10.0), ("b", 6.0), ("c", 2.0))]
    knn = [IndexHit(chunk_id=f"{f}:0", file_id=f, score=s) for f, s in (("c", 0.9), ("a", 0.5))]
    scores = file_scores([bm25, knn], "minmax", weights=[0.3, 0.7])
    assert scores["a"] == pytest.approx(0.3 * 1.0 + 0.7 * 0.001)
    assert scores["b"] == pytest.approx(0.3 * 0.5)
    assert scores["c"] == pytest.approx(0.3 * 0.001 + 0.7 * 1.0)
    assert [f for f, _, _ in fuse_files([bm25, knn], "minmax", weights=[0.3, 0.7])] == ["c", "a", "b"]


def test_overfetch_bounds() -> None:
    assert overfetch(1) == 50
    assert overfetch(20) == 100
    assert overfetch(100) == 256


def test_change_summary_reports_added_removed_changed_lines() -> None:
    old = "Parties: Northwind and Acme\nPayment within 30 days\nTermination: 90 days notice"
    new = "Parties: Northwind and Acme\nPayment within 45 days\nTermination: 90 days notice\nQuality: ISO 4210"
    summary = change_summary(old, new)
    assert summary.startswith("1 line(s) added, 0 removed, 1 changed.")
    assert "30 days" in summary and "45 days" in summary
    assert 'Added: "Quality: ISO 4210"' in summary
    assert change_summary(old, old) == "No text changes."
    assert "removed" in change_summary(new, old) and "1 removed" in change_summary(new, old)


def test_change_summary_ignores_rewrapping() -> None:
    assert change_summary("a  b\n\nc", "a b\nc") == "No text changes."


def test_error_families_carry_outcomes_and_survive_pickling() -> None:
    import pickle

    err = FileRejected("too big", outcome=Outcome.REJECTED_TOO_LARGE)
    assert family_name(err) == "PermanentError"
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, FileRejected) and again.outcome is Outcome.REJECTED_TOO_LARGE
    assert family_name(RetryableError("x")) == "RetryableError"
    assert family_name(PermanentError("x")) == "PermanentError"
    assert family_name(KeyError("x")) == "KeyError"


def test_every_outcome_maps_to_one_terminal_status() -> None:
    for outcome in Outcome:
        assert outcome.final_status.terminal
    assert Outcome.OK_PARTIAL.final_status is Status.INDEXED
    assert Outcome.SKIPPED_DUPLICATE.final_status is Status.SKIPPED
    assert Outcome.REJECTED_ARCHIVE_BOMB.final_status is Status.SKIPPED
    assert Outcome.FAILED_PARSE.final_status is Status.FAILED


def test_sentences_and_query_terms() -> None:
    assert sentences("First one. Second one! Third?") == ["First one.", "Second one!", "Third?"]
    assert query_terms("What are the payment terms?") == ["payment", "terms"]
    assert query_terms("the of") == ["the", "of"]


def test_generic_words_are_no_tags() -> None:
    from semfs.domain.tags import is_generic

    assert all(is_generic(t) for t in ["days", "unit", "type", "version", "args", "build", "build-type", "2026"])
    assert not any(is_generic(t) for t in ["invoice", "python-version", "e-bike", "acme-corp"])


def test_a_tag_reads_as_words() -> None:
    """Tags judged by hand on 30 files of /usr/share/doc and /usr/share/man (issue 30): a signature's
    base64, an option list's fragments and calendar words were tags."""
    from semfs.domain.tags import is_generic, is_word_like

    assert not any(is_word_like(t) for t in ["fbjxssrern05kpbcrrfzou4r3dcgqf", "1v-h-1p", "a-b-c9"])
    assert all(is_word_like(t) for t in ["tlsv1", "card32", "git-push", "sha256", "e-bike", "q3-financials"])
    assert all(is_generic(t) for t in ["november", "returns", "fixed", "void", "currently"])
    assert not any(is_generic(t) for t in ["return-code", "git-push", "setgid-bit"])


def test_a_title_made_of_the_file_name_gives_no_tags() -> None:
    """A release note titled from its path ("Doc git RelNotes 1.7.9.1") tagged every one of them
    ``doc-git-relnotes``: the path is not what the text is about. A title the text gives still counts."""
    from semfs.adapters.local.extractive_enricher import enrich_extractively
    from semfs.domain.models import Block, ExtractedDocument
    from semfs.ports import EnrichInput

    body = "git push now refuses a stale branch. git merge records the merged tag. git push reports progress."
    doc = ExtractedDocument(blocks=[Block(kind="paragraph", text=body)])
    named = enrich_extractively(EnrichInput(filename="doc__git__RelNotes__1.7.9.1.txt", document=doc))
    assert named.title == "Doc git RelNotes 1.7.9.1"
    assert not any(part in tag for tag in named.auto_tags for part in ("doc", "relnotes")), named.auto_tags
    assert "git-push" in named.auto_tags
    titled = ExtractedDocument(blocks=[Block(kind="heading", text="Submodule fixes", level=1), *doc.blocks])
    own = enrich_extractively(EnrichInput(filename="notes.txt", document=titled))
    assert own.title == "Submodule fixes" and "submodule-fixes" in own.auto_tags


def test_request_errors_are_a_family_of_their_own_with_a_status_each() -> None:
    """A caller's request that cannot be done is no file's outcome: each leaf has its own request
    outcome and HTTP status (a 4xx; 503 for a feature switched off), and none of them is a family the
    state machine retries or fails a file for."""
    from semfs.domain import errors
    from semfs.domain.outcomes import RequestOutcome

    leaves = [errors.NotFound, errors.Conflict, errors.InvalidRequest, errors.Busy, errors.Disabled]
    assert all(issubclass(leaf, errors.RequestError) for leaf in leaves)
    assert sorted(leaf.request_outcome for leaf in leaves) == sorted(RequestOutcome)  # one each, all used
    assert all(400 <= leaf.http_status < 500 for leaf in leaves if leaf is not errors.Disabled)
    assert errors.Disabled.http_status == 503
    assert len({leaf.http_status for leaf in leaves}) == len(leaves)
    assert not any(issubclass(leaf, (RetryableError, PermanentError)) for leaf in leaves)
    assert family_name(errors.Conflict("x")) == "Conflict"  # the ASL catches it as nothing it retries


@pytest.mark.parametrize(
    ("filename", "title"),
    [
        ("Apache-2.0", "Apache 2.0"),  # no extension: '.0' is the version's (was 'Apache 2')
        ("LGPL-2.1", "LGPL 2.1"),
        ("GFDL-1.2", "GFDL 1.2"),
        ("MPL-1.1.txt", "MPL 1.1"),
        ("report_v2.3_final.pdf", "Report v2.3 final"),
        ("notes", "Notes"),
    ],
)
def test_a_title_from_the_file_name_keeps_its_version(filename: str, title: str) -> None:
    from semfs.domain.text import title_from_filename

    assert title_from_filename(filename) == title


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        (b"caf\xe9 menu.txt", "café menu.txt"),  # a Windows-1252 name, not "caf\ufffd menu.txt"
        (b"Stra\xdfe.pdf", "Straße.pdf"),
        ("in\u200dvoice.pdf".encode(), "invoice.pdf"),  # issue 47.10: U+200D stayed in stored names
        ("invoice\u202efdp.exe".encode(), "invoicefdp.exe"),  # a bidi override spoofs the extension
        ("\ufeffreport.docx".encode(), "report.docx"),
        ("\u0645\u06cc\u200c\u062e\u0648\u0627\u0645.txt".encode(), "\u0645\u06cc\u200c\u062e\u0648\u0627\u0645.txt"),
        ("\u4f60\u597d.txt".encode(), "\u4f60\u597d.txt"),
    ],
)
def test_names_are_stored_as_people_read_them(given: bytes, stored: str) -> None:
    import os

    from semfs.domain.text import readable_name, title_from_filename

    assert readable_name(os.fsdecode(given)) == stored
    assert "\ufffd" not in title_from_filename(readable_name(os.fsdecode(given)))


@pytest.mark.parametrize(
    "kept",
    ["/etc/login.defs", "gpg-agent.service", "tmp.XXXXXXXXXX", "setup.cfg.orig", "ssh_config.d", "dpkg.log.1"],
)
def test_an_answer_keeps_file_names_that_look_like_hosts(kept: str) -> None:
    """Issue 51.2: a host's last label is a top-level domain (the Public Suffix List, or a reserved one); a
    file name is not a link, and the answer that was the file name (mktemp's template) survives."""
    from semfs.domain.enrichment import checked_answer

    assert checked_answer(f"The answer is {kept} on Debian.") == f"The answer is {kept} on Debian."


@pytest.mark.parametrize(
    "link", ["evil.com", "paypal-secure.de/reset", "login.example", "xn--80ak6aa92e.xn--p1ai", "bank.co.uk", "a@b.io"]
)
def test_an_answer_still_loses_hosts_and_addresses(link: str) -> None:
    from semfs.domain.enrichment import checked_answer

    assert checked_answer(f"Go to {link} now.") == "Go to [link removed] now."


@pytest.mark.parametrize(
    ("first_line", "title"),
    [
        ("#!/bin/sh", None),
        ("2.1.3", None),
        ("v10.4-1", None),
        ("/usr/share/doc/gzip/README", None),
        ("~/.bashrc", None),
        ("Release notes for 2.1.3", "Release notes for 2.1.3"),
        ("Installing on GNU/Linux", "Installing on GNU/Linux"),
    ],
)
def test_a_title_is_never_an_interpreter_line_a_version_or_a_path(first_line: str, title: str | None) -> None:
    """Issue 51.3: held-out files were titled "#!/bin/sh" and "2.1.3" (their first line or heading)."""
    from semfs.extractors.text import extract_plain

    doc = extract_plain(f"{first_line}\n\nThe rest of the file says what it is about, in a sentence or two.")
    assert doc.title == title


def test_bm25_weighs_a_rare_word_above_a_common_one_and_saturates_with_repetition() -> None:
    rare, common = bm25(1, 1, 100, 50, 50.0), bm25(1, 60, 100, 50, 50.0)
    assert rare > common > 0
    assert bm25(2, 1, 100, 50, 50.0) > rare
    assert bm25(40, 1, 100, 50, 50.0) < (1.2 + 1) * bm25(1, 1, 100, 50, 50.0) * 1.01  # tf saturates at (k1 + 1)
    assert bm25(1, 1, 100, 200, 50.0) < rare  # a long field weighs one occurrence less
    assert bm25(0, 1, 100, 50, 50.0) == 0.0 == bm25(1, 0, 0, 50, 50.0)


CHANGELOG = """pallet-tools (2.4-1) unstable; urgency=medium

  * New upstream release: depot transfers are logged (Closes: #1009168)
  * Pallet manifests list their depot twice, closes 30537
  * Fix the depot transfer log, Closes bug 15178.

 -- Bdale Garbee <bdale@example.org>  Wed, 26 Oct 2022 10:00:00 -0600

pallet-tools (2.3-2) experimental; urgency=low

  * Depot transfer fixes for pallet manifests.

 -- Bdale Garbee <bdale@example.org>  Sat, 01 Jan 2022 10:00:00 -0600
"""


def test_a_changelog_is_titled_by_its_package_and_tagged_by_what_changed() -> None:
    """Issue 51.3: Debian changelogs were titled by their latest entry's header ("gzip (1.12-1) sid;
    urgency=high") and tagged with release metadata: unstable, urgency-medium, closes, garbee-wed."""
    from semfs.adapters.local.extractive_enricher import enrich_extractively
    from semfs.extractors.text import extract_plain
    from semfs.ports import EnrichInput

    got = enrich_extractively(EnrichInput(filename="changelog.Debian", document=extract_plain(CHANGELOG)))
    assert got.title == "pallet-tools changelog"
    release = {"unstable", "experimental", "urgency", "closes", "medium", "low", "wed", "sat", "bug"}
    assert not [t for t in got.auto_tags if set(t.split("-")) & release or t[0].isdigit()], got.auto_tags
    assert {"depot-transfer", "pallet-manifests"} & set(got.auto_tags), got.auto_tags


def test_a_bare_readme_or_copyright_says_whose_it_is() -> None:
    """Issue 51.3: "files like this" listed five files titled "Copyright"; a folder holds one of each."""
    from semfs.adapters.local.extractive_enricher import enrich_extractively
    from semfs.domain.models import Block, ExtractedDocument
    from semfs.extractors.text import extract_plain
    from semfs.ports import EnrichInput

    body = ExtractedDocument(blocks=[Block(kind="paragraph", text="Permission is granted to copy this file.")])
    from_folder = EnrichInput(filename="copyright", document=body, came_from="/usr/share/doc/gzip/copyright")
    assert enrich_extractively(from_folder).title == "gzip Copyright"
    dep5 = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: tar\n\n"
    alone = EnrichInput(filename="copyright", document=extract_plain(dep5 + "Files: *\nLicense: GPL-3+\n"))
    assert enrich_extractively(alone).title == "tar Copyright"
    unknown = EnrichInput(filename="README", document=body)
    assert enrich_extractively(unknown).title == "README"  # nothing says whose: left as it is


def test_a_number_never_leads_a_tag() -> None:
    """gzip's copyright file was tagged ``1992-1993-jean-loup-gailly`` and ``1999-2022-free-software``."""
    from semfs.adapters.local.extractive_enricher import _phrase_counts

    text = "Copyright 1992-1993 Jean-loup Gailly\nCopyright 1999-2022 Free Software Foundation\n" * 3
    assert not [p for p in _phrase_counts(text) if p[0].isdigit()]
    assert "free software foundation" in _phrase_counts(text)


def test_an_option_question_needs_a_passage_that_says_the_option() -> None:
    """Issue 51.2: a question about an option no page has was answered from sentences sharing its other
    words ("What does the --sing-along option of curl do?" got curl's remarks on options)."""
    from datetime import UTC, datetime

    from semfs.adapters.local.hash_embedder import HashEmbedder
    from semfs.domain.models import IndexDoc
    from semfs.pipeline.query.answerers import ExtractiveAnswerer, literals

    assert literals("What does the --keep option (or -k) of gzip do, by e-mail?") == ["--keep", "-k"]
    text = "Normally curl uses a default file, so this option is typically used to alter that default file."
    doc = IndexDoc(
        chunk_id="c1", file_id="f1", lineage_id="f1", tenant_id="t", version=1, is_latest=True,
        source_type="upload", mime_type="text/troff", filename="curl.1", title="curl", text=text,
        created_at=datetime.now(UTC),
    )  # fmt: skip
    said = ExtractiveAnswerer(HashEmbedder()).answer("What does the --sing-along option of curl do?", "", [doc])
    assert said == "no passage in scope mentions --sing-along"
