"""The ``semfs`` command line, end to end on a temporary data dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semfs import demo
from semfs.cli import app
from tests.builders import run_cli

run = run_cli

pytestmark = pytest.mark.integration


def test_ingest_search_show_tag_rm_status(cli: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    (folder / "terms.md").write_text("# Payment terms\n\nInvoices are payable within thirty days.")
    (folder / "sub" / "empty.txt").write_bytes(b"")
    (folder / ".hidden").write_text("secret dotfile")
    out = json.loads(
        run(
            cli,
            "ingest",
            str(folder),
            "--tenant",
            "acme",
            "--thread",
            "Q3 Financials",
            "--contact",
            "Acme Corp",
            "--tag",
            "legal",
            "--json",
        )
    )
    assert out["outcomes"] == {"OK": 1, "SKIPPED_EMPTY": 1}
    table = run(cli, "ingest", str(folder), "--tenant", "acme")
    assert "UNCHANGED" in table and "2 file(s)" in table

    found = json.loads(run(cli, "search", "payable thirty days", "--tenant", "acme", "--json"))
    assert found["degraded"] is False
    (hit,) = found["results"]
    assert set(hit) >= {"file_id", "filename", "title", "summary", "score", "version", "tags", "snippets"}
    assert hit["snippets"][0]["text"] and "location" in hit["snippets"][0]
    assert {"legal", "q3-financials", "acme-corp"} <= set(hit["tags"])
    fid = hit["file_id"]
    for flags in (
        ["--thread", "Q3 Financials"],
        ["--contact", "Acme Corp"],
        ["--tag", "legal"],
        ["--mode", "keyword"],
        ["--mode", "semantic"],
        ["--mime", "text/markdown"],
        ["--since", "2000-01-01"],
    ):
        again = json.loads(run(cli, "search", "payable", "--tenant", "acme", "--json", *flags))
        assert [r["file_id"] for r in again["results"]] == [fid], flags
    assert json.loads(run(cli, "search", "payable", "--tenant", "other", "--json"))["results"] == []
    assert json.loads(run(cli, "search", "payable", "--tenant", "acme", "--json", "--thread", "Nope"))["results"] == []

    shown = json.loads(run(cli, "show", fid, "--tenant", "acme", "--json"))
    assert shown["outcome"] == "OK" and shown["thread_id"]
    assert "Payment terms" in run(cli, "show", fid, "--tenant", "acme")
    assert "tags: legal, urgent" in run(cli, "tag", fid, "+urgent", "--tenant", "acme")
    assert "tags: urgent" in run(cli, "tag", fid, "-legal", "--tenant", "acme")
    assert "v1" in run(cli, "versions", fid, "--tenant", "acme")
    status = json.loads(run(cli, "status", "--json"))
    assert {"status": "indexed", "outcome": "OK", "count": 1} in status
    assert "moved 1 version(s) to the trash" in run(cli, "rm", fid, "--tenant", "acme")
    assert json.loads(run(cli, "search", "payable", "--tenant", "acme", "--json"))["results"] == []
    assert fid in run(cli, "trash", "--tenant", "acme")
    assert "restored 1 version(s): terms.md (indexed)" in run(cli, "restore", fid, "--tenant", "acme")
    assert json.loads(run(cli, "search", "payable", "--tenant", "acme", "--json"))["results"]
    assert "erased 1 version(s) for good" in run(cli, "rm", fid, "--tenant", "acme", "--purge")
    assert "the trash is empty" in run(cli, "trash", "--tenant", "acme")
    assert "reindexed 0" in run(cli, "reindex")
    assert "nothing to resume" in run(cli, "resume")


def test_errors_are_one_line_answers(cli: CliRunner, tmp_path: Path) -> None:
    # a folder nothing was ingested with: said, and nothing is created there (before: an empty .semfs/
    # appeared wherever semfs ran, and every answer was "no results")
    for command in (["show", "f_missing"], ["search", "payable"], ["ls"], ["status"]):
        result = cli.invoke(app, command)
        assert result.exit_code == 1 and "no semfs data in" in result.output and "SEMFS_DATA_DIR" in result.output
    assert not (tmp_path / "data").exists()
    (tmp_path / "note.md").write_text("# Note\n\nPallets leave at six.")
    run(cli, "ingest", str(tmp_path / "note.md"))
    result = cli.invoke(app, ["show", "f_missing"])
    assert result.exit_code == 1 and "no file f_missing" in result.output
    result = cli.invoke(app, ["search", "x", "--mode", "fuzzy"])
    assert result.exit_code == 2 and "'fuzzy' is not one of 'hybrid', 'keyword', 'semantic'" in result.output
    assert "pydantic" not in result.output and "errors.pydantic.dev" not in result.output
    result = cli.invoke(app, ["search", ""])
    assert result.exit_code == 2 and result.output.strip() == "the query is empty: say what you are looking for"
    result = cli.invoke(app, ["search", "x", "--since", "yesterday"])
    assert result.exit_code == 2 and "--since: give a date as YYYY-MM-DD" in result.output
    result = cli.invoke(app, ["tag", "f_x", "plain"])
    assert result.exit_code == 2
    result = cli.invoke(app, ["ingest", "--previous-version", "f_nope", __file__])
    assert result.exit_code == 1


def test_versions_via_previous_version_flag(cli: CliRunner, tmp_path: Path) -> None:
    a = tmp_path / "a.md"
    a.write_text("Policy: thirty days.")
    fid = json.loads(run(cli, "ingest", str(a), "--json"))["files"][0]["file_id"]
    b = tmp_path / "b.md"
    b.write_text("Policy: forty-five days.")
    v2 = json.loads(run(cli, "ingest", str(b), "--previous-version", fid, "--json"))["files"][0]
    assert v2["version"] == 2
    assert "forty-five" in run(cli, "versions", fid)


def test_eval_on_a_tiny_beir_set(cli: CliRunner, tmp_path: Path) -> None:
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    docs = [
        {"_id": "d1", "title": "Bicycles", "text": demo.TEXT_FILES["web/vela-launch.html"]},
        {"_id": "d2", "title": "Leave", "text": demo.TEXT_FILES["handbook/employee-handbook.md"]},
    ]
    (beir / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs))
    (beir / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "electric bike battery"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "paid holiday"})
    )
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    run_file = tmp_path / "run.trec"
    out = json.loads(run(cli, "eval", str(beir), "--mode", "all", "--json", "--run-out", str(run_file)))
    assert [r["mode"] for r in out] == ["keyword", "semantic", "hybrid"]
    assert out[0]["ndcg@10"] == 1.0 and out[2]["recall@100"] == 1.0
    lines = (tmp_path / "run-hybrid.trec").read_text().splitlines()
    assert lines[0].split()[:4] == ["q1", "Q0", "d1", "1"]


def test_demo_command_is_idempotent(cli: CliRunner, tmp_path: Path) -> None:
    first = run(cli, "demo", "--dir", str(tmp_path / "demo"))
    assert f"OK {len(demo.TEXT_FILES) + len(demo.BINARY_FILES)}" in first
    assert "UNCHANGED" in run(cli, "demo", "--dir", str(tmp_path / "demo"))


def test_ingest_has_files_in_flight_at_once_and_reports_them_in_order(cli: CliRunner, tmp_path: Path) -> None:
    """`semfs ingest` keeps two files in the pipeline at once (SEMFS_INGEST_FILES_AT_ONCE): the report still
    lists them in the folder's order, a copy is still a copy whichever of the two finishes first, and piped,
    each file's line comes in that order too, once each."""
    folder = tmp_path / "docs"
    folder.mkdir()
    same = "# Parking\n\nParking permits are renewed every January at the front desk."
    for n in range(5):
        (folder / f"copy-{n}.md").write_text(same)
        (folder / f"note-{n}.md").write_text(f"# Note {n}\n\nThe meeting number {n} moved to room {n + 10}.")
    report = json.loads(run(cli, "ingest", str(folder), "--tenant", "acme", "--json"))
    assert [Path(row["path"]).name for row in report["files"]] == sorted(p.name for p in folder.iterdir())
    assert report["outcomes"] == {"OK": 6, "SKIPPED_DUPLICATE": 4}
    again = tmp_path / "again"
    again.mkdir()
    for n in range(4):
        (again / f"memo-{n}.md").write_text(f"# Memo {n}\n\nThe budget for quarter {n} is due on Friday.")
    lines = run(cli, "ingest", str(again), "--tenant", "acme").splitlines()  # CliRunner: not a terminal
    per_file = [line for line in lines if line.startswith("[")]
    assert [(line.split()[0], Path(line.split()[-1]).name) for line in per_file] == [
        (f"[{n + 1}/4]", f"memo-{n}.md") for n in range(4)
    ]


