"""The demo corpus: Northwind Cycles, a small fictional bicycle maker, in every supported format.

Generated, never downloaded: Markdown, text, code, JSON, YAML, XML, CSV, TSV, HTML, PDF, DOCX,
XLSX and PPTX files; three versions of one supply agreement; files tied to the "Q3 Financials"
thread and to contacts at Acme Corp. Output bytes are deterministic (fixed document dates, fixed
zip timestamps), so running the demo twice ingests nothing new.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.register import Provenance
from semfs.ports import Container

FIXED = datetime(2026, 9, 1, 9, 0, 0)
THREAD_Q3 = "Q3 Financials"
ACME = ["Acme Corp", "Jane Okafor <jane.okafor@acme-corp.example>"]


def _stable_zip(data: bytes) -> bytes:
    """Rewrite an OOXML package with fixed entry timestamps (libraries stamp 'now')."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2026, 9, 1, 9, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":  # openpyxl stamps 'modified' with the save time
                body = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>2026-09-01T09:00:00Z", body)
            dst.writestr(fixed, body)
    return buf.getvalue()


def _core(props: Any, title: str) -> None:
    props.title = title
    props.author = "Northwind Cycles"
    props.created = FIXED
    props.modified = FIXED
    if hasattr(props, "last_printed"):
        props.last_printed = FIXED


CONTRACT_CLAUSES = {
    1: [
        (
            "Parties",
            "This Supply Agreement is made between Northwind Cycles Ltd (the Buyer) and Acme Corp (the "
            "Supplier) for the supply of aluminium bicycle frames and carbon forks.",
        ),
        (
            "Payment terms",
            "The Buyer shall pay each invoice within 30 days of receipt. Late payments accrue "
            "interest at 1.5% per month.",
        ),
        (
            "Pricing",
            "Frames are priced at EUR 84 per unit and forks at EUR 41 per unit for orders above 500 units.",
        ),
        ("Delivery", "The Supplier delivers to the Rotterdam warehouse within 21 days of a purchase order."),
        ("Termination", "Either party may terminate this agreement with 90 days written notice."),
    ],
}
CONTRACT_CLAUSES[2] = [
    CONTRACT_CLAUSES[1][0],
    (
        "Payment terms",
        "The Buyer shall pay each invoice within 45 days of receipt. Late payments accrue interest at 1.5% per month.",
    ),
    (
        "Pricing",
        "Frames are priced at EUR 88 per unit and forks at EUR 41 per unit for orders above 500 units.",
    ),
    CONTRACT_CLAUSES[1][3],
    CONTRACT_CLAUSES[1][4],
]
CONTRACT_CLAUSES[3] = [
    *CONTRACT_CLAUSES[2][:4],
    (
        "Quality",
        "Every frame batch ships with a fatigue test certificate to ISO 4210. Batches failing inspection "
        "are replaced at the Supplier's cost within 14 days.",
    ),
    CONTRACT_CLAUSES[2][4],
]


def _contract(version: int) -> bytes:
    import docx

    d = docx.Document()
    _core(d.core_properties, "Supply Agreement — Acme Corp")
    d.sections[0].header.paragraphs[0].text = f"Northwind Cycles · Confidential · Draft {version}"
    d.sections[0].footer.paragraphs[0].text = "Supply Agreement between Northwind Cycles Ltd and Acme Corp"
    d.add_heading("Supply Agreement", level=1)
    for heading, text in CONTRACT_CLAUSES[version]:
        d.add_heading(heading, level=2)
        d.add_paragraph(text)
    table = d.add_table(rows=3, cols=2)
    for row, (k, v) in zip(
        table.rows,
        [("Item", "Unit price"), ("Frame", "EUR 84" if version == 1 else "EUR 88"), ("Fork", "EUR 41")],
        strict=True,
    ):
        row.cells[0].text, row.cells[1].text = k, v
    buf = io.BytesIO()
    d.save(buf)
    return _stable_zip(buf.getvalue())


def _q3_workbook() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    _core(wb.properties, "Q3 2026 financial report")
    ws = wb.active
    ws.title = "Revenue"
    ws.append(["Month", "Region", "Product line", "Revenue EUR", "Units"])
    rows = [
        ("July", "Benelux", "City bikes", 412000, 610),
        ("July", "Germany", "E-bikes", 988000, 402),
        ("August", "Benelux", "City bikes", 398500, 590),
        ("August", "Germany", "E-bikes", 1043000, 431),
        ("September", "Benelux", "Cargo bikes", 276000, 118),
        ("September", "Germany", "E-bikes", 1120000, 455),
    ]
    for r in rows:
        ws.append(list(r))
    costs = wb.create_sheet("Costs")
    costs.append(["Category", "Q3 EUR", "Note"])
    for cost in [
        ("Frames (Acme Corp)", 1210000, "price rise from August"),
        ("Logistics", 188000, "Rotterdam hub"),
        ("Marketing", 240000, "Vela e-bike launch campaign"),
    ]:
        costs.append(list(cost))
    scratch = wb.create_sheet("Scratch")
    scratch.append(["internal scratch values that are hidden and must not be indexed"])
    scratch.sheet_state = "hidden"
    buf = io.BytesIO()
    wb.save(buf)
    return _stable_zip(buf.getvalue())


