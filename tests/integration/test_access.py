"""Who may see what inside a tenant (``domain/access.py``), through the real HTTP host and the MCP server:
users and groups, mail delivered to a person, to a list and Bcc'd, uploads shared with a group, and a
second tenant beside them. A file a caller may not read is never named, quoted or counted by any route a
caller reaches; asking for it by id is the same 404 as asking for an id that does not exist."""

from __future__ import annotations

import asyncio
import json
import os
import random
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from email.message import EmailMessage
from typing import Any

import pytest

from semfs.domain.access import Access
from semfs.domain.models import SearchFilters, SearchRequest
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.mail import ingest_mail
from semfs.pipeline.intake.register import Provenance
from semfs.pipeline.principals import add_group, add_user, principal_for
from semfs.pipeline.query.search import search
from semfs.ports import Container
from semfs.server import ApiKeys, start_http

pytestmark = pytest.mark.integration
T = "acme"
# each file's secret word: whoever may not read the file must never see it in any answer
SECRETS = {
    "hr": "zanzibarsalary",  # an upload of bob's, shared with group hr
    "dana": "quokkaloan",  # an upload of dana's, private
    "cy_mail": "marmotinvoice",  # mail to cy alone
    "list_mail": "ocelotbudget",  # mail to the hr list address
    "bcc_mail": "pangolinoffer",  # mail to an outsider, Bcc'd to dana (the envelope says so)
    "other_tenant": "narwhalsecret",  # tenant globex's file
}
PUBLIC = "kitchen rota"  # a file everyone in acme reads


def _mail(to: str, subject: str, word: str, cc: str = "") -> bytes:
    m = EmailMessage()
    m["From"] = "Supplier <sales@supplier.test>"
    m["To"] = to
    if cc:
        m["Cc"] = cc
    m["Subject"] = subject
    m["Message-ID"] = f"<{word}@supplier.test>"
    m.set_content(f"Please see the attached note about {word}.")
    text = f"Details of {word}: the amount is 4,200 EUR, due on 30 June."
    m.add_attachment(text.encode(), "text", "plain", filename=f"{word}.txt")
    return bytes(m)


@dataclass
class Acme:
    url: str
    keys: dict[str, str]
    ids: dict[str, str]  # secret's name → file id (the attachment's, for mail)
    c: Container


@pytest.fixture
def acme(container: Container) -> Iterator[Acme]:
    c = container
    add_user(c, T, "ann", role="admin", addresses=["ann@acme.test"])
    add_user(c, T, "bob", groups=["hr"], addresses=["bob@acme.test"])
    add_user(c, T, "cy", addresses=["cy@acme.test"])
    add_user(c, T, "dana", addresses=["dana@acme.test"])
    add_user(c, T, "eve", groups=["hr"], addresses=["eve@acme.test"])
    add_group(c, T, "hr", addresses=["hr-list@acme.test"])
    add_group(c, T, "sales")
    add_group(c, T, "board", addresses=["board@acme.test"])  # a third group: nobody in it, nothing shared with it

    def upload(name: str, text: str, access: Access) -> str:
        prov = replace(Provenance.from_caller(), access=access)
        return ingest_bytes(c, T, text.encode(), name, prov).record.file_id

    hr, own, everyone = Access("bob", ("u:bob", "g:hr")), Access("dana", ("u:dana",)), Access("ann", ("tenant",))
    ids = {
        "hr": upload("salaries.txt", f"Salary bands {SECRETS['hr']}: senior 91,000 EUR.", hr),
        "dana": upload("loan.txt", f"My private loan {SECRETS['dana']} of 4,200 EUR.", own),
        "public": upload("kitchen.txt", f"The {PUBLIC}: cleaned every Friday by facilities.", everyone),
    }
    for key, to, delivered in (
        ("cy_mail", "cy@acme.test", None),
        ("list_mail", "hr-list@acme.test", None),
        ("bcc_mail", "someone@elsewhere.test", ["dana@acme.test"]),
    ):
        word = SECRETS[key]
        result = ingest_mail(c, T, _mail(to, f"About {word}", word), recipients=delivered)
        ids[key] = next(f.record.file_id for f in result.files if f.record.filename == f"{word}.txt")
    other = f"Globex {SECRETS['other_tenant']} 4,200 EUR.".encode()
    ids["other_tenant"] = ingest_bytes(c, "globex", other, "g.txt").record.file_id
    api_keys = ApiKeys(c.settings.api_keys_file)
    keys = {u: api_keys.create(T, u) for u in ("ann", "bob", "cy", "dana", "eve")}
    keys["cy-agent"] = api_keys.create(T, "cy", "helper")
    keys["globex"] = api_keys.create("globex")
    server = start_http(c, api_keys, "127.0.0.1", 0)
    try:
        yield Acme(f"http://127.0.0.1:{server.port}", keys, ids, c)
    finally:
        server.shutdown()