def test_ingest_eml_and_mbox_files_and_list_contacts(cli: CliRunner, tmp_path: Path) -> None:
    import mailbox

    from tests import mail_corpus as mc

    eml = tmp_path / "terms.eml"
    eml.write_bytes(mc.plain().as_bytes())
    box = mailbox.mbox(tmp_path / "archive.mbox")
    box.add(mc.nested_forward())
    box.add(mc.rfc2231_name())
    box.flush()
    out = json.loads(run(cli, "ingest", str(eml), str(tmp_path / "archive.mbox"), "--tenant", "acme", "--json"))
    names = sorted(row["path"].rsplit("#", 1)[1] for row in out["files"])
    # (each message's body says only that the files are attached: no document of its own)
    assert names == ["Zahlungsbedingungen für Q3.md", "payment-terms.md", "supply-agreement.docx"]
    assert out["outcomes"] == {"OK": 2, "SKIPPED_DUPLICATE": 1}  # the Zahlungsbedingungen bytes equal the terms
    contacts = json.loads(run(cli, "contacts", "--tenant", "acme", "--json"))
    jane = next(c for c in contacts if c["email"] == "jane.okafor@acme-corp.example")
    assert jane["files"] == 3 and jane["organisation"] == "acme-corp"
    found = json.loads(
        run(
            cli,
            "search",
            "payable",
            "--tenant",
            "acme",
            "--contact",
            "jane.okafor@acme-corp.example",
            "--source-type",
            "email_attachment",
            "--json",
        )
    )
    assert found["results"]