def _board_deck() -> bytes:
    from pptx import Presentation

    prs = Presentation()
    _core(prs.core_properties, "Q3 board update")
    slides = [
        (
            "Q3 board update",
            "Revenue up 14% on Q2, driven by e-bikes in Germany.",
            "Open with the headline number; mention the Vela launch.",
        ),
        (
            "Margin pressure",
            "Acme Corp raised frame prices from EUR 84 to EUR 88.\nPayment terms extended to 45 days.",
            "Explain that longer payment terms offset part of the price increase.",
        ),
        (
            "Outlook",
            "Cargo bikes sold out in Benelux. Q4 plan: second Rotterdam shift.",
            "Ask the board to approve hiring for the second shift.",
        ),
    ]
    for title, body, notes in slides:
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        slide.notes_slide.notes_text_frame.text = notes
    buf = io.BytesIO()
    prs.save(buf)
    return _stable_zip(buf.getvalue())


def _security_pdf() -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4, invariant=1)  # the same bytes every run (the demo is idempotent)
    # invariant mode dates every PDF 2000-01-01, which the file list would show: the policy's own date instead
    c._doc._timeStamp.YMDhms = (2026, 8, 14, 9, 0, 0)  # type: ignore[attr-defined]
    c.setTitle("Information security policy")
    pages = [
        [
            "Information security policy",
            "",
            "1. Passwords and accounts",
            "Passwords must be at least 14 characters long and unique to each system.",
            "Multi-factor authentication is mandatory for email, the ERP and the warehouse system.",
            "Shared accounts are not allowed; every login belongs to one named person.",
        ],
        [
            "2. Incident response",
            "Report a suspected breach or a lost laptop to security@northwind.example within one hour.",
            "The on-call engineer isolates affected machines and rotates exposed credentials.",
            "Customers are informed within 72 hours when their personal data is affected.",
        ],
    ]
    for lines in pages:
        y = 800
        for line in lines:
            c.setFont(
                "Helvetica-Bold" if (line and line[0].isdigit()) or line.startswith("Information") else "Helvetica",
                11,
            )
            c.drawString(60, y, line)
            y -= 18
        c.showPage()
    c.save()
    return buf.getvalue()


TEXT_FILES: dict[str, str] = {
    "handbook/employee-handbook.md": """# Northwind Cycles employee handbook

## Working from home
Staff may work remotely up to three days a week after their probation period. Agree the days with your team lead.

## Annual leave
Everyone gets 28 days of paid holiday a year, plus public holidays.
Book leave at least two weeks ahead in the HR portal.

## Expenses
Submit travel and meal receipts within 30 days. Train travel is preferred over flights for trips under 600 km.
""",
    "notes/meeting-notes-2026-09-14.txt": """Supplier call with Acme Corp, 14 September 2026

Attendees: Priya Nair (purchasing), Jane Okafor (Acme Corp account manager).

Acme confirmed that frame deliveries slipped by one week because of a shortage of aluminium tubing.
They expect to be back on the 21-day schedule by October. We asked for a written quality certificate
with each batch after two frames failed inspection in August.

Action: Priya to send the revised supply agreement with a quality clause.
Action: Jane to credit invoice INV-2024-0042 for the two rejected frames.
""",
    "engineering/inventory_sync.py": '''"""Synchronise warehouse stock levels with the web shop every 15 minutes."""

import time

WAREHOUSE_API = "https://warehouse.northwind.example/api/stock"


def sync_once(client, shop):
    """Fetch stock per SKU from the warehouse and push levels below the reorder point to purchasing."""
    for item in client.get(WAREHOUSE_API).json()["items"]:
        shop.set_stock(item["sku"], item["on_hand"])
        if item["on_hand"] < item["reorder_point"]:
            shop.notify_purchasing(item["sku"])


def main(client, shop):
    while True:
        sync_once(client, shop)
        time.sleep(900)
''',
    "engineering/config.yaml": """service: inventory-sync
schedule_minutes: 15
warehouse:
  region: eu-west-1
  hub: Rotterdam
alerts:
  reorder_email: purchasing@northwind.example
""",
    "engineering/api-schema.json": json.dumps(
        {
            "title": "Order API",
            "description": "Create and track bicycle orders from dealers.",
            "endpoints": [
                {"path": "/orders", "method": "POST", "summary": "Place a dealer order"},
                {"path": "/orders/{id}", "method": "GET", "summary": "Track delivery status of an order"},
            ],
        },
        indent=2,
    ),
    "data/warehouse-stock.csv": """sku,model,warehouse,on_hand,reorder_point
NW-CITY-48,City 48 commuter bike,Rotterdam,132,40
NW-VELA-E,Vela e-bike,Rotterdam,18,25
NW-CARGO-2,Cargo Two family cargo bike,Rotterdam,0,10
NW-FORK-C,Carbon fork (spare part),Utrecht,240,60
""",
    "data/shipping-rates.tsv": "destination\tcarrier\tdays\tprice_eur\nGermany\tDHL Freight\t2\t38\n"
    "France\tGeodis\t3\t45\nDenmark\tPostNord\t4\t52\n",
    "data/parts-catalog.xml": """<?xml version="1.0" encoding="UTF-8"?>
<catalog supplier="Acme Corp">
  <part sku="AC-FR-ALU-56"><name>Aluminium frame 56 cm</name><material>6061 aluminium</material></part>
  <part sku="AC-FK-CARB"><name>Carbon fork</name><material>carbon fibre</material></part>
  <part sku="AC-HB-FLAT"><name>Flat handlebar</name><material>aluminium</material></part>
</catalog>
""",
    "web/vela-launch.html": """<!doctype html><html><head><title>Introducing the Vela e-bike</title>
<style>body{font-family:sans-serif}</style><script>trackPageView("launch")</script></head>
<body><h1>Introducing the Vela e-bike</h1>
<p>The Vela is our lightest electric bike yet: 17 kg, a 90 km range and a belt drive that never needs oiling.</p>
<p>Available from October at dealers in the Netherlands, Belgium and Germany for EUR 2,899.</p>
<ul><li>Battery charges to 80% in two hours</li><li>Integrated lights and lock</li></ul>
</body></html>
""",
}