# who reads what: (user → the secrets they may see)
MAY_SEE = {
    "ann": {"hr", "dana", "cy_mail", "list_mail", "bcc_mail"},  # the admin
    "bob": {"hr", "list_mail"},
    "eve": {"hr", "list_mail"},
    "cy": {"cy_mail"},
    "cy-agent": {"cy_mail"},  # an agent acting for cy sees what cy sees, never more
    "dana": {"dana", "bcc_mail"},
}


def _call(host: Acme, who: str, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(host.url + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {host.keys[who]}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _reads(host: Acme, file_id: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    return [
        ("GET", f"/files/{file_id}", None),
        ("GET", f"/files/{file_id}/text", None),
        ("GET", f"/files/{file_id}/download", None),
        ("GET", f"/files/{file_id}/versions", None),
        ("GET", f"/files/{file_id}/history", None),
        ("GET", f"/files/{file_id}/entities", None),
        ("POST", "/ask", {"question": "what is the amount and when is it due?", "file_id": file_id}),
    ]


LISTINGS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/files?limit=200", None),
    ("GET", "/files?limit=200&include_history=true&listing=all", None),
    ("GET", "/files/facets?top=500", None),
    ("GET", "/entities?limit=500", None),
    ("GET", "/entity?name=4%2C200%20EUR", None),
    ("GET", "/trash", None),
    ("GET", "/tags", None),
    ("GET", "/tags/suggestions", None),
    ("GET", "/jobs", None),
    ("GET", "/views", None),
    *[
        ("POST", "/search", {"query": f"{w} amount due", "limit": 50, "mode": m})
        for w in SECRETS.values()
        for m in ("hybrid", "keyword")
    ],
    ("POST", "/search", {"query": "amount due in June EUR", "limit": 50, "mode": "semantic"}),
    ("POST", "/ask", {"question": "what is the amount due on 30 June?"}),
    ("POST", "/context", {"subject": "Invoice 4,200 EUR", "body": "Which amount is due on 30 June?", "limit": 20}),
]


def test_no_route_shows_a_user_a_file_they_may_not_read(acme: Acme) -> None:
    seen_any = set()
    for who, allowed in MAY_SEE.items():
        hidden = set(SECRETS) - allowed
        for method, path, body in LISTINGS:
            status, text = _call(acme, who, method, path, body)
            assert status in (200, 404), (who, path, status, text[:300])
            leaked = {k for k in hidden if SECRETS[k] in text or acme.ids[k] in text}
            assert not leaked, (who, path, leaked)
            seen_any |= {k for k in allowed if SECRETS[k] in text}
        for key in hidden:
            for method, path, body in _reads(acme, acme.ids[key]):
                status, text = _call(acme, who, method, path, body)
                nothing = _call(acme, who, method, path.replace(acme.ids[key], "f_000000000000000000000000"), body)
                assert (status, text) == nothing, (who, key, path)  # the same as a file that does not exist
                assert SECRETS[key] not in text
        for key in allowed:
            status, text = _call(acme, who, "GET", f"/files/{acme.ids[key]}/text")
            assert status == 200 and SECRETS[key] in text, (who, key)
    assert seen_any == set(SECRETS) - {"other_tenant"}  # the checks above had something to find


def test_mail_is_read_by_whom_it_was_delivered_to(acme: Acme) -> None:
    """To: the addressee; a list address: its group; a Bcc: the envelope's recipient alone; and what a
    message brings shares its access: the body and every attachment."""
    readers = {k: acme.c.repo.get(T, acme.ids[k]).readers for k in ("cy_mail", "list_mail", "bcc_mail")}
    assert readers == {"cy_mail": ["u:cy"], "list_mail": ["g:hr"], "bcc_mail": ["u:dana"]}
    body_and_attachments = [
        r for r in acme.c.repo.query(_all()) if r.source_message_id == "<marmotinvoice@supplier.test>"
    ]
    assert len(body_and_attachments) >= 1 and all(r.readers == ["u:cy"] for r in body_and_attachments)


def _all() -> Any:
    from semfs.ports.repository import RecordQuery

    return RecordQuery(tenant_id=T, limit=1000)


def test_sharing_a_file_lets_a_user_find_it_and_revoking_takes_it_away(acme: Acme) -> None:
    hr = acme.ids["hr"]
    query = {"query": f"{SECRETS['hr']} salary bands", "limit": 10, "mode": "keyword"}
    assert SECRETS["hr"] not in _call(acme, "cy", "POST", "/search", query)[1]
    status, _ = _call(acme, "cy", "POST", f"/files/{hr}/share", {"add": ["user:cy"]})
    assert status == 404  # cy cannot see it, so cannot share it either
    status, text = _call(acme, "eve", "POST", f"/files/{hr}/share", {"add": ["user:cy"]})
    assert status == 403, text  # eve reads it (group hr) but is not its owner
    status, text = _call(acme, "bob", "POST", f"/files/{hr}/share", {"add": ["user:cy"]})
    assert status == 200 and "u:cy" in text
    assert SECRETS["hr"] in _call(acme, "cy", "POST", "/search", query)[1]
    status, _ = _call(acme, "bob", "POST", f"/files/{hr}/share", {"revoke": ["user:cy"]})
    assert status == 200
    assert SECRETS["hr"] not in _call(acme, "cy", "POST", "/search", query)[1]
    history = _call(acme, "bob", "GET", f"/files/{hr}/history")[1]
    assert "shared" in history and "unshared" in history


def test_an_agent_over_mcp_sees_what_its_user_sees(acme: Acme) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def tools(who: str) -> list[str]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {acme.keys[who]}"}, timeout=120)
        async with Client(streamable_http_client(acme.url + "/mcp", http_client=http)) as client:
            found = await client.call_tool("search", {"query": "amount due in June EUR", "limit": 20})
            listed = await client.call_tool("list_files", {"limit": 200})
            hidden = await client.call_tool("read_file", {"file_id": acme.ids["hr"]})
            return [json.dumps(found.structured_content), json.dumps(listed.structured_content), str(hidden.content)]

    texts = asyncio.run(tools("cy-agent"))
    for key in set(SECRETS) - MAY_SEE["cy-agent"]:
        assert all(SECRETS[key] not in t and acme.ids[key] not in t for t in texts), key
    assert "no such file" in texts[2]
    assert acme.ids["cy_mail"] in texts[1]


def test_an_uploaded_file_is_its_uploaders_and_whom_they_share_it_with(acme: Acme) -> None:
    boundary = "semfsboundary"
    form = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="share_with"\r\n\r\ngroup:sales\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="plan.txt"\r\n'
        f"Content-Type: text/plain\r\n\r\nLaunch plan wombatplan for Q3.\r\n--{boundary}--\r\n"
    ).encode()
    req = urllib.request.Request(acme.url + "/files", data=form, method="POST")
    req.add_header("Authorization", f"Bearer {acme.keys['cy']}")
    req.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    with urllib.request.urlopen(req, timeout=120) as r:
        status, text = r.status, r.read().decode()
    assert status in (200, 201, 202), text
    file_id = json.loads(text)["file_id"]
    record = acme.c.repo.get(T, file_id)
    assert record.owner == "cy" and record.readers == ["u:cy", "g:sales"]
    assert _call(acme, "bob", "GET", f"/files/{file_id}")[0] == 404
    assert _call(acme, "cy", "GET", f"/files/{file_id}")[0] == 200


def test_counts_count_only_what_the_caller_may_read(acme: Acme) -> None:
    """A count that included invisible files would say they exist: status, facets and tags count the
    caller's files alone."""

    def total(who: str) -> int:
        return sum(row["count"] for row in json.loads(_call(acme, who, "GET", "/status")[1])["counts"])

    def listed(who: str) -> int:
        return len(json.loads(_call(acme, who, "GET", "/files?limit=200&listing=all")[1])["files"])

    assert total("cy") == listed("cy") == 2  # the kitchen rota and the mail to cy
    assert total("bob") == listed("bob") == 3  # and the HR upload and the list's mail, not cy's
    assert total("ann") == listed("ann") == 6  # an admin: every file of acme
    facets = json.loads(_call(acme, "cy", "GET", "/files/facets?top=500")[1])
    assert facets["total"] == 2


def test_a_saved_view_is_seen_by_its_maker_and_whom_it_is_shared_with(acme: Acme) -> None:
    mine = {"params": {"tag": "finance"}, "share_with": ["private"]}
    theirs = {"params": {"sort": "name"}, "share_with": ["group:hr"]}
    assert _call(acme, "cy", "PUT", "/views/Mine", mine)[0] == 200
    assert _call(acme, "bob", "PUT", "/views/HR%20desk", theirs)[0] == 200

    def names(who: str) -> set[str]:
        return {v["name"] for v in json.loads(_call(acme, who, "GET", "/views")[1])["views"]}

    assert names("cy") == {"Mine"}
    assert names("eve") == {"HR desk"}
    assert names("ann") == {"Mine", "HR desk"}
    assert _call(acme, "eve", "DELETE", "/views/Mine")[0] == 404  # not hers to see
    status, _ = _call(acme, "eve", "PUT", "/views/HR%20desk", mine)
    assert status == 400  # bob's to change


def _anonymous(host: Acme, path: str) -> tuple[int, str, dict[str, str]]:
    """A request with no credential at all, not following redirects."""

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    opener = urllib.request.build_opener(Stay)
    try:
        with opener.open(host.url + path, timeout=120) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


def test_a_share_link_opens_one_file_without_an_account_until_revoked(acme: Acme) -> None:
    from datetime import timedelta

    from semfs.domain.models import utcnow

    hr = acme.ids["hr"]
    assert _call(acme, "eve", "POST", f"/files/{hr}/links", {"days": 3})[0] == 403  # a reader, not its owner
    assert _call(acme, "cy", "POST", f"/files/{hr}/links", {"days": 3})[0] == 404  # cannot even see it
    status, text = _call(acme, "bob", "POST", f"/files/{hr}/links", {"days": 3})
    assert status == 200, text
    made = json.loads(text)
    assert made["url"].endswith(made["path"]) and made["path"].startswith("/s/")
    status, page, headers = _anonymous(acme, made["path"])
    assert status == 200 and SECRETS["hr"] in page and "default-src 'none'" in headers["Content-Security-Policy"]
    assert not any(SECRETS[k] in page for k in SECRETS if k != "hr")  # that file only
    status, _, headers = _anonymous(acme, made["path"] + "/download")
    assert status == 302
    where = urllib.parse.urlsplit(headers["Location"])  # (the store's links name the configured port)
    with urllib.request.urlopen(acme.url + where.path, timeout=120) as r:
        assert SECRETS["hr"].encode() in r.read()
    forged = made["path"][:-4] + ("AAAA" if not made["path"].endswith("AAAA") else "BBBB")
    gone = _anonymous(acme, forged)
    assert gone[0] == 404 and SECRETS["hr"] not in gone[1]
    assert _anonymous(acme, f"/s/sl1.acme.{acme.ids['dana']}.{'x' * 43}")[:2] == gone[:2]  # another file: the same
    listed = json.loads(_call(acme, "bob", "GET", f"/files/{hr}/links")[1])["links"]
    assert [x["link_id"] for x in listed] == [made["link_id"]] and listed[0]["live"]
    assert "token" not in json.dumps(listed) and made["path"].split(".")[-1] not in json.dumps(listed)
    assert _call(acme, "bob", "DELETE", f"/files/{hr}/links/{made['link_id']}")[0] == 200
    assert _anonymous(acme, made["path"])[:2] == gone[:2]
    # an expired link: the same page as none
    status, text = _call(acme, "bob", "POST", f"/files/{hr}/links", {"days": 1})
    path = json.loads(text)["path"]
    record = acme.c.repo.get(T, hr)
    past = [x.model_copy(update={"expires_at": utcnow() - timedelta(seconds=1)}) for x in record.links]
    acme.c.repo.save(record.model_copy(update={"links": past}))
    assert _anonymous(acme, path)[:2] == gone[:2]
    assert "a link" in _call(acme, "bob", "GET", f"/files/{hr}/history")[1]


# How many requests the battery sends (SEMFS_LEAK_REQUESTS: 10,400 is the figure the issue asks for; CI
# sends fewer, drawn the same way, so that a busy machine finishes it in a minute or two)
LEAK_REQUESTS = int(os.environ.get("SEMFS_LEAK_REQUESTS", "1500"))
MCP_TOOLS = ("search", "ask", "context", "entity", "list_files", "read_file", "versions", "similar", "history")


def _battery_request(rng: random.Random, acme: Acme, ids: list[str]) -> tuple[str, str, str, Any]:
    """One request a user might send: a route or an MCP tool, with a file id (any tenant's, or none), a
    secret word of any file, a filter or a mode drawn at random."""
    who = rng.choice(sorted(MAY_SEE))
    fid = rng.choice(ids)
    word = rng.choice([*SECRETS.values(), "amount due", "4,200 EUR", "salary", "June"])
    one_file = {"file_id": fid} if rng.random() < 0.3 else {}
    listing = rng.choice(["documents", "problems", "all"])
    history = rng.choice(["true", "false"])
    routes: list[tuple[str, str, Any]] = [
        *(("GET", f"/files/{fid}{tail}", None) for tail in ("", "/text", "/download", "/versions", "/history")),
        *(("GET", f"/files/{fid}{tail}", None) for tail in ("/entities", "/similar", "/share", "/links")),
        ("GET", "/files?" + urllib.parse.urlencode({"limit": 200, "tag": word}), None),
        ("GET", f"/files?limit=200&listing={listing}", None),
        ("GET", f"/files/facets?top=500&include_history={history}", None),
        ("GET", "/entities?" + urllib.parse.urlencode({"q": word[:6], "limit": 500}), None),
        ("GET", "/entity?" + urllib.parse.urlencode({"name": word}), None),
        ("GET", rng.choice(["/tags", "/tags/suggestions", "/status", "/jobs", "/trash", "/views", "/people"]), None),
        ("POST", "/search", {"query": word, "limit": 50, "mode": rng.choice(["hybrid", "keyword", "semantic"])}),
        ("POST", "/ask", {"question": f"what is said about {word}?", **one_file}),
        ("POST", "/context", {"subject": f"About {word}", "body": "Which amount is due?", "limit": 20}),
    ]
    if rng.random() < 0.25:
        tool = rng.choice(MCP_TOOLS)
        field = {"search": "query", "ask": "question", "context": "subject", "entity": "name"}.get(tool, "")
        args: dict[str, Any] = {field: f"what about {word}?" if tool == "ask" else word} if field else {}
        if tool in ("read_file", "versions", "similar", "history"):
            args = {"file_id": fid}
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": args}}
        return who, "MCP", "/mcp", rpc
    method, path, body = rng.choice(routes)
    return who, method, path, body


def _mcp_call(host: Acme, who: str, body: dict[str, Any]) -> tuple[int, str]:
    req = urllib.request.Request(host.url + "/mcp", data=json.dumps(body).encode(), method="POST")
    for k, v in (("Authorization", f"Bearer {host.keys[who]}"), ("Content-Type", "application/json"),
                 ("Accept", "application/json, text/event-stream")):  # fmt: skip
        req.add_header(k, v)
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.status, r.read().decode()


def test_a_battery_of_requests_by_users_who_must_not_see_a_file_never_shows_it(acme: Acme) -> None:
    """Requests drawn at random over every route and MCP tool, by every user and the agent, with any file's
    id (another tenant's and made-up ones included) and any file's secret word: no answer names or quotes a
    file its caller may not read, and no request fails (5xx). Figures: docs/benchmarks.md."""
    rng = random.Random(50)
    ids = [*acme.ids.values(), "f_000000000000000000000000"]
    leaks: list[tuple[str, str, set[str]]] = []
    statuses: Counter[int] = Counter()
    with ThreadPoolExecutor(4) as pool:
        drawn = [_battery_request(rng, acme, ids) for _ in range(LEAK_REQUESTS)]

        def send(req: tuple[str, str, str, Any]) -> tuple[str, str, int, str]:
            who, method, path, body = req
            status, text = _mcp_call(acme, who, body) if method == "MCP" else _call(acme, who, method, path, body)
            return who, path, status, text

        for who, path, status, text in pool.map(send, drawn):
            statuses[status] += 1
            hidden = set(SECRETS) - MAY_SEE[who]
            found = {k for k in hidden if SECRETS[k] in text or acme.ids[k] in text}
            if found:
                leaks.append((who, path, found))
    assert leaks == []
    assert sum(statuses.values()) == LEAK_REQUESTS and not any(s >= 500 for s in statuses), statuses
    assert statuses[200] > LEAK_REQUESTS // 3  # most requests were answered, not refused


def test_what_a_caller_sees_is_the_same_with_and_without_files_they_may_not_read(acme: Acme) -> None:
    """Last round's tenant side channel, per user: cy's facets, entities, tags, counts and search answers
    (files, relevance, order) are the same before and after bob adds files cy may not read that share her
    files' words, amounts and tags."""

    def figures() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, path in (
            ("facets", "/files/facets?top=500"),
            ("entities", "/entities?limit=500"),
            ("entity", "/entity?name=4%2C200%20EUR"),
            ("tags", "/tags"),
            ("status", "/status"),
        ):
            out[name] = json.loads(_call(acme, "cy", "GET", path)[1])
        for mode in ("hybrid", "semantic", "keyword"):
            found = json.loads(_call(acme, "cy", "POST", "/search", {"query": "amount due in June", "mode": mode})[1])
            out[f"search {mode}"] = [(r["file_id"], r["relevance"], r["score"]) for r in found["results"]]
        return out

    before = figures()
    for n in range(6):
        text = f"Details of marmotinvoice copy {n}: the amount is 4,200 EUR, due on 30 June. Kitchen rota."
        prov = replace(Provenance.from_caller(tags=["finance"]), access=Access("bob", ("u:bob",)))
        ingest_bytes(acme.c, T, text.encode(), f"bobs-{n}.txt", prov)
    after = figures()
    assert after == before


def test_a_readers_keyword_scores_and_order_come_from_the_files_they_can_see(container: Container) -> None:
    """BM25 weighs a word by its rarity. Ranked by the tenant's statistics, cy's two files swap places (and
    their scores move) when bob adds files cy cannot read that use one of the query's words often: rarity
    counted over cy's own files keeps both the same."""
    c = container
    add_user(c, T, "ann", role="admin")
    add_user(c, T, "bob")
    add_user(c, T, "cy")
    filler = "the quarterly report lists rooms and desks for the office move"

    def upload(name: str, text: str, owner: str) -> str:
        prov = replace(Provenance.from_caller(), access=Access(owner, (f"u:{owner}",)))
        return ingest_bytes(c, T, text.encode(), name, prov).record.file_id

    for n in range(4):
        upload(f"notes-{n}.txt", f"{filler} number {n}", "cy")
    walrus = upload("walrus.txt", f"walrus walrus walrus walrus {filler}", "cy")
    heron = upload("heron.txt", f"heron heron heron {filler}", "cy")
    cy = principal_for(c, T, "cy").tokens()
    request = SearchRequest(query="walrus heron", mode="keyword", filters=SearchFilters().read_as(cy))

    def seen() -> list[tuple[str, float, float]]:
        return [(r.file_id, r.score, r.relevance) for r in search(c, T, request).results]

    before = seen()
    assert [f for f, _, _ in before] == [walrus, heron]  # four walruses outweigh three herons
    for n in range(12):
        upload(f"zoo-{n}.txt", f"walrus census {n}: one walrus counted", "bob")
    everyone = [r.file_id for r in search(c, T, request.model_copy(update={"filters": SearchFilters()})).results]
    assert everyone.index(heron) < everyone.index(walrus)  # by the tenant's statistics a walrus is now common
    assert seen() == before


def test_a_signed_in_user_is_known_by_their_email(acme: Acme) -> None:
    """Where Cognito signs in by email, ``cognito:username`` is an opaque id: a listed user whose address is
    the token's email is that user (their listed groups and the token's together); another is known by it."""
    from semfs.pipeline.principals import principal_from_claims

    bob = principal_from_claims(acme.c, T, "7d9f0a1c-5b", ["Sales"], "Bob@acme.test")
    assert (bob.user, set(bob.groups), bob.is_admin) == ("bob", {"hr", "sales"}, False)
    stranger = principal_from_claims(acme.c, T, "8e0a-77", [], "zoe@elsewhere.test")
    assert stranger.user == "zoe@elsewhere.test" and stranger.tokens() == ("tenant", "u:zoe@elsewhere.test")
    assert principal_from_claims(acme.c, T, "x", ["admin"], "zoe@elsewhere.test").is_admin


def test_the_last_admin_stays_and_people_are_named_as_the_document_says(acme: Acme) -> None:
    """Removing the tenant's last admin is refused as a conflict with the tenant's state (409, as the document
    lists it; it was a 400, which says the request itself is malformed), and the admin stays. A group named "" or
    an address without an "@" is refused by the document's own schema (422) before any rule runs: the fuzzer
    found requests the document called valid that the server refused."""
    status, body = _call(acme, "ann", "DELETE", "/people/users/ann")
    assert status == 409 and "last admin" in body
    assert [u.name for u in acme.c.principals.users(T) if u.role == "admin"] == ["ann"]
    for wrong in ({"groups": [""]}, {"addresses": ["ann.acme.test"]}, {"addresses": ["ann @acme.test"]}):
        status, body = _call(acme, "ann", "PUT", "/people/users/frank", wrong)
        assert status == 422, (wrong, body)
    status, body = _call(acme, "ann", "PUT", "/views/mine", {"share_with": ["everyone"]})
    assert status == 422 and "share_with" in body
    status, _ = _call(acme, "ann", "PUT", "/people/users/frank", {"addresses": ["Frank.O'Neil+hr@acme.test"]})
    assert status == 200