def test_missing_paths_and_failed_files_exit_non_zero(cli: CliRunner, tmp_path: Path) -> None:
    result = cli.invoke(app, ["ingest", str(tmp_path / "nonexistent")])
    assert result.exit_code == 1 and "no such path" in result.output
    assert "0 of 0" not in result.output and "NOT_FOUND" not in result.output  # (it printed an empty table)
    result = cli.invoke(app, ["ingest", str(tmp_path / "nonexistent"), "--json"])
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and report["exit_code"] == 1 and report["missing"] == [str(tmp_path / "nonexistent")]
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\n not really a pdf")
    result = cli.invoke(app, ["ingest", str(tmp_path / "broken.pdf")])
    assert result.exit_code == 1 and "FAILED_PARSE" in result.output
    (tmp_path / "fine.md").write_text("# Fine\n\nParking permits are renewed in January.")
    assert cli.invoke(app, ["ingest", str(tmp_path / "fine.md")]).exit_code == 0


def test_an_empty_folder_is_said_and_a_piped_ingest_reports_each_file_as_it_ends(
    cli: CliRunner, tmp_path: Path
) -> None:
    """Issue 49: ``semfs ingest EMPTY_DIR`` printed "0 of 0 file(s)" above an empty table, and a piped
    ``semfs ingest DIR > log`` wrote nothing until the last file was done."""
    empty = tmp_path / "inbox"
    empty.mkdir()
    (empty / ".DS_Store").write_text("dotfiles are skipped")
    result = cli.invoke(app, ["ingest", str(empty)])
    assert result.exit_code == 0, result.output  # an empty inbox folder is nothing to do, not a failure
    assert f"no files found in {empty}" in result.output and "0 of 0" not in result.output
    assert json.loads(cli.invoke(app, ["ingest", str(empty), "--json"]).stdout)["files"] == []
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Parking\n\nPermits are renewed every January.")
    (folder / "b.txt").write_bytes(b"")
    result = cli.invoke(app, ["ingest", str(folder)])  # the runner's stdout is no terminal: a line per file
    lines = result.output.splitlines()
    assert result.exit_code == 0, result.output
    per_file = [line for line in lines if line.startswith("[")]
    assert per_file == [f"[1/2] OK                 {folder / 'a.md'}", f"[2/2] SKIPPED_EMPTY      {folder / 'b.txt'}"]
    assert lines.index(per_file[-1]) < next(i for i, line in enumerate(lines) if "stored and searchable" in line)