BINARY_FILES: dict[str, Callable[[], bytes]] = {
    "contracts/v1/supply-agreement.docx": lambda: _contract(1),
    "contracts/v2/supply-agreement.docx": lambda: _contract(2),
    "contracts/v3/supply-agreement.docx": lambda: _contract(3),
    "finance/q3-financial-report.xlsx": _q3_workbook,
    "finance/q3-board-update.pptx": _board_deck,
    "policies/security-policy.pdf": _security_pdf,
}

PROVENANCE: dict[str, Provenance] = {
    # the drafts live in v1/, v2/, v3/ folders but are one document, as one shared-drive path would say
    "contracts/": Provenance(
        contacts=ACME,
        upload_context="contract negotiation with Acme Corp",
        version_key="demo:contracts/supply-agreement.docx",
    ),
    "finance/": Provenance(thread_subject=THREAD_Q3, contacts=ACME[:1], upload_context="Q3 close"),
    "notes/": Provenance(contacts=ACME[1:], upload_context="supplier call notes"),
    # the rules people look up: one manual tag, as `semfs ingest policies/ --tag policy` would give them
    "policies/": Provenance(tags=["policy"], upload_context="company policies"),
    "handbook/": Provenance(tags=["policy"], upload_context="company policies"),
}


def write_demo_corpus(folder: Path) -> list[Path]:
    written: list[Path] = []
    items: list[tuple[str, bytes]] = [(k, v.encode("utf-8")) for k, v in TEXT_FILES.items()]
    items += [(k, fn()) for k, fn in BINARY_FILES.items()]
    for rel, data in items:
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def provenance_for(rel: str) -> Provenance:
    return next((p for prefix, p in PROVENANCE.items() if rel.startswith(prefix)), Provenance())


PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


def ingest_demo(c: Container, tenant: str, folder: Path, progress: Console | None = None) -> Counter[str]:
    """Ingest the corpus in a stable order, so the contract versions arrive v1 → v2 → v3."""
    counts: Counter[str] = Counter()
    paths = sorted(p for p in folder.rglob("*") if p.is_file())
    with c.index.batch():
        _ingest_paths(c, tenant, folder, paths, counts, progress)
    # a saved view, as someone would keep one on the web page (`semfs ls --view "Board decks"`)
    from semfs.pipeline.catalogue.views import save_view

    save_view(c, tenant, "Board decks", {"type": PPTX, "sort": "newest"}, by="demo")
    return counts


def _ingest_paths(
    c: Container, tenant: str, folder: Path, paths: list[Path], counts: Counter[str], progress: Console | None
) -> None:
    for path in paths:
        rel = path.relative_to(folder).as_posix()
        if progress is not None:
            progress.print(f"  ingesting {rel}")
        reg = ingest_bytes(c, tenant, path.read_bytes(), path.name, provenance_for(rel))
        record = reg.record
        counts[(record.outcome.value if record.outcome else record.status.value) if reg.created else "UNCHANGED"] += 1