def test_a_file_name_that_is_not_utf8_is_ingested_with_the_rest(cli: CliRunner, tmp_path: Path) -> None:
    """Issue 27: ``bad\\xff.txt`` in a folder ended the whole ``semfs ingest --json`` with a UnicodeEncodeError
    traceback (no JSON, the good files never ingested). Its bytes are kept in its key (as ``ls -b`` writes
    them). People read it as a legacy system wrote it (Windows-1252: issue 47.10, where a U+FFFD stood in the name
    and the title), and characters that show nothing are no part of a stored name."""
    import os

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.md").write_text("# Parking\n\nParking permits are renewed in January.")
    Path(os.fsdecode(os.fsencode(folder) + b"/bad\xff.md")).write_text("# Harbour\n\nHarbour fees rise in March.")
    result = cli.invoke(app, ["ingest", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert sorted(r["path"].rsplit("/", 1)[-1] for r in report["files"]) == ["bad\\xff.md", "good.md"]
    assert report["outcomes"] == {"OK": 2}
    (hit,) = json.loads(run(cli, "search", "harbour fees", "--mode", "keyword", "--json"))["results"]
    assert hit["filename"] == "bad\u00ff.md" and "\ufffd" not in hit["title"]
    assert "bad\u00ff.md" in run(cli, "ls")
    # the same bytes again are the same file; another undecodable byte is another document, not a version
    again = json.loads(cli.invoke(app, ["ingest", str(folder), "--json"]).stdout)
    assert again["outcomes"] == {"UNCHANGED": 2}
    Path(os.fsdecode(os.fsencode(folder) + b"/bad\xfe.md")).write_text("# Harbour\n\nHarbour fees fall in May.")
    third = json.loads(cli.invoke(app, ["ingest", str(folder), "--json"]).stdout)
    (new,) = [r for r in third["files"] if r["outcome"] != "UNCHANGED"]
    assert (new["path"].rsplit("/", 1)[-1], new["outcome"], new["version"]) == ("bad\\xfe.md", "OK", 1)
    table = cli.invoke(app, ["ingest", str(folder)])  # the table and its lines print too
    assert table.exit_code == 0 and "3 file(s)" in table.output


def test_a_file_that_cannot_be_read_is_its_own_outcome_and_the_batch_goes_on(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a-locked.md").write_text("# Locked\n\nNobody may read this.")
    (folder / "b-open.md").write_text("# Open\n\nParking permits are renewed in January.")
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "a-locked.md":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = cli.invoke(app, ["ingest", str(folder), "--json"])
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and report["outcomes"] == {"FAILED_INTERNAL": 1, "OK": 1}
    (locked,) = [r for r in report["files"] if r["outcome"] == "FAILED_INTERNAL"]
    assert locked["reason"] == "could not be read (PermissionError)"


def test_symlinks_out_of_the_tree_are_not_followed(cli: CliRunner, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tmp_path / "secret.txt").write_text("root:x:0:0:root:/root:/bin/bash")
    (tree / "passwd").symlink_to(tmp_path / "secret.txt")
    (tree / "note.md").write_text("# Note\n\nThe parking garage opens at seven.")
    (tree / "same-note.md").symlink_to(tree / "note.md")  # inside the tree: followed (a duplicate)
    report = json.loads(cli.invoke(app, ["ingest", str(tree), "--json"]).stdout)
    assert sorted(Path(r["path"]).name for r in report["files"]) == ["note.md", "same-note.md"]


def test_help_has_no_type_noise_and_explains_every_option(cli: CliRunner) -> None:
    for command in ("search", "ingest", "ls", "ask", "get"):
        text = cli.invoke(app, [command, "--help"]).output
        assert "<bool>" not in text and "╭" not in text, command
        options = [line for line in text.splitlines() if line.strip().startswith("--")]
        bare = [line for line in options if len(line.split()) < 2 and "--help" not in line]
        assert bare == [], (command, bare)
    assert cli.invoke(app, ["--version"]).output.startswith("semfs ")


def test_ls_cat_get_ask_context_keys(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Parking\n\nPermits for the staff garage are renewed every January.")
    (tmp_path / "b.md").write_text("# Holidays\n\nStaff get twenty-eight days of paid holiday a year.")
    run(cli, "ingest", str(tmp_path / "a.md"))
    (b,) = json.loads(run(cli, "ingest", str(tmp_path / "b.md"), "--json"))["files"]
    listed = json.loads(run(cli, "ls", "--json"))
    assert [r["filename"] for r in listed] == ["b.md", "a.md"]  # newest first
    assert [r["filename"] for r in json.loads(run(cli, "ls", "--sort", "name", "--json"))] == ["a.md", "b.md"]
    assert "twenty-eight days" in run(cli, "cat", b["file_id"])
    run(cli, "get", b["file_id"], "-o", str(tmp_path / "copy.md"))
    assert (tmp_path / "copy.md").read_bytes() == (tmp_path / "b.md").read_bytes()
    answer = json.loads(run(cli, "ask", "How many days of paid holiday do staff get?", "--json"))
    assert answer["status"] == "answered" and answer["citations"][0]["file_id"] == b["file_id"]
    assert "b.md v1" in run(cli, "ask", "How many days of paid holiday do staff get?")
    brief = json.loads(run(cli, "context", "--subject", "Holiday request", "--body", "How many days off?", "--json"))
    assert brief["items"][0]["file_id"] == b["file_id"]
    key = run(cli, "keys", "create", "--tenant", "acme").strip()
    (line,) = run(cli, "keys", "list").splitlines()
    assert line.endswith("acme")
    assert "revoked" in run(cli, "keys", "revoke", line.split()[0])
    assert "no API keys" in run(cli, "keys", "list") and key


def test_contacts_named_on_upload_are_listed(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Terms\n\nPayable within thirty days.")
    run(
        cli,
        "ingest",
        str(tmp_path / "a.md"),
        "--contact",
        "Acme Corp",
        "--contact",
        "Hans Becker <hans@becker.example>",
    )
    contacts = {c["name"] or c["email"]: c for c in json.loads(run(cli, "contacts", "--json"))}
    assert contacts["Acme Corp"]["files"] == 1 and contacts["Acme Corp"]["messages"] == 0
    assert contacts["Hans Becker"]["email"] == "hans@becker.example"
    # issue 49: the organisation and message columns were blank for "Acme Corp"
    assert contacts["Acme Corp"]["organisation"] == "Acme Corp" and contacts["Hans Becker"]["organisation"] == "becker"
    table = run(cli, "contacts")
    acme = next(line for line in table.splitlines() if "Acme Corp" in line)
    assert [cell.strip() for cell in acme.strip("│ ").split("│")] == ["c_acme-corp", "Acme Corp", "Acme Corp", "0", "1"]
    # and the name works as a filter
    found = json.loads(run(cli, "search", "payable", "--contact", "Hans Becker", "--json"))["results"]
    assert [r["filename"] for r in found] == ["a.md"]


FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="the shared fixtures live beside the checkout (../shared)")
def test_ingest_outlook_msg_as_mail(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """An Outlook .msg takes the .eml path: its sender becomes a contact and its body (when bodies are indexed)
    a file of that message's thread."""
    monkeypatch.setenv("SEMFS_INDEX_EMAIL_BODY", "true")
    msg = FIXTURES / "markitdown" / "files" / "test_outlook_msg.msg"
    out = json.loads(run(cli, "ingest", str(msg), "--tenant", "acme", "--json"))
    assert out["outcomes"] == {"OK": 1}, out
    contacts = json.loads(run(cli, "contacts", "--tenant", "acme", "--json"))
    assert [c["email"] for c in contacts] == ["muratcan.kurtulus@gmail.com"]
    found = json.loads(run(cli, "search", "body of the test email", "--tenant", "acme", "--json"))
    assert found["results"][0]["origin"]["subject"] == "Test Email Message"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--tag", "!!!"], "--tag: "),
        (["--source-type", "email_attachment"], "--source-type must be upload or agent_generated"),
    ],
)
def test_ingest_refuses_what_a_caller_may_not_claim_before_reading_any_file(
    cli: CliRunner, tmp_path: Path, args: list[str], said: str
) -> None:
    (tmp_path / "a.md").write_text("# A\n\nSome text.")
    result = cli.invoke(app, ["ingest", str(tmp_path / "a.md"), *args])
    assert result.exit_code == 2 and said in result.output, result.output
    assert "ingested" not in result.output


def test_what_the_cli_says_is_what_happened(cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'3 file(s) ingested' when all three were skipped; get overwrote a file of the same name; ls --tag
    'Needs Review' found nothing where search found the file; tags --suggest and an empty contacts list
    printed nothing at all."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (folder / name).write_bytes(b"")
    said = cli.invoke(app, ["ingest", str(folder)]).output
    assert "0 of 3 file(s) stored" in said and "SKIPPED_EMPTY" in said
    note = tmp_path / "note.md"
    note.write_text("# Review\n\nPallets leave at six.")
    fid = json.loads(run(cli, "ingest", str(note), "--tag", "Needs Review", "--json"))["files"][0]["file_id"]
    assert [r["file_id"] for r in json.loads(run(cli, "ls", "--tag", "Needs Review", "--json"))] == [fid]
    assert f"from {note.resolve()}" in run(cli, "ls")  # which of several note.md files this is
    other = tmp_path / "pallets.md"
    other.write_text("# Pallets\n\nPallets leave at six for review.")
    run(cli, "ingest", str(other))
    assert "pallets.md" in run(cli, "similar", fid)  # more like this: the other file
    assert [f["filename"] for f in json.loads(run(cli, "similar", fid, "--json"))] == ["pallets.md"]
    assert json.loads(run(cli, "show", fid, "--json"))["came_from"] == str(note.resolve())
    assert "no contacts in tenant 'default'" in run(cli, "contacts")
    assert "no tags that look like the same tag" in run(cli, "tags", "--suggest")
    work = tmp_path / "work"
    work.mkdir()
    (work / "note.md").write_text("my own edits")
    monkeypatch.chdir(work)
    result = cli.invoke(app, ["get", fid])
    assert result.exit_code == 1 and "exists: not replaced" in result.output
    assert (work / "note.md").read_text() == "my own edits"
    assert "wrote" in cli.invoke(app, ["get", fid, "--force"]).output
    assert (work / "note.md").read_text().startswith("# Review")


def test_search_with_nothing_relevant_says_so_and_exits_0(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the hash embedder has no calibration of its own; one configured for it (as a team would for a remote
    # model, SEMFS_RELEVANCE_CALIBRATIONS) puts its floor to work
    monkeypatch.setenv(
        "SEMFS_RELEVANCE_CALIBRATIONS", '{"hash-384": {"intercept": -6, "cosine": 6, "coverage": 6, "floor": 0.05}}'
    )
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "terms.md").write_text("# Payment terms\n\nInvoices are payable within thirty days.")
    run(cli, "ingest", str(folder))
    found = json.loads(run(cli, "search", "payable thirty days", "--json"))
    (hit,) = found["results"]
    assert 0.05 <= hit["relevance"] <= 1 and hit["weak"] is False
    # before: a query sharing nothing with any file still listed them, the first at score 0.5
    nothing = run(cli, "search", "zzqqxx nonexistentword")
    assert nothing.startswith("no results: nothing here is about the query"), nothing
    as_json = json.loads(run(cli, "search", "zzqqxx nonexistentword", "--json"))
    assert as_json["results"] == [] and as_json["left_out"] == 1 and "about the query" in as_json["note"]


def test_notes_and_history_from_the_command_line(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "terms.md").write_text("# Payment terms\n\nInvoices are payable within thirty days.")
    fid = json.loads(run(cli, "ingest", str(tmp_path / "terms.md"), "--json"))["files"][0]["file_id"]
    listed = run(cli, "note", fid, "Checked with finance: the airship surcharge applies")
    assert "airship surcharge" in listed and listed.startswith("n_")
    found = json.loads(run(cli, "search", "airship surcharge", "--mode", "keyword", "--json"))
    assert [r["file_id"] for r in found["results"]] == [fid]
    assert "note: Checked with finance" in run(cli, "show", fid)
    run(cli, "tag", fid, "+finance")
    entries = json.loads(run(cli, "history", fid, "--json"))
    assert [e["action"] for e in entries] == ["tagged", "noted", "processed", "received"]  # newest first, as the page
    assert "noted" in run(cli, "history", fid)
    note_id = listed.split()[0]
    assert run(cli, "note", fid, "--remove", note_id).strip() == "no notes"
    result = cli.invoke(app, ["note", fid, "   "])
    assert result.exit_code != 0 and "a note needs some text" in result.output
    result = cli.invoke(app, ["note", fid, "--remove", "n_nope"])
    assert result.exit_code != 0 and "no such note" in result.output


def test_ls_opens_a_saved_view(cli: CliRunner, tmp_path: Path) -> None:
    """A view saved on the web page (here straight into the store, as PUT /views does) lists from the CLI."""
    from semfs.bootstrap import build_container
    from semfs.config import Settings
    from semfs.domain.models import SavedView

    (tmp_path / "a.md").write_text("# Alpha\n\nAlpha notes.")
    (tmp_path / "b.md").write_text("# Beta\n\nBeta notes.")
    run(cli, "ingest", str(tmp_path / "a.md"), "--tag", "keep")
    run(cli, "ingest", str(tmp_path / "b.md"))
    c = build_container(Settings())
    c.views.save("default", SavedView(name="Kept files", params={"tag": "keep", "sort": "name"}))
    c.close()
    listed = run(cli, "ls", "--view", "kept files")
    assert "a.md" in listed and "b.md" not in listed
    result = cli.invoke(app, ["ls", "--view", "Nope"])
    assert result.exit_code == 2 and "no saved view 'Nope' (saved: Kept files)" in result.output


def test_an_answer_in_the_terminal_keeps_what_was_taken_out_and_file_names(cli: CliRunner, tmp_path: Path) -> None:
    """Issue 51.2: the answer is printed as text. Before, rich read "[link removed]" as a style and dropped
    it, so words vanished without a trace; and file names that look like hosts were taken out as links."""
    (tmp_path / "vpn.md").write_text(
        "# VPN notice\n\nTo reset your VPN password visit paypal-secure.de/reset and then edit /etc/login.defs "
        "as root.\n\nThe VPN password must be changed every ninety days."
    )
    run(cli, "ingest", str(tmp_path / "vpn.md"))
    shown = run(cli, "ask", "How do I reset my VPN password?")
    assert "[link removed]" in shown and "paypal" not in shown.split("“")[0]
    assert "/etc/login.defs" in shown.split("“")[0]


def test_files_whose_order_decides_their_versions_go_in_the_order_given(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two files in flight, the one registered first became the next version whichever was named first:
    ``semfs ingest a b --previous-version F`` made b version 2 and a version 3 when a was slower to read. Where
    order makes versions (``--previous-version``, mail threads), files go one at a time, in the order given. The
    first draft's reading is slowed here so that it would lose any race."""
    import time

    import semfs.cli.files as files

    read = files._ingest_one

    def slow_first(c: object, tenant: str, path: Path, prov: object) -> object:
        if path.parent.name == "draft-1":
            time.sleep(1)
        return read(c, tenant, path, prov)  # type: ignore[arg-type]

    (tmp_path / "terms.md").write_text("# Payment terms\n\nPay each invoice within 10 days.")
    first = json.loads(run(cli, "ingest", str(tmp_path / "terms.md"), "--tenant", "acme", "--json"))
    monkeypatch.setattr(files, "_ingest_one", slow_first)
    for n in (1, 2):
        (tmp_path / f"draft-{n}").mkdir()
        (tmp_path / f"draft-{n}" / "terms.md").write_text(f"# Payment terms\n\nPay each invoice within {15 * n} days.")
    paths = [str(tmp_path / f"draft-{n}" / "terms.md") for n in (1, 2)]
    after = first["files"][0]["file_id"]
    report = json.loads(run(cli, "ingest", *paths, "--previous-version", after, "--tenant", "acme", "--json"))
    assert [(Path(r["path"]).parent.name, r["version"]) for r in report["files"]] == [("draft-1", 2), ("draft-2", 3)]
